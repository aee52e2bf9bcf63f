#pragma once
// gla forward, fused state carry, Hopper warp specialization (SPEC's "pingpong" schedule).
// One CTA per (b, h, v-block) walks the chunks of its sequence with the state S in registers.
// Four warpgroups hand each chunk on through mbarriers:
//
//   gating x2 form the gated operands of a chunk ONCE, in shared memory, in place (half the rows
//             each): b = log2(e) * in-chunk cumsum of g, q~ = q 2^b, k~ = k 2^-b, and the state
//             decay D = 2^b_last per channel
//   state     S <- D (S + k~^T v) (wgmma, S in fp32 registers), then S as bf16 in shared memory
//             for the next chunk's output
//   output    A = mask(q~ k~^T), o = s (q~ S_n + A v) (wgmma), o stored by TMA; one of its
//             threads also issues the TMA loads of the ring, refilling a stage as it frees it
//
// While the output warpgroup runs chunk n's GEMMs, the gating warpgroups build chunk n+1's
// operands on the FP32 and special-function pipes and the state warpgroup folds chunk n into S:
// FlashAttention-3's overlap of element-wise work with tensor-core work, by role. The gating
// work is latency-bound (dependent shared-memory and MUFU results): it gets two warps per
// scheduler, measured 2.5 us per chunk with one at B=2, T=16384 (Nsight Compute's stall
// samples: the other roles waited on it).
//
// Few heads, long sequences: where the (b, h, v-block) CTAs leave SMs idle, each walk is split
// along T over several CTAs (gla::PingpongFusedSegments). A later segment first walks the chunks
// before its own state-only, from h0 (k~ and the state update: no q, no output GEMMs, about
// two fifths of a chunk's gating chain), then outputs its own; no CTA waits on another.
//
// Numerics. q~ and k~ share one anchor, the chunk's start: q~_i . k~_j = q_i k_j 2^(b_i - b_j)
// for j <= i (the products the mask keeps are <= 1), and q~ <= q, k~ <= k 2^(-b_last). The
// diagonal of A (no decay) is q_i . k_i from the unrounded operands, so that rounding q~ and k~
// to bf16 cannot reach a row's own term (a short sequence's output is mostly that term). That is
// safe while every channel decays by at most 2^-kMaxFastDecay over the chunk, which covers the
// usual GLA gates (logsigmoid/16: about 2^-5 per chunk) by a wide margin. A chunk with stronger
// decay takes the anchored path instead (the gating warpgroup builds A itself with every factor
// 2^x, x <= 0: anchored at each 16-row sub-chunk's first row, the diagonal 16x16 blocks by
// halving anchors), the output warpgroup reads A from shared memory, and the state takes
// kd = k 2^(b_last - b) for S <- D S + kd^T v. Strong gates (SPEC:
// about -7 per step) take it in every chunk; the GPU tests run both paths.
#include <cstdint>
#include <type_traits>
#include <cuda.h>
#include <cuda_bf16.h>

#include "common/ptx_sm80.cuh"
#include "common/sm90_ptx.cuh"
#include "gla/gla_tiling.hpp"
#include "gla/gla_varlen.cuh"
#include "gla/gla_wgmma.cuh"

