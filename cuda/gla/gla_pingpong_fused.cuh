#pragma once
// gla forward, fused state carry, Hopper warp specialization (SPEC's "pingpong" schedule).
// One CTA per (b, h, v-block) walks the chunks of its sequence with the state S in registers.
// Four warpgroups hand each chunk on through mbarriers:
//
//   gating x2 form the gated operands of a chunk ONCE, in shared memory, in place (half the rows
//             each): b = log2(e) * in-chunk cumsum of g, q~ = q 2^b, k~ = k 2^-b, and the state
//             decay D = 2^b_last per channel; one of their threads loads g into a ring of its
//             own (two slots), refilling a slot as soon as its gates are summed
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
// Numerics. q~ and k~ share one anchor, the chunk's start: q~_i . k~_j = q_i k_j 2^(b_i - b_j)
// for j <= i (the products the mask keeps are <= 1), and q~ <= q, k~ <= k 2^(-b_last). The
// diagonal of A (no decay) is q_i . k_i from the unrounded operands, so that rounding q~ and k~
// to bf16 cannot reach a row's own term (a short sequence's output is mostly that term). That is
// safe while every channel decays by at most 2^-kMaxFastDecay over the chunk, which covers the
// usual GLA gates (logsigmoid/16: about 2^-5 per chunk) by a wide margin. A chunk with stronger
// decay takes the anchored path instead (the gating warpgroup builds A itself with every factor
// 2^x, x <= 0: anchored at each 16-row sub-chunk's first row, the diagonal 16x16 blocks by
// halving anchors), the output warpgroup reads A from the chunk's g slot, and the state takes
// kd = k 2^(b_last - b) for S <- D S + kd^T v. Either way the state's keys are where k was. Strong gates (SPEC:
// about -7 per step) take it in every chunk; the GPU tests run both paths.
#include <cstdint>
#include <cuda.h>
#include <cuda_bf16.h>

#include "common/ptx_sm80.cuh"
#include "gla/gla_sm90.cuh"
#include "gla/gla_tiling.hpp"
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

struct Params {
  CUtensorMap q_map;  // bf16 {K, T, H, B}, box {64, 64, 1, 1}, 128-byte swizzle
  CUtensorMap k_map;
  CUtensorMap v_map;  // bf16 {V, T, H, B}, box {64, 64, 1, 1}, 128-byte swizzle
  CUtensorMap g_map;  // fp32 {K, T, H, B}, box {K, 64, 1, 1}, dense rows (the g ring)
  CUtensorMap o_map;  // bf16 {V, T, H, B}, box {64, 64, 1, 1}, 128-byte swizzle (stores)
  const float* h0;    // [B,H,K,V] or null
  float* hT;          // [B,H,K,V] or null
  int H, V;
  int v_blocks;    // V / block_v CTAs per head
  int num_chunks;  // ceil(T / 64)
  float scale;
};

// Shared-memory layout: offsets from the one definition in gla_tiling.hpp.
template <int K, int BV, int S>
struct Layout {
  static constexpr gla::PingpongFusedLayout L{K, BV, S};
  static constexpr int kQ = 0, kK = L.k_offset(), kV = L.v_offset();
  static constexpr int kStage = L.stage_bytes();
  static constexpr int kG = L.g_offset(), kGBytes = L.g_bytes(), kGSlots = L.kGSlots;
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
  std::uint64_t* g_full;    // [kGSlots] TMA bytes of a chunk's g landed
};

// ---- loads ----------------------------------------------------------------------------------
// The TMA loads of chunk n into its stage (issued by one output thread).
template <int K, int BV, int S>
__device__ void load_chunk(const Params& p, unsigned char* smem, const Barriers& bar, int n, int b, int h, int v0) {
  using L = Layout<K, BV, S>;
  const int s = n % S;  // sass:producer.chunk {
  sm90::mbar_arrive_expect_tx(&bar.full[s], L::kLoadBytes);
  unsigned char* st = smem + s * L::kStage;
  const int t0 = n * kChunk;
#pragma unroll
  for (int a = 0; a < K / 64; ++a) {
    sm90::tma_load_4d(st + L::kQ + a * 8192, &p.q_map, &bar.full[s], a * 64, t0, h, b);
    sm90::tma_load_4d(st + L::kK + a * 8192, &p.k_map, &bar.full[s], a * 64, t0, h, b);
  }
#pragma unroll
  for (int a = 0; a < BV / 64; ++a)
    sm90::tma_load_4d(st + L::kV + a * 8192, &p.v_map, &bar.full[s], v0 + a * 64, t0, h, b);
  // } sass:producer.chunk
}

