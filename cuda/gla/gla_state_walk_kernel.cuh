#pragma once
// gla backward, passes 1 and 2 (gla_backward_common.cuh): one kernel walks the chunks carrying a
// K x V state in fp32 mma accumulators and writes it (bf16) as it stands at every chunk:
//   Walk::States      forwards from h0:  S_n (entering chunk n), then
//                     S <- diag(2^{b_last}) S + (k_t 2^{b_last - b_t})^T v
//   Walk::StateGrads  backwards from dhT: dS_n (at chunk n's end), then
//                     dS <- diag(2^{b_last}) dS + (s q_t 2^{b_t})^T do;  after chunk 0, dh0 = dS
// (b the in-chunk cumulative log2-gate). Rows of the state do not interact (row c needs only
// column c of the decayed operand and of the gates), so a CTA owns 64 rows and all V columns:
// at (8,4096,16,128,128) that is 256 walks, two CTAs an SM, one wave on an H100. The next
// kWalkStages - 1 chunks are loaded (cp.async) while one is worked on. At V = 128 the state goes
// out through shared memory, a bulk copy (TMA) per row: per-thread 4-byte stores of the mma
// fragments had the load-store unit backed up (Nsight Compute: their data registers held on the
// long scoreboard for a quarter of the kernel's warp samples); see kWalkStagedStores.
#include "common/sm90_ptx.cuh"
#include "gla/gla_backward_common.cuh"

namespace overlap::cuda::gla_backward_kernel {

enum class Walk { States, StateGrads };

template <Walk W, int V>
__device__ void load_walk_chunk(const Params& p, long long x0, long long y0, unsigned char* stage, int K, int n, int T) {
  using L = WalkLayout<V>;
  const int t0 = n * kChunk, valid = min(kChunk, T - t0);
  const long long x_stride = (long long)p.H * K, y_stride = (long long)p.H * V;
  const bf16* x = (W == Walk::States ? p.k : p.q) + x0 + t0 * x_stride;
  const bf16* y = (W == Walk::States ? p.v : p.do_) + y0 + t0 * y_stride;
  constexpr int kT = kWalkThreads;
  load_rows<kT, kChunk, kWalkRows>(reinterpret_cast<bf16*>(stage + L::kX), L::kXLd, x, x_stride, valid, threadIdx.x);
  load_rows<kT, kChunk, V>(reinterpret_cast<bf16*>(stage + L::kY), L::kYLd, y, y_stride, valid, threadIdx.x);
  load_rows<kT, kChunk, kWalkRows>(reinterpret_cast<float*>(stage + L::kB), L::kBLd, p.g + x0 + t0 * x_stride,
                                    x_stride, valid, threadIdx.x);
}

// One chunk's operand decayed in place, from its gates g (log_e, per step and channel):
// b = log2(e) * the in-chunk cumulative sum of g, then x_t <- x_t 2^{b_last - b_t} (States:
// k decayed to the chunk's end) or s x_t 2^{b_t} (StateGrads: q decayed to its entry); b_last
// per channel to `last`. Thread (c, part) scans rows part*32.. of column c and keeps them in
// registers (no cumulative sums go back to shared memory); the parts' totals meet in `totals`.
template <Walk W, int V>
__device__ __forceinline__ void decay_operand(bf16* x, const float* g, float* last, float* totals, float scale) {
  using L = WalkLayout<V>;
  constexpr int kParts = kWalkThreads / kWalkRows, kRows = kChunk / kParts;
  static_assert(kParts == 2, "a column's two halves meet in one exchange");
  const int c = threadIdx.x % kWalkRows, part = threadIdx.x / kWalkRows;
  const float* gc = g + part * kRows * L::kBLd + c;
  float b[kRows];
  float run = 0.f;
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    run += gc[r * L::kBLd] * gla_gates::kLog2e;
    b[r] = run;
  }
  totals[part * kWalkRows + c] = run;
  __syncthreads();
  const float first_total = totals[c];
  const float b_last = first_total + totals[kWalkRows + c];
  if (part == 1) {
#pragma unroll
    for (int r = 0; r < kRows; ++r) b[r] += first_total;
  } else {
    last[c] = b_last;
  }
  bf16* xc = x + part * kRows * L::kXLd + c;
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const float f = W == Walk::States ? ptx::exp2_approx(b_last - b[r]) : scale * ptx::exp2_approx(b[r]);
    xc[r * L::kXLd] = __float2bfloat16_rn(__bfloat162float(xc[r * L::kXLd]) * f);
  }
}