namespace overlap::cuda::gla_pingpong_fused {

using bf16 = __nv_bfloat16;
namespace ptx = overlap::cuda::ptx;
using sm90::Major;

constexpr int kChunk = 64;
constexpr int kThreads = 128 * gla::PingpongFusedLayout::kWarpgroups;
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kMaxFastDecay = gla::PingpongFusedLayout::kMaxFastDecayLog2;
// Named barriers (0 is __syncthreads).
constexpr int kGatingBarrier = 1;
constexpr int kOutputBarrier = 2;
constexpr int kStateBarrier = 3;

struct Params {
  CUtensorMap q_map;  // bf16 {K, T, H, B}, box {64, 64, 1, 1}, 128-byte swizzle
  CUtensorMap k_map;
  CUtensorMap v_map;  // bf16 {V, T, H, B}, box {64, 64, 1, 1}, 128-byte swizzle
  CUtensorMap g_map;  // fp32 {K, T, H, B}, box {K, 64, 1, 1}, dense rows
  CUtensorMap o_map;  // bf16 {V, T, H, B}, box {64, 64, 1, 1}, 128-byte swizzle (stores)
  const float* h0;    // [B,H,K,V] or null
  float* hT;          // [B,H,K,V] or null
  int H, V;
  int v_blocks;    // V / block_v CTAs per head
  int num_chunks;  // ceil(T / 64)
  float scale;
  // Sequence segments (gla::PingpongFusedSegments): CTAs per (b, h, v-block); segment i outputs
  // chunks [bounds[i], bounds[i + 1]) after walking [0, bounds[i]) state-only.
  int segments;
  int bounds[gla::PingpongFusedSegments::kMax + 1];
  // Saved states (the kernel's kSave): bf16 [B,H,NT,K,V] as {V, K, NT, B*H}, box {64, K, 1, 1},
  // 128-byte swizzle: S_n entering every chunk, for gla_backward's saved_states variant. A
  // variable-length batch's as {V, K, chunk states * H, 1} (gla_varlen.hpp's layout).
  CUtensorMap states_map;
  // Variable-length batches only (gla_pingpong_fused_varlen_kernel; B = 1): the plan, and o for
  // the rows of a sequence's last chunk (a TMA store of the whole chunk would write the next
  // sequence's rows).
  gla_varlen::Plan varlen;
  bf16* o;
};

// One walk of the kernel: its batch row and head, the state index bh (h0, hT: b H + h, or
// sequence H + h), its first step t_base along T (0 in a dense batch), the chunks it outputs
// [first, end) after walking [0, first) state-only, and the steps of its last chunk.
struct Walk {
  int b, h, bh, v0, t_base, first, end, last_rows;
  int m0;  // saved states: S_m is row m0 + m of the map's third dimension (0 in a dense batch)
};

// Shared-memory layout: offsets from the one definition in gla_tiling.hpp.
template <int K, int BV, int S>
struct Layout {
  static constexpr gla::PingpongFusedLayout L{K, BV, S};
  static constexpr int kQ = 0, kK = L.k_offset(), kG = L.g_offset(), kV = L.v_offset();
  static constexpr int kStage = L.stage_bytes();
  static constexpr int kState = L.state_offset(), kOut = L.out_offset(), kDiag = L.diag_offset();
  static constexpr int kTotals = L.totals_offset(), kDecay = L.decay_offset(), kSelf = L.self_offset();
  static constexpr int kFlags = L.flags_offset();
  static constexpr int kBars = L.barriers_offset(), kBytes = L.bytes();
  static constexpr int kLoadBytes = L.load_bytes();
};

// Byte offset of element (row, col) of a bf16 tile stored as 64-column atoms of `rows` rows
// with the 128-byte swizzle (what TMA's SWIZZLE_128B writes and wgmma's SW128 layouts read).
__device__ __forceinline__ int sw128(int row, int col, int rows) {
  return (col >> 6) * rows * 128 + row * 128 + ((((col & 63) >> 3) ^ (row & 7)) << 4) + ((col & 7) << 1);
}
__device__ __forceinline__ std::uint32_t& pair_ref(void* tile, int row, int col, int rows) {
  return *reinterpret_cast<std::uint32_t*>(static_cast<unsigned char*>(tile) + sw128(row, col, rows));
}
__device__ __forceinline__ std::uint32_t pair_at(const void* tile, int row, int col, int rows) {
  return *reinterpret_cast<const std::uint32_t*>(static_cast<const unsigned char*>(tile) + sw128(row, col, rows));
}

struct Barriers {
  std::uint64_t* full;      // [S] TMA bytes of a stage landed
  std::uint64_t* prepared;  // [S] gating warpgroups done with the stage's chunk (256 arrivals)
  std::uint64_t* empty;     // [S] state and output warpgroups done with it (one per warp)
  std::uint64_t* s_ready;   // S_n (bf16) written for the output warpgroup (128 arrivals)
  std::uint64_t* s_free;    // the output warpgroup has read S_n (one per warp)
};

// ---- loads ----------------------------------------------------------------------------------
// The TMA loads of chunk n into its stage (issued by one output thread); a state-only chunk
// (n < first) needs no q.
template <int K, int BV, int S>
__device__ void load_chunk(const Params& p, unsigned char* smem, const Barriers& bar, int n, int first, int b, int h,
                           int v0, int t_base) {
  using L = Layout<K, BV, S>;
  const int s = n % S;  // sass:producer.chunk {
  const bool with_q = n >= first;
  sm90::mbar_arrive_expect_tx(&bar.full[s], L::kLoadBytes - (with_q ? 0 : kChunk * K * 2));
  unsigned char* st = smem + s * L::kStage;
  const int t0 = t_base + n * kChunk;
#pragma unroll
  for (int a = 0; a < K / 64; ++a) {
    if (with_q) sm90::tma_load_4d(st + L::kQ + a * 8192, &p.q_map, &bar.full[s], a * 64, t0, h, b);
    sm90::tma_load_4d(st + L::kK + a * 8192, &p.k_map, &bar.full[s], a * 64, t0, h, b);
  }
  sm90::tma_load_4d(st + L::kG, &p.g_map, &bar.full[s], 0, t0, h, b);
#pragma unroll
  for (int a = 0; a < BV / 64; ++a)
    sm90::tma_load_4d(st + L::kV + a * 8192, &p.v_map, &bar.full[s], v0 + a * 64, t0, h, b);
  // } sass:producer.chunk
}

// ---- gating: the anchored path for chunks with strong decay ---------------------------------
// x[row][col..col+1] * 2^(b[row] - b[anchor]) (queries) or 2^(b[anchor] - b[row]) (keys), from
// the stage's swizzled bf16 tile and the dense fp32 cumulative sums b.
template <int K, bool kKey>
__device__ __forceinline__ std::uint32_t anchored_pair(const bf16* x, const float* b, int row, int anchor,
                                                       int col) {
  const float2 xv = ptx::unpack_bf16(pair_at(x, row, col, kChunk));
  const float2 br = *reinterpret_cast<const float2*>(b + row * K + col);
  const float2 ba = *reinterpret_cast<const float2*>(b + anchor * K + col);
  const float e0 = kKey ? ba.x - br.x : br.x - ba.x;
  const float e1 = kKey ? ba.y - br.y : br.y - ba.y;
  return ptx::pack_bf16(xv.x * ptx::exp2_approx(e0), xv.y * ptx::exp2_approx(e1));
}

// Row block w (rows 16w..16w+15) of A = mask(sum_k q_ik k_jk 2^(b_ik - b_jk)) on mma.sync:
// columns left of the diagonal block anchored at row 16w (q factor 2^(b_i - b_16w) <= 1, key
// factor 2^(b_16w - b_j) <= 1) into `off`; the diagonal 16x16 block split by the highest bit
// where the local row and column differ (levels h = 8, 4, 2, 1, anchored at the first row of
// the row's half-block, which lies between them) into the warp's 16x16 `scratch` (lower
// triangle; the upper triangle stays zero from the kernel's start).
template <int K>
__device__ void anchored_row_block(const bf16* q, const bf16* k, const float* b, int w, float (&off)[6][4],
                                   float* scratch) {
  // The many operand addresses below depend only on the thread: hidden from the compiler so
  // that it forms them here, chunk by chunk, instead of keeping them all live (spilled) across
  // the gating loop.
  int lane = threadIdx.x & 31;
  asm volatile("" : "+r"(lane), "+r"(w));
  const int gq = lane >> 2, tq = lane & 3;
  const int i0 = 16 * w;
#pragma unroll
  for (int jt = 0; jt < 6; ++jt)
#pragma unroll
    for (int e = 0; e < 4; ++e) off[jt][e] = 0.f;
  if (w > 0) {
#pragma unroll
    for (int kc = 0; kc < K; kc += 16) {
      std::uint32_t a[4];
      a[0] = anchored_pair<K, false>(q, b, i0 + gq, i0, kc + 2 * tq);
      a[1] = anchored_pair<K, false>(q, b, i0 + gq + 8, i0, kc + 2 * tq);
      a[2] = anchored_pair<K, false>(q, b, i0 + gq, i0, kc + 2 * tq + 8);
      a[3] = anchored_pair<K, false>(q, b, i0 + gq + 8, i0, kc + 2 * tq + 8);
#pragma unroll
      for (int jt = 0; jt < 6; ++jt)
        if (jt < 2 * w) {
          const int j = jt * 8 + gq;
          ptx::mma_bf16_16816(off[jt], a, anchored_pair<K, true>(k, b, j, i0, kc + 2 * tq),
                              anchored_pair<K, true>(k, b, j, i0, kc + 2 * tq + 8));
        }
    }
  }
#pragma unroll
  for (int h = 8; h >= 1; h >>= 1) {
    // Rows with bit h set pair with columns with bit h clear in the same 2h-block.
    const int jl = (gq / h) * 2 * h + (gq % h);  // this lane's B column -> local key index
    const int anchor_b = i0 + (jl & ~(2 * h - 1)) + h;
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int kc = 0; kc < K; kc += 16) {
      std::uint32_t a[4];
      const int r0 = gq, r1 = gq + 8;
      // At h = 1 a row's anchor is the row itself (factor 1); at h = 8 rows 0-7 are dropped.
      if (h == 1 || h == 8) {
        a[0] = pair_at(q, i0 + r0, kc + 2 * tq, kChunk);
        a[2] = pair_at(q, i0 + r0, kc + 2 * tq + 8, kChunk);
      } else {
        a[0] = anchored_pair<K, false>(q, b, i0 + r0, i0 + (r0 & ~(h - 1)), kc + 2 * tq);
        a[2] = anchored_pair<K, false>(q, b, i0 + r0, i0 + (r0 & ~(h - 1)), kc + 2 * tq + 8);
      }
      if (h == 1) {
        a[1] = pair_at(q, i0 + r1, kc + 2 * tq, kChunk);
        a[3] = pair_at(q, i0 + r1, kc + 2 * tq + 8, kChunk);
      } else {
        a[1] = anchored_pair<K, false>(q, b, i0 + r1, i0 + (r1 & ~(h - 1)), kc + 2 * tq);
        a[3] = anchored_pair<K, false>(q, b, i0 + r1, i0 + (r1 & ~(h - 1)), kc + 2 * tq + 8);
      }
      ptx::mma_bf16_16816(acc, a, anchored_pair<K, true>(k, b, i0 + jl, anchor_b, kc + 2 * tq),
                          anchored_pair<K, true>(k, b, i0 + jl, anchor_b, kc + 2 * tq + 8));
    }
    // acc[e]: row gq (+8 for e >= 2), B column 2tq + (e & 1).
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int il = gq + (e >> 1) * 8;
      const int c = 2 * tq + (e & 1);
      const int j = (c / h) * 2 * h + (c % h);
      if ((il & h) && (j & ~(2 * h - 1)) == (il & ~(2 * h - 1))) scratch[il * 16 + j] = acc[e];
    }
  }
  // The diagonal itself: q_i . k_i, no decay.
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int kc = 0; kc < K; kc += 16) {
      std::uint32_t a[4];
      a[0] = pair_at(q, i0 + gq, kc + 2 * tq, kChunk);
      a[1] = pair_at(q, i0 + gq + 8, kc + 2 * tq, kChunk);
      a[2] = pair_at(q, i0 + gq, kc + 2 * tq + 8, kChunk);
      a[3] = pair_at(q, i0 + gq + 8, kc + 2 * tq + 8, kChunk);
      const int j = i0 + half * 8 + gq;
      ptx::mma_bf16_16816(acc, a, pair_at(k, j, kc + 2 * tq, kChunk), pair_at(k, j, kc + 2 * tq + 8, kChunk));
    }
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int il = gq + (e >> 1) * 8;
      const int j = half * 8 + 2 * tq + (e & 1);
      if (j == il) scratch[il * 16 + j] = acc[e];
    }
  }
}