// The TMA load of chunk n's g into its slot of the g ring (issued by one gating thread).
template <int K, int BV, int S>
__device__ __forceinline__ void load_gates(const Params& p, unsigned char* smem, const Barriers& bar, int n, int b,
                                           int h) {
  using L = Layout<K, BV, S>;
  const int j = n % L::kGSlots;
  sm90::mbar_arrive_expect_tx(&bar.g_full[j], L::kGBytes);
  sm90::tma_load_4d(smem + L::kG + j * L::kGBytes, &p.g_map, &bar.g_full[j], 0, n * kChunk, h, b);
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

// ---- gating ---------------------------------------------------------------------------------
// Gating thread t (0-255: warpgroups 0 and 1) owns one 16-byte swizzle chunk of q and k -- 8
// channels -- in R consecutive rows, so that each row is one 128-bit shared-memory access per
// operand. Warp w covers channel atom a = w / (8 / A) (A = K / 64 atoms of 64 channels) with its
// lanes as 8 chunks x 4 row groups, so that one access of the warp reads 4 whole 128-byte rows;
// the (8 / A) warps of an atom hold its 64 rows in order (R = 2A rows per thread).
template <int K>
struct GatingMap {
  static constexpr int kAtoms = K / 64, kWarpsPerAtom = 8 / kAtoms, kRows = 2 * kAtoms;
  int lane, cc, rgl, atom, wa, row0, col;
  __device__ GatingMap() {
    const int t = threadIdx.x, w = t / 32;
    lane = t & 31;
    cc = lane & 7;    // 16-byte chunk within the atom's 128-byte row
    rgl = lane >> 3;  // row group within the warp
    atom = w / kWarpsPerAtom;
    wa = w % kWarpsPerAtom;
    row0 = (wa * 4 + rgl) * kRows;
    col = atom * 64 + 8 * cc;
  }
  // Byte offset of this thread's chunk of row `row` in a 128-byte-swizzled bf16 tile of 64 rows.
  __device__ int chunk_offset(int row) const { return atom * 8192 + row * 128 + ((cc ^ (row & 7)) << 4); }
};

__device__ __forceinline__ void unpack8(const uint4& v, float (&x)[8]) {
  const std::uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 f = ptx::unpack_bf16(w[i]);
    x[2 * i] = f.x, x[2 * i + 1] = f.y;
  }
}
__device__ __forceinline__ uint4 pack8(const float (&x)[8]) {
  return make_uint4(ptx::pack_bf16(x[0], x[1]), ptx::pack_bf16(x[2], x[3]), ptx::pack_bf16(x[4], x[5]),
                    ptx::pack_bf16(x[6], x[7]));
}
__device__ __forceinline__ void load8(const float* p, float (&x)[8]) {
  const float4 a = *reinterpret_cast<const float4*>(p), b = *reinterpret_cast<const float4*>(p + 4);
  x[0] = a.x, x[1] = a.y, x[2] = a.z, x[3] = a.w, x[4] = b.x, x[5] = b.y, x[6] = b.z, x[7] = b.w;
}
__device__ __forceinline__ void store8(float* p, const float (&x)[8]) {
  *reinterpret_cast<float4*>(p) = make_float4(x[0], x[1], x[2], x[3]);
  *reinterpret_cast<float4*>(p + 4) = make_float4(x[4], x[5], x[6], x[7]);
}

