#pragma once
// gla backward, pass 3 (gla_chunk_grad_kernel.cuh): what both of its paths use: the shared-memory
// layout, the loads, dA, the inter-chunk GEMM, the stores, A^T do for dv, and the gate sums.
#include "gla/gla_backward_common.cuh"

namespace overlap::cuda::gla_backward_kernel {

// Where chunk n's inputs start in global memory, and how many of its rows are in the sequence.
struct ChunkSources {
  const float* g;
  const bf16 *q, *k, *do_, *v, *states, *dstates;
  long long qk_stride, v_stride;
  int valid;
};
template <int K, int V>
__device__ ChunkSources chunk_sources(const Params& p, const Slice& sl, int n) {
  const int t0 = n * kChunk;
  ChunkSources c;
  c.qk_stride = (long long)p.H * K;
  c.v_stride = (long long)p.H * V;
  c.valid = min(kChunk, sl.T - t0);
  const long long qk0 = sl.qk_row0 + t0 * c.qk_stride, v0 = sl.v_row0 + t0 * c.v_stride;
  const long long state = sl.states0 + (long long)n * K * V;
  c.g = p.g + qk0;
  c.q = p.q + qk0;
  c.k = p.k + qk0;
  c.do_ = p.do_ + v0;
  c.v = p.v + v0;
  c.states = p.states + state;
  c.dstates = p.dstates + state;
  return c;
}

// One of the chunk's inputs into its place in shared memory (cp.async by Threads threads, tid
// this one's index among them; rows past the sequence arrive as zeros).
enum class ChunkInput { G, Q, K, Do, V, Sn, DS };
template <int K, int V, int Threads, ChunkInput In>
__device__ __forceinline__ void load_chunk_input(const ChunkSources& c, unsigned char* smem, int tid) {
  using L = ChunkGradLayout<K, V>;
  if constexpr (In == ChunkInput::G)
    load_rows<Threads, kChunk, K>(reinterpret_cast<float*>(smem + L::kB), L::kBLd, c.g, c.qk_stride, c.valid, tid);
  else if constexpr (In == ChunkInput::Q)
    load_rows<Threads, kChunk, K>(reinterpret_cast<bf16*>(smem + L::kQ), L::kQkLd, c.q, c.qk_stride, c.valid, tid);
  else if constexpr (In == ChunkInput::K)
    load_rows<Threads, kChunk, K>(reinterpret_cast<bf16*>(smem + L::kK), L::kQkLd, c.k, c.qk_stride, c.valid, tid);
  else if constexpr (In == ChunkInput::Do)
    load_rows<Threads, kChunk, V>(reinterpret_cast<bf16*>(smem + L::kDo), L::kVLd, c.do_, c.v_stride, c.valid, tid);
  else if constexpr (In == ChunkInput::V)
    load_rows<Threads, kChunk, V>(reinterpret_cast<bf16*>(smem + L::kV), L::kVLd, c.v, c.v_stride, c.valid, tid);
  else if constexpr (In == ChunkInput::Sn)
    load_rows<Threads, K, V>(reinterpret_cast<bf16*>(smem + L::kSn), L::kVLd, c.states, V, K, tid);
  else
    load_rows<Threads, K, V>(reinterpret_cast<bf16*>(smem + L::kDS), L::kVLd, c.dstates, V, K, tid);
}

// The pipelined kernel's loads: the chunk's inputs in four cp.async groups, in the order the
// phases first read them, so that each phase waits only for what it reads (one CTA an SM at
// K = V = 128: nothing else hides the loads): g (the gate sums), q and k (the decay; A), do and
// v (dA), then S_n and dS_n (R_n on).
template <int K, int V>
__device__ void load_chunk_grad_inputs(const ChunkSources& c, unsigned char* smem) {
  constexpr int kT = kChunkGradThreads;
  const int tid = threadIdx.x;
  load_chunk_input<K, V, kT, ChunkInput::G>(c, smem, tid);
  ptx::cp_async_commit();
  load_chunk_input<K, V, kT, ChunkInput::Q>(c, smem, tid);
  load_chunk_input<K, V, kT, ChunkInput::K>(c, smem, tid);
  ptx::cp_async_commit();
  load_chunk_input<K, V, kT, ChunkInput::Do>(c, smem, tid);
  load_chunk_input<K, V, kT, ChunkInput::V>(c, smem, tid);
  ptx::cp_async_commit();
  load_chunk_input<K, V, kT, ChunkInput::Sn>(c, smem, tid);
  load_chunk_input<K, V, kT, ChunkInput::DS>(c, smem, tid);
  ptx::cp_async_commit();
}

// acc[j] (n-tiles of 8 columns) += <x_t, y_j> for rows t = i0..i0+15 and the 16-column blocks
// of j up to and including the diagonal one (x, y row-major with D columns, row stride ld).
template <int D>
__device__ void causal_rows_product(float (&acc)[kChunk / 8][4], const bf16* x, const bf16* y, int ld, int i0) {
  const int w = i0 / kSub;
#pragma unroll
  for (int dc = 0; dc < D; dc += 16) {
    std::uint32_t a[4];
    a_rows(a, x, ld, i0, dc);
#pragma unroll
    for (int np = 0; np < kChunk / 16; ++np) {
      if (np > w) break;
      std::uint32_t bf[4];
      b_cols(bf, y, ld, np * 16, dc);
      mma_pair(acc[2 * np], acc[2 * np + 1], a, bf);
    }
  }
}

// Phase A, warps 0-3: dA rows i0..i0+15 over all 64 columns in bf16, zero on and right of the
// diagonal (the self pairs are added apart, gla_backward_common.cuh), and the diagonal 16x16
// block in fp32 with its diagonal.
template <int K, int V>
__device__ void form_dA(unsigned char* smem, int i0, float scale) {
  using L = ChunkGradLayout<K, V>;
  const bf16* d_o = reinterpret_cast<const bf16*>(smem + L::kDo);
  const bf16* v = reinterpret_cast<const bf16*>(smem + L::kV);
  bf16* dA = reinterpret_cast<bf16*>(smem + L::kDA);
  float* diag = reinterpret_cast<float*>(smem + L::kDAdiag) + (i0 / kSub) * kSub * kSub;
  const int lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3;
  float acc[kChunk / 8][4] = {};
  causal_rows_product<V>(acc, d_o, v, L::kVLd, i0);
#pragma unroll
  for (int nt = 0; nt < kChunk / 8; ++nt)
#pragma unroll
    for (int e = 0; e < 4; e += 2) {
      const int tl = gq + (e >> 1) * 8, t = i0 + tl, j = nt * 8 + 2 * tq;
      const float x0 = j <= t ? scale * acc[nt][e] : 0.f, x1 = j + 1 <= t ? scale * acc[nt][e + 1] : 0.f;
      *reinterpret_cast<std::uint32_t*>(dA + t * L::kCLd + j) = ptx::pack_bf16(j < t ? x0 : 0.f, j + 1 < t ? x1 : 0.f);
      if (j >= i0 && j < i0 + kSub) {
        diag[tl * kSub + j - i0] = x0;
        diag[tl * kSub + j + 1 - i0] = x1;
      }
    }
}

// acc += X[r0..r0+15] M^T with X [C][V] (do or v) and M [K][V] (S_n or dS_n), for the 8 NT
// columns from c0: the inter-chunk GEMM of dq and of dk.
template <int K, int V, int NT>
__device__ void rows_times_state_t(float (&acc)[NT][4], const bf16* x, const bf16* m, int r0, int c0) {
  using L = ChunkGradLayout<K, V>;
#pragma unroll
  for (int vc = 0; vc < V; vc += 16) {
    std::uint32_t a[4];
    a_rows(a, x, L::kVLd, r0, vc);
    mma_b_cols(acc, a, m, L::kVLd, c0, vc);
  }
}

// dq or dk rows r0..r0+15 with the self pair put back, times a per-element factor:
// f (acc + dA_{r,r} x_r) with f = 1, or f = e[r][c] or 1 / e[r][c] (kInverse) where e is given
// (the single-anchor path's 2^b); diag = the rows' 16x16 block of dA. Columns c0.. (8 NT of
// them), stored as bf16 rows of a token-major tensor, rows at or past T skipped.
template <int NT, bool kInverse = false>
__device__ void store_grad_rows(const float (&acc)[NT][4], const float* diag, const bf16* x, int ldx,
                                const float* e, int lde, bf16* dst, long long row_stride, int r0, int c0, int t0,
                                int T) {
  const int lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int rl = gq + half * 8, r = r0 + rl;
    if (t0 + r >= T) continue;
    const float self = diag[rl * kSub + rl];
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
      const int c = c0 + nt * 8 + 2 * tq;
      const float2 xv = ptx::unpack_bf16(*reinterpret_cast<const std::uint32_t*>(x + r * ldx + c));
      float v0 = acc[nt][2 * half] + self * xv.x, v1 = acc[nt][2 * half + 1] + self * xv.y;
      if (e) {
        const float2 f = *reinterpret_cast<const float2*>(e + r * lde + c);
        v0 = kInverse ? __fdividef(v0, f.x) : v0 * f.x;
        v1 = kInverse ? __fdividef(v1, f.y) : v1 * f.y;
      }
      *reinterpret_cast<std::uint32_t*>(dst + r * row_stride + c) = ptx::pack_bf16(v0, v1);
    }
  }
}