// Writes row block w of A (bf16, the K-major 64x64 operand of the output's A v) into `a_tile`.
__device__ __forceinline__ void store_row_block(void* a_tile, int w, const float (&off)[6][4], const float* scratch) {
  const int lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3;
#pragma unroll
  for (int jt = 0; jt < 8; ++jt)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int il = gq + 8 * half, col = 8 * jt + 2 * tq;
      float x0 = 0.f, x1 = 0.f;
      if (jt < 6 && jt < 2 * w) {
        x0 = off[jt < 6 ? jt : 0][2 * half];
        x1 = off[jt < 6 ? jt : 0][2 * half + 1];
      } else if (jt == 2 * w || jt == 2 * w + 1) {
        x0 = scratch[il * 16 + col - 16 * w];
        x1 = scratch[il * 16 + col - 16 * w + 1];
      }
      pair_ref(a_tile, 16 * w + il, col, kChunk) = ptx::pack_bf16(x0, x1);
    }
}

// One halving step of warp_sum_scatter: lanes with bit O set keep the upper half of the O * 2
// remaining values (adding their partner's), the others the lower half.
template <int O, int N>
__device__ __forceinline__ void sum_halves(float (&v)[N], int lane) {
  const bool upper = (lane & O) != 0;
#pragma unroll
  for (int i = 0; i < O; ++i) {
    const float send = upper ? v[i] : v[i + O];
    const float keep = upper ? v[i + O] : v[i];
    v[i] = keep + __shfl_xor_sync(0xffffffffu, send, O);
  }
  if constexpr (O > 1) sum_halves<O / 2>(v, lane);
}

// Sums v[r] over the warp's lanes for every r (N = 8, 16 or 32 values per lane) in 31
// shuffles; lane L returns the sum for r = L % N.
template <int N>
__device__ __forceinline__ float warp_sum_scatter(float (&v)[N]) {
  static_assert(N == 8 || N == 16 || N == 32, "a power of two, at most one value per lane at the end");
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int o = 16; o >= N; o >>= 1)  // whole sums over the lanes beyond N
#pragma unroll
    for (int i = 0; i < N; ++i) v[i] += __shfl_xor_sync(0xffffffffu, v[i], o);
  sum_halves<N / 2>(v, lane);
  return v[0];
}