template <int K, int BV, int S>
__device__ void gate(const Params& p, unsigned char* smem, const Barriers& bar, int b_idx, int h) {
  using L = Layout<K, BV, S>;
  using M = GatingMap<K>;
  constexpr int kThreads = gla::PingpongFusedLayout::kGatingThreads, R = M::kRows;
  const int t = threadIdx.x;
  const int w = t / 32;  // 0-7; warps 0-3 build A on the anchored path
  const M m;
  float* totals = reinterpret_cast<float*>(smem + L::kTotals);  // [2][kWarpsPerAtom][K] warp totals
  float* decay = reinterpret_cast<float*>(smem + L::kDecay);    // [S][K]
  float* self = reinterpret_cast<float*>(smem + L::kSelf);      // [S][2][64]
  int* flags = reinterpret_cast<int*>(smem + L::kFlags);        // [S]
  float* scratch = reinterpret_cast<float*>(smem + L::kDiag) + (w & 3) * 256;
  if (t == 0) {
    sm90::tma_prefetch_map(&p.g_map);
    for (int n = 0; n < L::kGSlots && n < p.num_chunks; ++n) load_gates<K, BV, S>(p, smem, bar, n, b_idx, h);
  }

  for (int n = 0; n < p.num_chunks; ++n) {  // sass:gating.chunk {
    const int s = n % S, j = n % L::kGSlots;
    // The stage's full barrier also says that the state and output warpgroups are done with
    // chunk n - S, whose decay, self and flag slots this chunk reuses.
    sm90::mbar_wait(&bar.g_full[j], (n / L::kGSlots) & 1);
    sm90::mbar_wait(&bar.full[s], (n / S) & 1);
    unsigned char* st = smem + s * L::kStage;
    unsigned char* q = st + L::kQ;
    unsigned char* k = st + L::kK;
    float* g = reinterpret_cast<float*>(smem + L::kG + j * L::kGBytes);

    // b = log2(e) * cumulative sum of g: this thread's rows, then the row groups above it in
    // the warp (a scan over lanes 8 apart), then the warps above it (their totals).
    float b[R][8], acc[8];
#pragma unroll
    for (int c = 0; c < 8; ++c) acc[c] = 0.f;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      load8(g + (m.row0 + r) * K + m.col, b[r]);
#pragma unroll
      for (int c = 0; c < 8; ++c) acc[c] = b[r][c] = fmaf(b[r][c], kLog2e, acc[c]);
    }
    float incl[8];
#pragma unroll
    for (int c = 0; c < 8; ++c) incl[c] = acc[c];
#pragma unroll
    for (int o = 8; o <= 16; o *= 2)
#pragma unroll
      for (int c = 0; c < 8; ++c) {
        const float up = __shfl_up_sync(0xffffffffu, incl[c], o);
        if (m.lane >= o) incl[c] += up;
      }
    float* tot = totals + (n & 1) * M::kWarpsPerAtom * K;
    if (m.rgl == 3) store8(tot + m.wa * K + m.col, incl);
    sm90::named_sync(kGatingBarrier, kThreads);  // also: every g of the slot has been read
    float carry[8], last[8];
#pragma unroll
    for (int c = 0; c < 8; ++c) carry[c] = incl[c] - acc[c], last[c] = 0.f;
#pragma unroll
    for (int wp = 0; wp < M::kWarpsPerAtom; ++wp) {
      float tv[8];
      load8(tot + wp * K + m.col, tv);
#pragma unroll
      for (int c = 0; c < 8; ++c) {
        if (wp < m.wa) carry[c] += tv[c];
        last[c] += tv[c];
      }
    }
    bool strong = false;
#pragma unroll
    for (int c = 0; c < 8; ++c) strong |= -last[c] > kMaxFastDecay;
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int c = 0; c < 8; ++c) b[r][c] += carry[c];
    const bool slow = sm90::named_sync_or(kGatingBarrier, kThreads, strong);
    if (m.wa == 0 && m.rgl == 0) {
      float d[8];
#pragma unroll
      for (int c = 0; c < 8; ++c) d[c] = ptx::exp2_approx(last[c]);
      store8(decay + s * K + m.col, d);
    }

    if (!slow) {  // sass:gating.fast {
      // Every g of the slot has been summed: chunk n + kGSlots's gates may come in.
      if (t == 0 && n + L::kGSlots < p.num_chunks) load_gates<K, BV, S>(p, smem, bar, n + L::kGSlots, b_idx, h);
      // q~ = q 2^b in place of q, k~ = k 2^-b in place of k, and this thread's share of the
      // exact diagonal q_r . k_r.
      float dots[R];
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const int off = m.chunk_offset(m.row0 + r);
        uint4& qr = *reinterpret_cast<uint4*>(q + off);
        uint4& kr = *reinterpret_cast<uint4*>(k + off);
        float qv[8], kv[8];
        unpack8(qr, qv);
        unpack8(kr, kv);
        dots[r] = 0.f;
#pragma unroll
        for (int c = 0; c < 8; ++c) {
          dots[r] = fmaf(qv[c], kv[c], dots[r]);
          qv[c] *= ptx::exp2_approx(b[r][c]);
          kv[c] *= ptx::exp2_approx(-b[r][c]);
        }
        qr = pack8(qv);
        kr = pack8(kv);
      }
      // Sum over the atom's 8 chunks (lanes 1, 2, 4 apart); each atom is one half of K.