// Stores a warp's 16 x (8 * NT) fp32 accumulators as bf16 rows r0.. of a token-major tensor,
// rows at or past T skipped.
template <int NT>
__device__ void store_rows_bf16(const float (&acc)[NT][4], bf16* dst, long long row_stride, int r0, int t0, int T) {
  const int lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int r = r0 + gq + half * 8;
    if (t0 + r >= T) continue;
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
      *reinterpret_cast<std::uint32_t*>(dst + r * row_stride + nt * 8 + 2 * tq) =
          ptx::pack_bf16(acc[nt][2 * half], acc[nt][2 * half + 1]);
  }
}

// Phase D, first part: dv rows j0..j0+15, columns v0..v0+V/2-1 += sum_{t >= j} A_{t,j} do_t.
template <int K, int V>
__device__ void dv_from_A(float (&acc)[V / 16][4], unsigned char* smem, int j0, int v0) {
  using L = ChunkGradLayout<K, V>;
  const bf16* d_o = reinterpret_cast<const bf16*>(smem + L::kDo);
  const bf16* A = reinterpret_cast<const bf16*>(smem + L::kA);
#pragma unroll
  for (int tc = 0; tc < kChunk; tc += 16) {
    if (tc < j0) continue;
    std::uint32_t a[4];
    a_cols(a, A, L::kCLd, j0, tc);
    mma_b_rows(acc, a, d_o, L::kVLd, v0, tc);
  }
}