// ---- gating ---------------------------------------------------------------------------------
// Each scheduler holds two gating warps, one state warp and one output warp (warp w runs on
// scheduler w % 4); the model times the gating chain beside the others (tools/sass_mix.py):
// sass-beside: gating.full=gating.chunk+gating.fast/output.chunk+output.fast+output.store/state.chunk+state.scale+state.store
// The code a scheduler's warps run each chunk (a full chunk on the fast path), for the instruction caches:
// sass-hot: producer.chunk+gating.chunk+gating.fast+output.chunk+output.fast+output.store+state.chunk+state.scale+state.store
// sass-beside: gating.state_only=gating.chunk@prefix+gating.prefix@prefix/output.prefix/state.chunk+state.scale
// Gating thread t (0-255: warpgroups 0 and 1) owns channels 2cp, 2cp+1 (cp = t % (K/2)) of rows
// [part*R, part*R + R), R = 16 at K = 128, 8 at K = 64.
// Chunks [0, end); those before `first` are state-only (only the state update's keys).
// kVarlen: the last chunk's steps from last_rows on belong to the next sequence (or lie past
// T): they count as gates of 0 and keys of 0, so that neither the decay nor the state sees them.
template <int K, int BV, int S, bool kVarlen>
__device__ void gate(const Params& p, unsigned char* smem, const Barriers& bar, int first, int end, int last_rows) {
  using L = Layout<K, BV, S>;
  constexpr int kThreads = gla::PingpongFusedLayout::kGatingThreads;
  constexpr int kPairs = K / 2, kParts = kThreads / kPairs, kRows = kChunk / kParts;
  const int t = threadIdx.x;
  const int cp = t % kPairs, part = t / kPairs, col = 2 * cp, row0 = part * kRows;
  const int w = t / 32;  // 0-7; warps 0-3 build A on the anchored path
  float2* totals = reinterpret_cast<float2*>(smem + L::kTotals);  // [2][kParts][kPairs]
  float* decay = reinterpret_cast<float*>(smem + L::kDecay);       // [S][K]
  float* self = reinterpret_cast<float*>(smem + L::kSelf);         // [S][2][64]
  int* flags = reinterpret_cast<int*>(smem + L::kFlags);           // [S]
  float* scratch = reinterpret_cast<float*>(smem + L::kDiag) + (w & 3) * 256;

  // One chunk; kStateOnly (a compile-time tag) for the chunks before this segment's own, so
  // that each of the two loops below is compiled for its own kind of chunk; kMasked for a
  // variable-length walk's last chunk (the others keep the dense loop's code).
  auto chunk = [&](int n, auto state_only, auto masked) {  // sass:gating.chunk {
    constexpr bool kStateOnly = decltype(state_only)::value;
    constexpr bool kMasked = decltype(masked)::value;
    const int s = n % S;
    sm90::mbar_wait(&bar.full[s], (n / S) & 1);
    unsigned char* st = smem + s * L::kStage;
    bf16* q = reinterpret_cast<bf16*>(st + L::kQ);
    bf16* k = reinterpret_cast<bf16*>(st + L::kK);
    float* g = reinterpret_cast<float*>(st + L::kG);
    const int valid = kMasked ? last_rows : kChunk;

    // Cumulative sums of this thread's rows, then the totals of the parts above it.
    float2 b[kRows];
    float2 acc = make_float2(0.f, 0.f);
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      float2 gv = *reinterpret_cast<const float2*>(g + (row0 + r) * K + col);
      if (kMasked && row0 + r >= valid) gv = make_float2(0.f, 0.f);
      acc.x += gv.x * kLog2e;
      acc.y += gv.y * kLog2e;
      b[r] = acc;
    }
    float2* tot = totals + (n & 1) * kParts * kPairs;
    tot[part * kPairs + cp] = acc;
    sm90::named_sync(kGatingBarrier, kThreads);  // also: every g of the stage has been read
    float2 carry = make_float2(0.f, 0.f), last = make_float2(0.f, 0.f);
#pragma unroll
    for (int pp = 0; pp < kParts; ++pp) {
      const float2 tv = tot[pp * kPairs + cp];
      if (pp < part) carry.x += tv.x, carry.y += tv.y;
      last.x += tv.x, last.y += tv.y;
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) b[r].x += carry.x, b[r].y += carry.y;
    const bool slow =
        sm90::named_sync_or(kGatingBarrier, kThreads, -last.x > kMaxFastDecay || -last.y > kMaxFastDecay);
    const float2 d = make_float2(ptx::exp2_approx(last.x), ptx::exp2_approx(last.y));
    if (part == 0) *reinterpret_cast<float2*>(decay + s * K + col) = d;

    if (kStateOnly) {  // sass:gating.prefix {
      // State-only: k~ = k 2^-b in place of g (single anchor) or kd = k 2^(b_last - b) in
      // place of k (anchored path), what update_state reads.
      int base[8];
#pragma unroll
      for (int j = 0; j < 8; ++j) base[j] = sw128(row0 + j, col, kChunk) - j * 128;
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        const int off = base[r & 7] + r * 128;
        auto& kr = *reinterpret_cast<std::uint32_t*>(reinterpret_cast<unsigned char*>(k) + off);
        const float2 kv = ptx::unpack_bf16(kr);
        const float2 e = slow ? make_float2(last.x - b[r].x, last.y - b[r].y) : make_float2(-b[r].x, -b[r].y);
        const std::uint32_t kd = ptx::pack_bf16(kv.x * ptx::exp2_approx(e.x), kv.y * ptx::exp2_approx(e.y));
        if (slow)
          kr = kd;
        else
          *reinterpret_cast<std::uint32_t*>(reinterpret_cast<unsigned char*>(g) + off) = kd;
      }
      // } sass:gating.prefix
    } else if (!slow) {  // sass:gating.fast {
      // q~ in place of q, k~ (bf16, swizzled) in place of g. row0 is a
      // multiple of 8, so row r's swizzle depends on r & 7 only: eight base offsets, each
      // row an immediate 128 r bytes on top.
      int base[8];
#pragma unroll
      for (int j = 0; j < 8; ++j) base[j] = sw128(row0 + j, col, kChunk) - j * 128;
      float dots[kRows];  // this thread's share of q_r . k_r
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        const int off = base[r & 7] + r * 128;
        auto& qr = *reinterpret_cast<std::uint32_t*>(reinterpret_cast<unsigned char*>(q) + off);
        auto& kr = *reinterpret_cast<std::uint32_t*>(reinterpret_cast<unsigned char*>(k) + off);
        const float2 qv = ptx::unpack_bf16(qr);
        float2 kv = ptx::unpack_bf16(kr);
        if (kMasked && row0 + r >= valid) kv = make_float2(0.f, 0.f);
        dots[r] = qv.x * kv.x + qv.y * kv.y;
        qr = ptx::pack_bf16(qv.x * ptx::exp2_approx(b[r].x), qv.y * ptx::exp2_approx(b[r].y));
        *reinterpret_cast<std::uint32_t*>(reinterpret_cast<unsigned char*>(g) + off) =
            ptx::pack_bf16(kv.x * ptx::exp2_approx(-b[r].x), kv.y * ptx::exp2_approx(-b[r].y));
      }
      // Each warp holds 64 channels of its rows: K = 128, half of them (the part's other warp
      // the rest); K = 64, all (half 1 is zero).
      const int lane = t & 31;
      const float dot = warp_sum_scatter(dots);
      if (K == 128) {
        if (lane < kRows) self[(s * 2 + (w & 1)) * kChunk + row0 + lane] = dot;
      } else if (lane < 2 * kRows) {
        self[(s * 2 + lane / kRows) * kChunk + row0 + lane % kRows] = lane < kRows ? dot : 0.f;
      }
      // } sass:gating.fast
    } else {  // sass:gating.slow {
      // b in place of g; A from the anchored products of the raw q, k; then q~ and kd in place
      // (b read back, so that b's registers are free while A is built); then A in place of b.
#pragma unroll
      for (int r = 0; r < kRows; ++r) *reinterpret_cast<float2*>(g + (row0 + r) * K + col) = b[r];
      sm90::named_sync(kGatingBarrier, kThreads);
      float off[6][4];
      if (w < 4) anchored_row_block<K>(q, k, g, w, off, scratch);
      sm90::named_sync(kGatingBarrier, kThreads);  // every warp is done reading q and k
#pragma unroll 4
      for (int r = 0; r < kRows; ++r) {
        const int row = row0 + r;
        const float2 br = *reinterpret_cast<const float2*>(g + row * K + col);
        std::uint32_t& qr = pair_ref(q, row, col, kChunk);
        std::uint32_t& kr = pair_ref(k, row, col, kChunk);
        const float2 qv = ptx::unpack_bf16(qr);
        float2 kv = ptx::unpack_bf16(kr);
        if (kMasked && row >= valid) kv = make_float2(0.f, 0.f);
        qr = ptx::pack_bf16(qv.x * ptx::exp2_approx(br.x), qv.y * ptx::exp2_approx(br.y));
        kr = ptx::pack_bf16(kv.x * ptx::exp2_approx(last.x - br.x), kv.y * ptx::exp2_approx(last.y - br.y));
      }
      sm90::named_sync(kGatingBarrier, kThreads);  // every warp is done reading b
      if (w < 4) store_row_block(g, w, off, scratch);
    }  // } sass:gating.slow
    if (t == 0) flags[s] = slow;
    sm90::fence_proxy_async();  // the wgmmas of the other warpgroups read what was written
    sm90::mbar_arrive(&bar.prepared[s]);
  };  // } sass:gating.chunk
  for (int n = 0; n < first; ++n) chunk(n, std::true_type{}, std::false_type{});  // sass:@prefix
  if constexpr (kVarlen) {  // first = 0
    for (int n = 0; n < end - 1; ++n) chunk(n, std::false_type{}, std::false_type{});
    if (end > 0) chunk(end - 1, std::false_type{}, std::true_type{});
  } else {
    for (int n = first; n < end; ++n) chunk(n, std::false_type{}, std::false_type{});
  }
}