// grid (K/64, H, B), or (.., H, sequences) of a variable-length batch, longest first.
template <int K, int V, Walk W>
__global__ void __launch_bounds__(kWalkThreads) gla_state_walk_kernel(const Params p) {
  using L = WalkLayout<V>;
  constexpr int kStages = kWalkStages<V>;
  constexpr bool kStaged = kWalkStagedStores<V>;
  extern __shared__ __align__(128) unsigned char smem[];
  constexpr int kNTiles = V / 8;
  const int k0 = blockIdx.x * kWalkRows;
  const int h = blockIdx.y, b = p.varlen.cu_seqlens ? p.varlen.order[blockIdx.z] : blockIdx.z;
  const Slice sl = slice_of<K>(p, b, h);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3;
  const int NT = sl.num_chunks;
  const long long x0 = sl.qk_row0 + k0, y0 = sl.v_row0;
  // This thread's accumulator elements: rows r(e) = 16 warp + gq + 8 (e >> 1) of the block,
  // columns 8 nt + 2 tq + (e & 1); as offsets into a [K, V] state.
  const auto at = [&](int nt, int e) {
    return (long long)(k0 + warp * 16 + gq + (e >> 1) * 8) * V + nt * 8 + 2 * tq + (e & 1);
  };

  float s[kNTiles][4];
  const float* init = W == Walk::States ? p.h0 : p.dhT;
#pragma unroll
  for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) s[nt][e] = init ? init[sl.state0 + at(nt, e)] : 0.f;

  const auto chunk_of = [&](int it) { return W == Walk::States ? it : NT - 1 - it; };
#pragma unroll
  for (int st = 0; st < kStages; ++st) {
    if (st < NT) load_walk_chunk<W, V>(p, x0, y0, smem + st * L::kStageBytes, K, chunk_of(st), sl.T);
    ptx::cp_async_commit();
  }
  bf16* out = W == Walk::States ? p.states : p.dstates;
  bf16* staged = reinterpret_cast<bf16*>(smem + L::kOut);
  float* totals = reinterpret_cast<float*>(smem + L::kTotals);
  float* last = reinterpret_cast<float*>(smem + L::kLast);
  // Regions `walk.*` (tools/sass_mix.py): the per-chunk work the model charges.
  for (int it = 0; it < NT; ++it) {  // sass:walk.chunk {
    const int n = chunk_of(it);
    unsigned char* stage = smem + (it % kStages) * L::kStageBytes;
    bf16* x = reinterpret_cast<bf16*>(stage + L::kX);
    const bf16* y = reinterpret_cast<const bf16*>(stage + L::kY);
    const float* bl = reinterpret_cast<const float*>(stage + L::kB);
    ptx::cp_async_wait<kStages - 1>();
    __syncthreads();

    // The state as it stands at this chunk, in bf16 (the operand pass 3 reads). Staged, each warp
    // writes and sends its own 16 rows: its lane 0 issues their copies (one thread, not a copy a
    // lane: a bulk copy takes warp-uniform operands, so 32 lanes' copies run as a loop).
    bf16* state_out = out + sl.states0 + (long long)n * K * V;
    if (kStaged) {  // sass:walk.state_out {
      if (lane == 0) sm90::bulk_wait_read_all();  // the warp's rows of the last chunk are out of staging
      __syncwarp();
    }
#pragma unroll
    for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
      for (int e = 0; e < 4; e += 2) {
        const std::uint32_t pair = ptx::pack_bf16(s[nt][e], s[nt][e + 1]);
        if constexpr (kStaged)
          *reinterpret_cast<std::uint32_t*>(staged + (warp * 16 + gq + (e >> 1) * 8) * L::kOutLd + nt * 8 + 2 * tq) =
              pair;
        else
          *reinterpret_cast<std::uint32_t*>(state_out + at(nt, e)) = pair;
      }
    if (kStaged) {
      sm90::fence_proxy_async();  // the staged rows are read by the TMA unit next
      __syncwarp();
      if (lane == 0) {
        for (int r = warp * 16; r < warp * 16 + 16; ++r)
          sm90::bulk_store(state_out + (long long)(k0 + r) * V, staged + r * L::kOutLd, V * 2);
        sm90::bulk_commit();
      }
    }  // } sass:walk.state_out

    decay_operand<W, V>(x, bl, last, totals, p.scale);  // sass:walk.decay {}
    __syncthreads();

    const float d0 = ptx::exp2_approx(last[warp * 16 + gq]);  // sass:walk.update {
    const float d1 = ptx::exp2_approx(last[warp * 16 + gq + 8]);
#pragma unroll
    for (int nt = 0; nt < kNTiles; ++nt) {
      s[nt][0] *= d0;
      s[nt][1] *= d0;
      s[nt][2] *= d1;
      s[nt][3] *= d1;
    }
#pragma unroll
    for (int tc = 0; tc < kChunk; tc += 16) {
      std::uint32_t a[4];
      a_cols(a, x, L::kXLd, warp * 16, tc);
      mma_b_rows(s, a, y, L::kYLd, 0, tc);
    }  // } sass:walk.update
    __syncthreads();  // every warp is done with this stage
    if (it + kStages < NT) load_walk_chunk<W, V>(p, x0, y0, stage, K, chunk_of(it + kStages), sl.T);  // sass:walk.load {}
    ptx::cp_async_commit();
  }  // } sass:walk.chunk

  if (kStaged && lane == 0) sm90::bulk_wait_read_all();  // staging is read before the CTA exits
  if (W == Walk::StateGrads && p.dh0) {
#pragma unroll
    for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
      for (int e = 0; e < 4; e += 2)
        *reinterpret_cast<float2*>(p.dh0 + sl.state0 + at(nt, e)) = make_float2(s[nt][e], s[nt][e + 1]);
  }
}

}  // namespace overlap::cuda::gla_backward_kernel