#pragma unroll
      for (int o = 1; o < 8; o *= 2)
#pragma unroll
        for (int r = 0; r < R; ++r) dots[r] += __shfl_xor_sync(0xffffffffu, dots[r], o);
      if (m.cc < R) {
        float* half = self + (s * 2 + m.atom) * kChunk + m.row0;
#pragma unroll
        for (int r = 0; r < R; ++r)
          if (r == m.cc) half[r] = dots[r];
        if (K == 64) self[(s * 2 + 1) * kChunk + m.row0 + m.cc] = 0.f;
      }
      // } sass:gating.fast
    } else {  // sass:gating.slow {
      // b in place of g; A from the anchored products of the raw q, k; then q~ and kd in place
      // (b read back, so that b's registers are free while A is built); then A in place of b.
#pragma unroll
      for (int r = 0; r < R; ++r) store8(g + (m.row0 + r) * K + m.col, b[r]);
      sm90::named_sync(kGatingBarrier, kThreads);
      float off[6][4];
      if (w < 4)
        anchored_row_block<K>(reinterpret_cast<const bf16*>(q), reinterpret_cast<const bf16*>(k), g, w, off, scratch);
      sm90::named_sync(kGatingBarrier, kThreads);  // every warp is done reading q and k
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const int row = m.row0 + r, o = m.chunk_offset(row);
        float br[8], qv[8], kv[8];
        load8(g + row * K + m.col, br);
        uint4& qr = *reinterpret_cast<uint4*>(q + o);
        uint4& kr = *reinterpret_cast<uint4*>(k + o);
        unpack8(qr, qv);
        unpack8(kr, kv);
#pragma unroll
        for (int c = 0; c < 8; ++c) {
          qv[c] *= ptx::exp2_approx(br[c]);
          kv[c] *= ptx::exp2_approx(last[c] - br[c]);
        }
        qr = pack8(qv);
        kr = pack8(kv);
      }
      sm90::named_sync(kGatingBarrier, kThreads);  // every warp is done reading b
      if (w < 4) store_row_block(g, w, off, scratch);
    }  // } sass:gating.slow
    if (t == 0) flags[s] = slow;
    sm90::fence_proxy_async();  // the wgmmas of the other warpgroups read what was written
    sm90::mbar_arrive(&bar.prepared[s]);
    if (slow && t == 0 && n + L::kGSlots < p.num_chunks) {
      // A lives in the slot until the output warpgroup has read it (the stage's empty barrier
      // completes after the output's and the state's arrivals).
      sm90::mbar_wait(&bar.empty[s], (n / S) & 1);
      load_gates<K, BV, S>(p, smem, bar, n + L::kGSlots, b_idx, h);
    }
  }  // } sass:gating.chunk
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

template <int K, int BV, int S>
__device__ void update_state(const Params& p, unsigned char* smem, const Barriers& bar, long long state0) {
  using L = Layout<K, BV, S>;
  const int lane = threadIdx.x & 31;
  const float* decay = reinterpret_cast<const float*>(smem + L::kDecay);
  const int* flags = reinterpret_cast<const int*>(smem + L::kFlags);
  void* s_tile = smem + L::kState;
  StateTile<K, BV> S_;
  S_.load(p.h0 ? p.h0 + state0 : nullptr, p.V);
  S_.store_operand(s_tile);
  sm90::fence_proxy_async();
  sm90::mbar_arrive(bar.s_ready);

  for (int n = 0; n < p.num_chunks; ++n) {  // sass:state.chunk {
    const int s = n % S;
    sm90::mbar_wait(&bar.full[s], (n / S) & 1);
    sm90::mbar_wait(&bar.prepared[s], (n / S) & 1);
    // Single anchor: S <- D (S + k~^T v), k~ over k. Anchored path: S <- D S + kd^T v, kd over k.
    const bool slow = __shfl_sync(0xffffffffu, flags[s], 0) != 0;
    unsigned char* st = smem + s * L::kStage;
    unsigned char* keys = st + L::kK;
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
    if (n + 1 < p.num_chunks) {  // sass:state.store {
      sm90::mbar_wait(bar.s_free, n & 1);  // the output warpgroup has read S_n
      S_.store_operand(s_tile);
      sm90::fence_proxy_async();
      sm90::mbar_arrive(bar.s_ready);
    }  // } sass:state.store
  }  // } sass:state.chunk
  if (p.hT) S_.store(p.hT + state0, p.V);
}