// ---- state ----------------------------------------------------------------------------------
// S rows d = 64 mt + 16 warp + lane/4 (+8), columns 8j + 2(lane%4) (+1): the wgmma m64nBV
// accumulator layout of each 64-row tile mt.
template <int K, int BV>
struct StateTile {
  static constexpr int kTiles = K / 64, kRegs = BV / 2;
  float s[kTiles][kRegs];
  __device__ static int row(int mt, int e) {
    return 64 * mt + 16 * ((threadIdx.x >> 5) & 3) + ((threadIdx.x & 31) >> 2) + 8 * ((e >> 1) & 1);
  }
  __device__ static int col(int e) { return 8 * (e >> 2) + 2 * (threadIdx.x & 3) + (e & 1); }

  __device__ void load(const float* src, int ld) {  // src: row 0, column 0 of this CTA's slice
#pragma unroll
    for (int mt = 0; mt < kTiles; ++mt)
#pragma unroll
      for (int e = 0; e < kRegs; e += 2) {
        const float2 x = src ? *reinterpret_cast<const float2*>(src + (long long)row(mt, e) * ld + col(e))
                             : make_float2(0.f, 0.f);
        s[mt][e] = x.x, s[mt][e + 1] = x.y;
      }
  }
  __device__ void store(float* dst, int ld) const {
#pragma unroll
    for (int mt = 0; mt < kTiles; ++mt)
#pragma unroll
      for (int e = 0; e < kRegs; e += 2)
        *reinterpret_cast<float2*>(dst + (long long)row(mt, e) * ld + col(e)) = make_float2(s[mt][e], s[mt][e + 1]);
  }
  // S <- diag(decay) S (decay: one factor per row, in shared memory).
  __device__ void scale_rows(const float* decay) {
#pragma unroll
    for (int mt = 0; mt < kTiles; ++mt) {
      const float d0 = decay[row(mt, 0)], d1 = decay[row(mt, 2)];
#pragma unroll
      for (int e = 0; e < kRegs; ++e) s[mt][e] *= (e & 2) ? d1 : d0;
    }
  }
  // bf16 copy as the MN-major B operand of q~ S: 64-column atoms of K rows, 128-byte swizzle.
  __device__ void store_operand(void* tile) const {
#pragma unroll
    for (int mt = 0; mt < kTiles; ++mt)
#pragma unroll
      for (int e = 0; e < kRegs; e += 2) pair_ref(tile, row(mt, e), col(e), K) = ptx::pack_bf16(s[mt][e], s[mt][e + 1]);
  }
};