// R_n = rowsum(dS_n * S_n) (gla_backward_common.cuh) in kChunkGradThreads / K parts of the
// columns per row, from the bf16 copies in shared memory (R_n cancels against nothing).
template <int K, int V>
__device__ void state_dots(unsigned char* smem) {
  using L = ChunkGradLayout<K, V>;
  constexpr int kParts = kChunkGradThreads / K, kCols = V / kParts;
  const bf16* Sn = reinterpret_cast<const bf16*>(smem + L::kSn);
  const bf16* dS = reinterpret_cast<const bf16*>(smem + L::kDS);
  static_assert(kCols % 8 == 0 && L::kVLd % 8 == 0, "16-byte pieces of a row");
  const int r = threadIdx.x % K, part = threadIdx.x / K;
  // 16-byte reads: the 8 threads of a shared-memory wavefront take 8 consecutive rows, whose
  // padded stride (V + 8 bf16) puts their pieces in 8 disjoint groups of 4 banks.
  float dot = 0.f;
#pragma unroll 4
  for (int c = part * kCols; c < (part + 1) * kCols; c += 8) {
    dot = dot8_bf16(*reinterpret_cast<const uint4*>(Sn + r * L::kVLd + c),
                    *reinterpret_cast<const uint4*>(dS + r * L::kVLd + c), dot);
  }
  reinterpret_cast<float*>(smem + L::kStateDots)[part * K + r] = dot;
}