// ---- output ---------------------------------------------------------------------------------
template <int K, int BV, int S>
__device__ void emit_output(const Params& p, unsigned char* smem, const Barriers& bar, int b, int h, int v0) {
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
    for (int n = 0; n < S && n < p.num_chunks; ++n) load_chunk<K, BV, S>(p, smem, bar, n, b, h, v0);
  }
  for (int n = 0; n < p.num_chunks; ++n) {  // sass:output.chunk {
    const int s = n % S;
    sm90::mbar_wait(&bar.full[s], (n / S) & 1);
    sm90::mbar_wait(&bar.prepared[s], (n / S) & 1);
    // Warp-uniform by construction (one flag per chunk); the shuffle lets the compiler see it,
    // so the wgmmas under it are not serialized as if in a divergent branch.
    const bool slow = __shfl_sync(0xffffffffu, flags[s], 0) != 0;
    unsigned char* st = smem + s * L::kStage;
    unsigned char* qt = st + L::kQ;  // q~
    // k~ (fast path) or A (anchored path, in the chunk's g slot)
    unsigned char* kt = slow ? smem + L::kG + (n % L::kGSlots) * L::kGBytes : st + L::kK;

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
    sm90::mbar_wait(bar.s_ready, n & 1);
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
    if (t == 0 && n + S < p.num_chunks) {
      sm90::mbar_wait(&bar.empty[s], (n / S) & 1);  // the state warpgroup is done with it too
      load_chunk<K, BV, S>(p, smem, bar, n + S, b, h, v0);
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
      for (int a4 = 0; a4 < BV / 64; ++a4) sm90::tma_store_4d(&p.o_map, out + a4 * 8192, v0 + a4 * 64, n * kChunk, h, b);
      sm90::bulk_commit();
    }  // } sass:output.store
  }  // } sass:output.chunk
  if (t == 0) sm90::bulk_wait_all();
}

// ---- the kernel -----------------------------------------------------------------------------
template <int K, int BV, int S>
__global__ void __launch_bounds__(kThreads, 1) gla_pingpong_fused_kernel(const __grid_constant__ Params p) {
  using L = Layout<K, BV, S>;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  // The 128-byte swizzle repeats every 1024 bytes: every tile starts on such a boundary.
  // (Pointer arithmetic on the shared array, so the compiler keeps shared-memory instructions.)
  unsigned char* smem = smem_raw + ((1024 - (ptx::smem_addr(smem_raw) & 1023)) & 1023);
  std::uint64_t* bars = reinterpret_cast<std::uint64_t*>(smem + L::kBars);
  const Barriers bar{bars, bars + S, bars + 2 * S, bars + 3 * S, bars + 3 * S + 1, bars + 3 * S + 2};
  static_assert(L::L.barriers() == 3 * S + 2 + L::kGSlots, "barrier count and layout disagree");
  const int vb = blockIdx.x % p.v_blocks, bh = blockIdx.x / p.v_blocks;
  const int h = bh % p.H, b = bh / p.H, v0 = vb * BV;
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
    for (int j = 0; j < L::kGSlots; ++j) sm90::mbar_init(&bar.g_full[j], 1);
    sm90::mbar_init_fence();
  }
  float* diag = reinterpret_cast<float*>(smem + L::kDiag);
  for (int i = threadIdx.x; i < 4 * 256; i += kThreads) diag[i] = 0.f;
  __syncthreads();

  using R = gla::PingpongFusedLayout;
  if (wg < 2) {
    sm90::setmaxnreg_dec<R::kGatingRegs>();
    gate<K, BV, S>(p, smem, bar, b, h);
  } else if (wg == 2) {
    sm90::setmaxnreg_inc<R::kStateRegs>();
    update_state<K, BV, S>(p, smem, bar, ((long long)b * p.H + h) * K * p.V + v0);
  } else {
    sm90::setmaxnreg_dec<R::kOutputRegs>();
    emit_output<K, BV, S>(p, smem, bar, b, h, v0);
  }
}

}  // namespace overlap::cuda::gla_pingpong_fused