// The saved states (kSave): S_m, as the state warpgroup has just written it to
// s_tile for the output, also goes to global memory, by one TMA store per 64 columns.
template <int K, int BV>
__device__ __forceinline__ void save_state(const Params& p, const unsigned char* s_tile, int m, int bh, int v0) {
  // m: the state's row in the map's third dimension, bh its fourth (0 in a variable-length batch).
  sm90::named_sync(kStateBarrier, 128);  // sass:state.save { every thread's part of S_m is in s_tile
  if (threadIdx.x % 128 == 0) {
#pragma unroll
    for (int a = 0; a < BV / 64; ++a) sm90::tma_store_4d(&p.states_map, s_tile + a * K * 128, v0 + a * 64, 0, m, bh);
    sm90::bulk_commit();
  }  // } sass:state.save
}
// Before s_tile is rewritten: the last saved state's TMA store has read it.
__device__ __forceinline__ void saved_state_read() {
  if (threadIdx.x % 128 == 0) sm90::bulk_wait_read_all();  // sass:state.save {
  sm90::named_sync(kStateBarrier, 128);                     // } sass:state.save
}

// Chunks [0, end), from h0; publishes S_m for the output's chunks m in [first, end) (and, with
// kSave, saves them: a separate instantiation, so that the kernel that saves nothing compiles
// to the same machine code as without the option).
// kVarlen: S_m is saved as row m0 + m of the map (bh 0), a zero-length walk saves nothing, and
// every walk ends at its sequence's end.
template <int K, int BV, int S, bool kSave, bool kVarlen>
__device__ void update_state(const Params& p, unsigned char* smem, const Barriers& bar, int bh, int v0, int first,
                             int end, int m0) {
  const int save_bh = kVarlen ? 0 : bh;
  const long long state0 = (long long)bh * K * p.V + v0;
  using L = Layout<K, BV, S>;
  const int lane = threadIdx.x & 31;
  const float* decay = reinterpret_cast<const float*>(smem + L::kDecay);
  const int* flags = reinterpret_cast<const int*>(smem + L::kFlags);
  unsigned char* s_tile = smem + L::kState;
  StateTile<K, BV> S_;
  S_.load(p.h0 ? p.h0 + state0 : nullptr, p.V);
  S_.store_operand(s_tile);  // S_0, read only where the segment's output starts at chunk 0
  sm90::fence_proxy_async();
  if (first == 0 && (!kVarlen || end > 0)) {
    sm90::mbar_arrive(bar.s_ready);
    if constexpr (kSave) save_state<K, BV>(p, s_tile, m0, save_bh, v0);
  }

  for (int n = 0; n < end; ++n) {  // sass:state.chunk {
    const int s = n % S;
    sm90::mbar_wait(&bar.full[s], (n / S) & 1);
    sm90::mbar_wait(&bar.prepared[s], (n / S) & 1);
    // Single anchor: S <- D (S + k~^T v), k~ over g. Anchored path: S <- D S + kd^T v, kd over k.
    const bool slow = __shfl_sync(0xffffffffu, flags[s], 0) != 0;
    unsigned char* st = smem + s * L::kStage;
    unsigned char* keys = st + (slow ? L::kK : L::kG);
    if (slow) S_.scale_rows(decay + s * K);  // sass:state.slow {}
    // A = keys^T (MN-major: rows are chunk steps, 64 channels per atom), B = v (MN-major: 64
    // columns per atom, 8 KB apart).
#pragma unroll
    for (int mt = 0; mt < StateTile<K, BV>::kTiles; ++mt) sm90::fence_regs(S_.s[mt]);
    sm90::wgmma_fence();
#pragma unroll
    for (int mt = 0; mt < StateTile<K, BV>::kTiles; ++mt)
#pragma unroll
      for (int kk = 0; kk < kChunk / 16; ++kk)
        sm90::wgmma_ss<Major::MN, Major::MN, BV>(sm90::sw128_desc(keys + mt * 8192 + kk * 2048, 8192, 1024),
                                                 sm90::sw128_desc(st + L::kV + kk * 2048, 8192, 1024), S_.s[mt], true);
    sm90::wgmma_commit();
    sm90::wgmma_wait<0>();
#pragma unroll
    for (int mt = 0; mt < StateTile<K, BV>::kTiles; ++mt) sm90::fence_regs(S_.s[mt]);
    if (!slow) S_.scale_rows(decay + s * K);  // sass:state.scale {}
    __syncwarp();
    if (lane == 0) sm90::mbar_arrive(&bar.empty[s]);
    if (n + 1 >= first && n + 1 < end) {  // sass:state.store {
      // S_m is the output's (m - first)-th: wait until it has read the one before.
      if (n >= first) sm90::mbar_wait(bar.s_free, (n - first) & 1);
      if constexpr (kSave) saved_state_read();
      S_.store_operand(s_tile);
      sm90::fence_proxy_async();
      sm90::mbar_arrive(bar.s_ready);
      if constexpr (kSave) save_state<K, BV>(p, s_tile, m0 + n + 1, save_bh, v0);
    }  // } sass:state.store
  }  // } sass:state.chunk
  if (p.hT && (kVarlen || end == p.num_chunks)) S_.store(p.hT + state0, p.V);
  if constexpr (kSave) {
    if (threadIdx.x % 128 == 0) sm90::bulk_wait_all();  // before the CTA's shared memory goes
  }
}