// Phase C: dL/da = x dq - y dk per element without the self pairs, from the accumulators of
// this warp's rows r0.. and columns c0.. (x, y are what sits where q, k were loaded: q, k, or on
// the single-anchor path their decayed copies, which pair with its accumulators), then the
// suffix sums down each column plus the chunk's carry e_last * R_n + sum_j k_j dk^inter_j
// (gla_backward_common.cuh), written to dg.
template <int K, int V, int NT>
__device__ void gates_grad(const Params& p, unsigned char* smem, const float (&dq)[NT][4], const float (&dk)[NT][4],
                           int r0, int c0, int n, bool e_is_exp, float* dg, int T) {
  using L = ChunkGradLayout<K, V>;
  const int lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3;
  const bf16* x = reinterpret_cast<const bf16*>(smem + L::kQ);
  const bf16* y = reinterpret_cast<const bf16*>(smem + L::kK);
  float* da = reinterpret_cast<float*>(smem + L::kDg);
  float* totals = reinterpret_cast<float*>(smem + L::kTotals);
  const float* col_sums = reinterpret_cast<const float*>(smem + L::kColSums);
#pragma unroll
  for (int nt = 0; nt < NT; ++nt)
#pragma unroll
    for (int e = 0; e < 4; e += 2) {
      const int r = r0 + gq + (e >> 1) * 8, c = c0 + nt * 8 + 2 * tq;
      const float2 xv = ptx::unpack_bf16(*reinterpret_cast<const std::uint32_t*>(x + r * L::kQkLd + c));
      const float2 yv = ptx::unpack_bf16(*reinterpret_cast<const std::uint32_t*>(y + r * L::kQkLd + c));
      *reinterpret_cast<float2*>(da + r * L::kDgLd + c) =
          make_float2(xv.x * dq[nt][e] - yv.x * dk[nt][e], xv.y * dq[nt][e + 1] - yv.y * dk[nt][e + 1]);
    }
  chunk_sync();
  constexpr int kParts = kChunkGradThreads / K, kRows = kChunk / kParts;
  const int c = threadIdx.x % K, part = threadIdx.x / K;
  float suffix[kRows];
  float run = 0.f;
#pragma unroll
  for (int r = kRows - 1; r >= 0; --r) {
    run += da[(part * kRows + r) * L::kDgLd + c];
    suffix[r] = run;
  }
  totals[part * K + c] = run;
  chunk_sync();
  const float* state_dots = reinterpret_cast<const float*>(smem + L::kStateDots);
  float r_n = 0.f;
#pragma unroll
  for (int q = 0; q < kParts; ++q) r_n += state_dots[q * K + c];
  // Row C-1 of the gate array: b_last (log2 units), or 2^{b_last} once the single-anchor path
  // has replaced b by 2^b.
  const float last = reinterpret_cast<const float*>(smem + L::kB)[(kChunk - 1) * L::kBLd + c];
  float carry = r_n * (e_is_exp ? last : ptx::exp2_approx(last));
#pragma unroll
  for (int w = 0; w < kChunk / kSub; ++w) carry += col_sums[w * K + c];
#pragma unroll
  for (int later = kParts - 1; later > 0; --later)
    if (later > part) carry += totals[later * K + c];
  const long long stride = (long long)p.H * K;
  const int rows = min(kChunk, T - n * kChunk) - part * kRows;  // of this thread's part, to store
  float* out = dg + part * kRows * stride + c;
#pragma unroll
  for (int r = 0; r < kRows; ++r, out += stride)
    if (r < rows) *out = suffix[r] + carry;
}

}  // namespace overlap::cuda::gla_backward_kernel