// ---- output ---------------------------------------------------------------------------------
// Outputs chunks [first, end); releases (and refills) the stages of the state-only ones before.
// kVarlen: the walk starts at step t_base of the packed batch, and of its last chunk only the
// first last_rows rows are its own.
template <int K, int BV, int S, bool kVarlen>
__device__ void emit_output(const Params& p, unsigned char* smem, const Barriers& bar, int b, int h, int v0, int first,
                            int end, int t_base, int last_rows) {
  using L = Layout<K, BV, S>;
  const int t = threadIdx.x - 384, lane = t & 31;
  const int row = 16 * (t >> 5) + (lane >> 2);  // first of this thread's two rows (+8)
  const int* flags = reinterpret_cast<const int*>(smem + L::kFlags);
  unsigned char* s_tile = smem + L::kState;
  unsigned char* out = smem + L::kOut;
  // Thread 0 fills the ring, then refills each stage as soon as both of its readers are done.
  if (t == 0) {
    sm90::tma_prefetch_map(&p.q_map);
    sm90::tma_prefetch_map(&p.k_map);
    sm90::tma_prefetch_map(&p.v_map);
    sm90::tma_prefetch_map(&p.g_map);
    for (int n = 0; n < S && n < end; ++n) load_chunk<K, BV, S>(p, smem, bar, n, first, b, h, v0, t_base);
  }
  for (int n = 0; n < first; ++n) {  // sass:output.prefix {
    // State-only chunk: nothing to compute. Waiting for its load keeps this warpgroup's empty
    // arrivals in the stage's phase order.
    const int s = n % S;
    sm90::mbar_wait(&bar.full[s], (n / S) & 1);
    __syncwarp();
    if (lane == 0) sm90::mbar_arrive(&bar.empty[s]);
    if (t == 0 && n + S < end) {
      sm90::mbar_wait(&bar.empty[s], (n / S) & 1);
      load_chunk<K, BV, S>(p, smem, bar, n + S, first, b, h, v0, t_base);
    }
  }  // } sass:output.prefix
  for (int n = first; n < end; ++n) {  // sass:output.chunk {
    const int s = n % S;
    sm90::mbar_wait(&bar.full[s], (n / S) & 1);
    sm90::mbar_wait(&bar.prepared[s], (n / S) & 1);
    // Warp-uniform by construction (one flag per chunk); the shuffle lets the compiler see it,
    // so the wgmmas under it are not serialized as if in a divergent branch.
    const bool slow = __shfl_sync(0xffffffffu, flags[s], 0) != 0;
    unsigned char* st = smem + s * L::kStage;
    unsigned char* qt = st + L::kQ;  // q~
    unsigned char* kt = st + L::kG;  // k~ (fast path) or A (anchored path)

    // A = mask(q~ k~^T) first, as bf16 register operands. (Overlapping the mask with the next
    // GEMM, reading these accumulators while another wgmma group is in flight, makes ptxas
    // serialize every wgmma of the kernel: C7514.)
    std::uint32_t af[4][4];
    if (!slow) {  // sass:output.fast {
      const float* self = reinterpret_cast<const float*>(smem + L::kSelf) + s * 2 * kChunk;
      float a[32];
      // Both K-major: step 32 bytes along a 128-byte row, 8 KB per 64 channels.
      sm90::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < K / 16; ++kk) {
        const int off = (kk >> 2) * 8192 + (kk & 3) * 32;
        sm90::wgmma_ss<Major::K, Major::K, 64>(sm90::sw128_desc(qt + off), sm90::sw128_desc(kt + off), a, kk > 0);
      }
      sm90::wgmma_commit();
      sm90::wgmma_wait<0>();
      sm90::fence_regs(a);
      // Causal mask (column <= row), the exact diagonal, then the accumulators as the bf16 A
      // operand of A v.
#pragma unroll
      for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int c = 8 * j + 2 * (lane & 3) + (e & 1), r = row + 8 * (e >> 1);
          if (c > r) a[4 * j + e] = 0.f;
          if (c == r) a[4 * j + e] = self[r] + self[kChunk + r];
        }
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        af[kk][0] = ptx::pack_bf16(a[8 * kk + 0], a[8 * kk + 1]);
        af[kk][1] = ptx::pack_bf16(a[8 * kk + 2], a[8 * kk + 3]);
        af[kk][2] = ptx::pack_bf16(a[8 * kk + 4], a[8 * kk + 5]);
        af[kk][3] = ptx::pack_bf16(a[8 * kk + 6], a[8 * kk + 7]);
      }
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) sm90::fence_regs(af[kk]);
    }  // } sass:output.fast
    // o = q~ S_n (S_n MN-major: 64-column atoms of K rows), then o += A v (v MN-major, atoms
    // 8 KB apart): two groups, so S_n is released as soon as the first completes.
    float o[BV / 2];
    sm90::mbar_wait(bar.s_ready, (n - first) & 1);
    sm90::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < K / 16; ++kk)
      sm90::wgmma_ss<Major::K, Major::MN, BV>(sm90::sw128_desc(qt + (kk >> 2) * 8192 + (kk & 3) * 32),
                                              sm90::sw128_desc(s_tile + kk * 2048, K * 128, 1024), o, kk > 0);
    sm90::wgmma_commit();
    if (!slow) {  // sass:output.fast {
#pragma unroll
      for (int kk = 0; kk < kChunk / 16; ++kk)
        sm90::wgmma_rs<Major::MN, BV>(af[kk], sm90::sw128_desc(st + L::kV + kk * 2048, 8192, 1024), o, true);
    } else {  // } sass:output.fast  sass:output.slow {
#pragma unroll
      for (int kk = 0; kk < kChunk / 16; ++kk)
        sm90::wgmma_ss<Major::K, Major::MN, BV>(sm90::sw128_desc(kt + kk * 32),
                                                sm90::sw128_desc(st + L::kV + kk * 2048, 8192, 1024), o, true);
    }  // } sass:output.slow
    sm90::wgmma_commit();
    sm90::wgmma_wait<1>();
    __syncwarp();
    if (lane == 0) sm90::mbar_arrive(bar.s_free);
    sm90::wgmma_wait<0>();
    sm90::fence_regs(o);
    __syncwarp();
    if (lane == 0) sm90::mbar_arrive(&bar.empty[s]);
    if (t == 0 && n + S < end) {
      sm90::mbar_wait(&bar.empty[s], (n / S) & 1);  // the state warpgroup is done with it too
      load_chunk<K, BV, S>(p, smem, bar, n + S, first, b, h, v0, t_base);
    }

    if constexpr (kVarlen) {
      // A sequence's partial last chunk: its own rows by plain stores (a TMA box would also
      // write the next sequence's).
      if (n == end - 1 && last_rows < kChunk) {
#pragma unroll
        for (int e = 0; e < BV / 2; e += 2) {
          const int c = 8 * (e >> 2) + 2 * (lane & 3), r = row + 8 * ((e >> 1) & 1);
          if (r < last_rows)
            *reinterpret_cast<std::uint32_t*>(p.o + ((long long)(t_base + n * kChunk + r) * p.H + h) * p.V + v0 + c) =
                ptx::pack_bf16(o[e] * p.scale, o[e + 1] * p.scale);
        }
        continue;
      }
    }
    // o * scale as bf16 into the staging tile (the previous chunk's store has read it), then
    // one TMA store per 64 columns; rows past T are not written.
    if (t == 0) sm90::bulk_wait_read_all();  // sass:output.store {
    sm90::named_sync(kOutputBarrier, 128);
#pragma unroll
    for (int e = 0; e < BV / 2; e += 2) {
      const int c = 8 * (e >> 2) + 2 * (lane & 3), r = row + 8 * ((e >> 1) & 1);
      pair_ref(out, r, c, kChunk) = ptx::pack_bf16(o[e] * p.scale, o[e + 1] * p.scale);
    }
    sm90::fence_proxy_async();
    sm90::named_sync(kOutputBarrier, 128);
    if (t == 0) {
#pragma unroll
      for (int a4 = 0; a4 < BV / 64; ++a4)
        sm90::tma_store_4d(&p.o_map, out + a4 * 8192, v0 + a4 * 64, t_base + n * kChunk, h, b);
      sm90::bulk_commit();
    }  // } sass:output.store
  }  // } sass:output.chunk
  if (t == 0) sm90::bulk_wait_all();
}

// ---- the kernels ----------------------------------------------------------------------------
// One walk (Walk) by the four roles.
template <int K, int BV, int S, bool kSave, bool kVarlen>
__device__ __forceinline__ void run_walk(const Params& p, const Walk& w) {
  using L = Layout<K, BV, S>;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  // The 128-byte swizzle repeats every 1024 bytes: every tile starts on such a boundary.
  // (Pointer arithmetic on the shared array, so the compiler keeps shared-memory instructions.)
  // This is sm90::aligned_smem written out: calling the helper instead changes this kernel's
  // register allocation (ptxas, CUDA 13.0: 424 more SASS instructions, a larger stack frame), and
  // the model's instruction table and the measurements are of this code.
  unsigned char* smem = smem_raw + ((1024 - (ptx::smem_addr(smem_raw) & 1023)) & 1023);
  std::uint64_t* bars = reinterpret_cast<std::uint64_t*>(smem + L::kBars);
  const Barriers bar{bars, bars + S, bars + 2 * S, bars + 3 * S, bars + 3 * S + 1};
  // The warpgroup index, broadcast so the compiler knows each role's branch is warp-uniform.
  const int wg = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x / 128), 0);

  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      sm90::mbar_init(&bar.full[s], 1);
      sm90::mbar_init(&bar.prepared[s], gla::PingpongFusedLayout::kGatingThreads);
      sm90::mbar_init(&bar.empty[s], 8);
    }
    sm90::mbar_init(bar.s_ready, 128);
    sm90::mbar_init(bar.s_free, 4);
    sm90::mbar_init_fence();
  }
  float* diag = reinterpret_cast<float*>(smem + L::kDiag);
  for (int i = threadIdx.x; i < 4 * 256; i += kThreads) diag[i] = 0.f;
  __syncthreads();

  using R = gla::PingpongFusedLayout;
  if (wg < 2) {
    sm90::setmaxnreg_dec<R::kGatingRegs>();
    gate<K, BV, S, kVarlen>(p, smem, bar, w.first, w.end, w.last_rows);
  } else if (wg == 2) {
    sm90::setmaxnreg_inc<R::kStateRegs>();
    update_state<K, BV, S, kSave, kVarlen>(p, smem, bar, w.bh, w.v0, w.first, w.end, w.m0);
  } else {
    sm90::setmaxnreg_dec<R::kOutputRegs>();
    emit_output<K, BV, S, kVarlen>(p, smem, bar, w.b, w.h, w.v0, w.first, w.end, w.t_base, w.last_rows);
  }
}

// A dense batch: CTA (b, h, v-block, segment).
template <int K, int BV, int S, bool kSave>
__global__ void __launch_bounds__(kThreads, 1) gla_pingpong_fused_kernel(const __grid_constant__ Params p) {
  const int seg = blockIdx.x % p.segments, unit = blockIdx.x / p.segments;
  const int vb = unit % p.v_blocks, bh = unit / p.v_blocks;
  Walk w{};
  w.h = bh % p.H, w.b = bh / p.H, w.bh = bh, w.v0 = vb * BV;
  // The segment's bounds by constant indices (a select per segment), so that they stay on the
  // uniform datapath: a runtime-indexed parameter load puts every loop counter derived from them
  // in per-thread registers (measured in the SASS mix: about 50 more ALU instructions per chunk).
  w.first = 0, w.end = p.num_chunks;
#pragma unroll
  for (int i = 0; i < gla::PingpongFusedSegments::kMax; ++i)
    if (i == seg) w.first = p.bounds[i], w.end = p.bounds[i + 1];
  w.t_base = 0, w.last_rows = kChunk, w.m0 = 0;
  run_walk<K, BV, S, kSave, false>(p, w);
}

// A variable-length batch (gla_varlen.hpp): CTA (r, h, v-block) walks sequence order[r] whole.
template <int K, int BV, int S, bool kSave>
__global__ void __launch_bounds__(kThreads, 1) gla_pingpong_fused_varlen_kernel(const __grid_constant__ Params p) {
  const int vb = blockIdx.x % p.v_blocks, rh = blockIdx.x / p.v_blocks;
  const int h = rh % p.H, seq = p.varlen.order[rh / p.H];
  const gla_varlen::Sequence q = gla_varlen::sequence(p.varlen, seq);
  Walk w{};
  w.b = 0, w.h = h, w.bh = seq * p.H + h, w.v0 = vb * BV;
  w.first = 0, w.end = q.chunks;
  w.t_base = q.t_begin, w.last_rows = q.length - (q.chunks - 1) * kChunk;
  w.m0 = q.chunk0 * p.H + h * q.chunks;
  run_walk<K, BV, S, kSave, true>(p, w);
}

}  // namespace overlap::cuda::gla_pingpong_fused
