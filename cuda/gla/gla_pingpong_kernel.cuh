#pragma once
// The pingpong gla forward kernels of the materialized carry (SPEC section 1, Hopper warp
// specialization), in the "paired" form: each consumer warpgroup walks its own work unit. (The
// fused carry has its own kernel, gla_pingpong_fused.cuh.)
//
//   Pass::States   kernel 1: a consumer warpgroup walks all chunks of one (b, h, v-block)
//                  slice with S in its registers; writes every entry state S_n (bf16) and hT.
//   Pass::Outputs  kernel 2: a consumer warpgroup takes a group of chunks of one slice; S_n
//                  arrives with each chunk.
//
// Roles (384 threads): warpgroup 0 is the producer: after setmaxnreg gives its registers
// away, one thread issues every TMA load into a ring of shared-memory stages, each guarded by
// a "full" mbarrier (transaction bytes) and an "empty" one (the consumers' threads).
// Warpgroups 1 and 2 are consumers with 240 registers each.
//
// Paired form: where there are no more work units than SMs, the launcher gives each CTA one
// unit (consumer 1 idles, consumer 0 takes the whole ring): the units then spread over twice
// as many SMs, which measured faster than pairing them (docs/results/gla_h100.md).
//
// Why the paired consumers take two independent units: the state pass is a recurrence along
// the chunks of one slice, so one slice's chunks cannot be split between two warpgroups
// without a hand-off per chunk; two slices (another head, or the other V-block of the same
// head) have no dependence at all.
// Each consumer alternates element-wise phases (cumulative sum of the gates, decayed keys and
// queries, the diagonal blocks on mma.sync) with wgmma phases; while one is in its
// element-wise phase the other's wgmmas run, which is FlashAttention-3's pingpong with the
// warp schedulers doing the alternation.
//
// Per chunk (C = 64 rows; warp w of a consumer owns query rows 16w..16w+15, exactly the rows
// wgmma's m64 gives it), with b the in-chunk cumsum of g times log2 e:
//   G1  A_J = (q_i 2^{b_i - b_e(J)}) (k_j 2^{b_e(J) - b_j})^T  for key sub-chunks J = 0..2,
//             e(J) = last row of J, rows i of later sub-chunks only: wgmma m64n16, A from
//             registers (the query factor depends on J), B = keys decayed to the end of
//             their own sub-chunk (one smem buffer for every J)
//   E2  the 16x16 diagonal blocks (hierarchical anchors, as the mma.sync kernel) on mma.sync
//   G2  o   = (q_i 2^{b_i}) S_n + A V                wgmma m64n64, A from registers
//   G3  S   = 2^{b_last} S + (k_j 2^{b_last - b_j})^T V   wgmma m64n64, both from smem
// Every factor 2^x has x <= 0: nothing overflows whatever the gates.
#include <cstdint>
#include <cuda.h>
#include <cuda_bf16.h>

#include "common/ptx_sm80.cuh"
#include "common/sm90_ptx.cuh"
#include "gla/gla_tiling.hpp"

namespace overlap::cuda::gla_pingpong {

using bf16 = __nv_bfloat16;
namespace ptx = overlap::cuda::ptx;

enum class Pass { States, Outputs };

constexpr int kChunk = 64;
constexpr int kBlockV = 64;
constexpr int kConsumers = 2;
constexpr int kThreads = 128 * (1 + kConsumers);
constexpr int kProducerRegs = gla::kPingpongProducerRegs;
constexpr int kConsumerRegs = 240;
constexpr float kLog2e = 1.4426950408889634f;

constexpr gla::Tiling tiling_of(int K, Pass p) {
  (void)p;
  return gla::tiling_for(gla::Schedule::Pingpong, gla::StateCarry::Materialized, K, kBlockV);
}

struct Params {
  CUtensorMap q_map;  // bf16 {K, T, H, B}, box {64, 64, 1, 1}, 128-byte swizzle
  CUtensorMap k_map;
  CUtensorMap v_map;  // bf16 {V, T, H, B}, box {64, 64, 1, 1}
  CUtensorMap g_map;  // fp32 {K, T, H, B}, box {32, 64, 1, 1}
  CUtensorMap s_map;  // bf16 states {V, K, NT, B*H}, box {64, K, 1, 1}: stored (States), loaded (Outputs)
  const float* h0;    // [B,H,K,V] or null
  float* hT;          // [B,H,K,V] or null
  bf16* o;            // [B,T,H,V]
  bf16* states;       // [B,H,NT,K,V], through s_map
  int B, T, H, V;
  int num_chunks;
  int chunks_per_cta;  // Outputs pass: chunks per work unit
  int units;           // work units (slices, or slice x chunk group)
  int units_per_cta;   // 2: both consumers busy; 1: consumer 1 idles (few units, more SMs)
  float scale;
};

// Shared memory, from the one tiling definition: the ring (stage = q, k, v, g [, S_n]), then
// per consumer the 1024-aligned decayed keys, then the small buffers (diagonal blocks, cumsum
// totals), then the mbarriers.
template <int K, Pass P>
struct Layout {
  static constexpr gla::Tiling kTiling = tiling_of(K, P);
  static constexpr int kStages = kTiling.stages;
  static constexpr int kQ = 0;  // C x K bf16 as K/64 boxes of 64 x 64 (8 KB)
  static constexpr int kK = kQ + kChunk * K * 2;
  static constexpr int kV = kK + kChunk * K * 2;  // C x 64 bf16
  static constexpr int kG = kV + kChunk * kBlockV * 2;  // C x K fp32 as K/32 boxes of 64 x 32
  static constexpr int kS = kG + kChunk * K * 4;  // K x 64 bf16 (materialized carry)
  static constexpr int kStageBytes = kS + K * kBlockV * 2;
  static constexpr int kRing = kStageBytes * kStages;
  static constexpr int kKdBytes = kChunk * K * 2;
  static constexpr int kKd = kRing;
  static constexpr int kDiag = kKd + kConsumers * kKdBytes;  // 4 x 16 x 16 fp32 per consumer
  static constexpr int kTotals = kDiag + kConsumers * 4 * 256 * 4;  // 128 floats per consumer
  static constexpr int kBars = kTotals + kConsumers * 128 * 4;
  static constexpr int kBytes = kBars + 2 * 8 * kStages + 1024;  // + alignment slack
  static_assert(kStageBytes % 1024 == 0 && kKdBytes % 1024 == 0, "swizzled tiles need 1024-byte alignment");
  static_assert(kStages % kConsumers == 0, "each consumer owns stages of the ring");
  static constexpr unsigned kLoadBytes(bool with_q) {
    return (with_q ? kChunk * K * 2 : 0) + kChunk * K * 2 + kChunk * kBlockV * 2 + kChunk * K * 4 +
           (P == Pass::Outputs ? K * kBlockV * 2 : 0);
  }
};

// Byte offset of element (r, c) in a 128-byte-swizzled tile as TMA writes it: bf16 rows in
// boxes of 64 columns, fp32 rows in boxes of 32, each box `rows` x 128 bytes.
__device__ __forceinline__ int sw_bf16(int r, int c, int rows = kChunk) {
  return (c >> 6) * (rows * 128) + r * 128 + ((((c & 63) >> 3) ^ (r & 7)) << 4) + ((c & 7) << 1);
}
__device__ __forceinline__ int sw_f32(int r, int c) {
  return (c >> 5) * (kChunk * 128) + r * 128 + ((((c & 31) >> 2) ^ (r & 7)) << 4) + ((c & 3) << 2);
}
__device__ __forceinline__ std::uint32_t ld_pair(const unsigned char* t, int r, int c) {
  return *reinterpret_cast<const std::uint32_t*>(t + sw_bf16(r, c));
}
__device__ __forceinline__ float2 ld_b(const unsigned char* b, int r, int c) {
  return *reinterpret_cast<const float2*>(b + sw_f32(r, c));
}
// x[row][col..col+1] * 2^(b[row] - b[anchor]) (queries) or 2^(b[anchor] - b[row]) (keys) as
// bf16x2; anchor < 0 stands for b = 0 (the chunk's start).
template <bool kKeySide>
__device__ __forceinline__ std::uint32_t decayed(const unsigned char* x, const unsigned char* b, int row, int anchor,
                                                 int col) {
  const float2 xv = ptx::unpack_bf16(ld_pair(x, row, col));
  const float2 br = ld_b(b, row, col);
  const float2 ba = anchor >= 0 ? ld_b(b, anchor, col) : make_float2(0.f, 0.f);
  const float e0 = kKeySide ? ba.x - br.x : br.x - ba.x;
  const float e1 = kKeySide ? ba.y - br.y : br.y - ba.y;
  return ptx::pack_bf16(xv.x * ptx::exp2_approx(e0), xv.y * ptx::exp2_approx(e1));
}

// The calling consumer's position.
struct Lane {
  int t;     // 0..127 within the consumer warpgroup
  int warp;  // 0..3
  int gq, tq;
  __device__ Lane() : t(threadIdx.x & 127), warp((threadIdx.x >> 5) & 3), gq((threadIdx.x & 31) >> 2), tq(threadIdx.x & 3) {}
};

// g -> b = log2(e) * inclusive cumulative sum over the chunk's rows, in place (128 threads).
template <int K>
__device__ void cumsum_gates(unsigned char* g, float* totals, int bar) {
  constexpr int kParts = 128 / K;
  constexpr int kRows = kChunk / kParts;
  const int t = threadIdx.x & 127, c = t % K, part = t / K;
  if constexpr (kParts == 1) {
    // One column per thread: rows in batches of 16 so that each batch's loads are in flight
    // together rather than one dependent round trip per row.
    float acc = 0.f;
#pragma unroll 1
    for (int r0 = 0; r0 < kChunk; r0 += 16) {  // sass:paired.cumsum.loops {
      float vals[16];
#pragma unroll
      for (int r = 0; r < 16; ++r) vals[r] = *reinterpret_cast<const float*>(g + sw_f32(r0 + r, c));
#pragma unroll
      for (int r = 0; r < 16; ++r) {
        acc += vals[r] * kLog2e;
        vals[r] = acc;
      }
#pragma unroll
      for (int r = 0; r < 16; ++r) *reinterpret_cast<float*>(g + sw_f32(r0 + r, c)) = vals[r];
    }  // } sass:paired.cumsum.loops
  } else {
    float vals[kRows];
    float acc = 0.f;
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      acc += *reinterpret_cast<const float*>(g + sw_f32(part * kRows + r, c)) * kLog2e;
      vals[r] = acc;
    }
    totals[part * K + c] = acc;
    sm90::named_sync(bar, 128);
    float carry = 0.f;
#pragma unroll
    for (int q = 0; q < kParts - 1; ++q)
      if (q < part) carry += totals[q * K + c];
#pragma unroll
    for (int r = 0; r < kRows; ++r) *reinterpret_cast<float*>(g + sw_f32(part * kRows + r, c)) = vals[r] + carry;
  }
}

// kd[j][c] = k_jc 2^{b_anchor(j),c - b_jc}, anchor(j) = last row of j's sub-chunk (kToEnd =
// false) or of the chunk (true), written in the swizzled K-major layout wgmma reads.
template <int K, bool kToEnd>
__device__ void decay_keys(const unsigned char* k, const unsigned char* b, unsigned char* kd) {
  const int t = threadIdx.x & 127;
#pragma unroll 4
  for (int idx = t; idx < kChunk * K / 2; idx += 128) {  // sass:paired.decay_keys.loops {
    const int j = idx / (K / 2), c = (idx % (K / 2)) * 2;
    *reinterpret_cast<std::uint32_t*>(kd + sw_bf16(j, c)) = decayed<true>(k, b, j, kToEnd ? kChunk - 1 : (j | 15), c);
  }  // } sass:paired.decay_keys.loops
}

// The warp's diagonal 16x16 block of the intra-chunk matrix, A[i][j] for j <= i in sub-chunk
// w, into its fp32 scratch (upper triangle left at zero). Within a sub-chunk, pairs are split
// by the highest bit where their local indices differ (levels h = 8, 4, 2, 1); at level h the
// anchor is the first row of i's half-block, which lies between j and i. Plus the diagonal.
template <int K>
__device__ void diagonal_block(const unsigned char* q, const unsigned char* k, const unsigned char* b, const Lane& l,
                               float* scratch) {
  const int i0 = 16 * l.warp, gq = l.gq, tq = l.tq;
#pragma unroll
  for (int h = 8; h >= 1; h >>= 1) {  // sass:paired.diagonal_levels.loops {
    const int jl = (gq / h) * 2 * h + (gq % h);  // this lane's B column -> local key index
    const int anchor_b = i0 + (jl & ~(2 * h - 1)) + h;
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll(K == 64 ? 4 : 2)  // full unroll spills at K = 128
    for (int kc = 0; kc < K; kc += 16) {
      std::uint32_t a[4];
      const int r0 = gq, r1 = gq + 8;
      if (h == 1 || h == 8) {  // anchor = the row itself (h = 1), or rows 0-7 dropped (h = 8)
        a[0] = ld_pair(q, i0 + r0, kc + 2 * tq);
        a[2] = ld_pair(q, i0 + r0, kc + 2 * tq + 8);
      } else {
        a[0] = decayed<false>(q, b, i0 + r0, i0 + (r0 & ~(h - 1)), kc + 2 * tq);
        a[2] = decayed<false>(q, b, i0 + r0, i0 + (r0 & ~(h - 1)), kc + 2 * tq + 8);
      }
      if (h == 1) {
        a[1] = ld_pair(q, i0 + r1, kc + 2 * tq);
        a[3] = ld_pair(q, i0 + r1, kc + 2 * tq + 8);
      } else {
        a[1] = decayed<false>(q, b, i0 + r1, i0 + (r1 & ~(h - 1)), kc + 2 * tq);
        a[3] = decayed<false>(q, b, i0 + r1, i0 + (r1 & ~(h - 1)), kc + 2 * tq + 8);
      }
      const std::uint32_t b0 = decayed<true>(k, b, i0 + jl, anchor_b, kc + 2 * tq);
      const std::uint32_t b1 = decayed<true>(k, b, i0 + jl, anchor_b, kc + 2 * tq + 8);
      ptx::mma_bf16_16816(acc, a, b0, b1);
    }
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int il = gq + (e >> 1) * 8;
      const int c = 2 * tq + (e & 1);
      const int j = (c / h) * 2 * h + (c % h);
      if ((il & h) && (j & ~(2 * h - 1)) == (il & ~(2 * h - 1))) scratch[il * 16 + j] = acc[e];
    }
  }  // } sass:paired.diagonal_levels.loops
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int kc = 0; kc < K; kc += 16) {
      std::uint32_t a[4];
      a[0] = ld_pair(q, i0 + gq, kc + 2 * tq);
      a[1] = ld_pair(q, i0 + gq + 8, kc + 2 * tq);
      a[2] = ld_pair(q, i0 + gq, kc + 2 * tq + 8);
      a[3] = ld_pair(q, i0 + gq + 8, kc + 2 * tq + 8);
      const int j = i0 + half * 8 + gq;
      ptx::mma_bf16_16816(acc, a, ld_pair(k, j, kc + 2 * tq), ld_pair(k, j, kc + 2 * tq + 8));
    }
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int il = gq + (e >> 1) * 8;
      const int j = half * 8 + 2 * tq + (e & 1);
      if (j == il) scratch[il * 16 + j] = acc[e];
    }
  }
}

// G1 for the warp's 16 query rows: acc_a[J] = the off-diagonal block of the intra-chunk
// matrix against key sub-chunk J (m64n16 wgmma per J, waited for), and qe = q_i 2^{b_i}, the
// A operand of the inter-chunk GEMM (G2).
template <int K>
__device__ __forceinline__ void intra_off_diagonal(float (&acc_a)[3][8], std::uint32_t (&qe)[K / 16][4],
                                                   const unsigned char* q, const unsigned char* b,
                                                   const unsigned char* kd, const Lane& l) {
  // Every query operand of the warp comes from one anchored copy u = q_i 2^{b_i - b_a},
  // a = the warp's first row, times a per-column factor that is also <= 1: 2^{b_a - b_e(J)}
  // (e(J) < a) for A_J, 2^{b_a} for q 2^b. Head dims in groups of 64 (one swizzle box):
  // the three groups of a box run back to back, their operands live until one wait.
  const int a = 16 * l.warp;
#pragma unroll
  for (int box = 0; box < K / 64; ++box) {
    std::uint32_t aj[3][4][4];
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      const int ks = 4 * box + kk, ca = 16 * ks + 2 * l.tq;
      const float2 ba[2] = {ld_b(b, a, ca), ld_b(b, a, ca + 8)};
      float u[8];  // fragment order: (r, ca), (r + 8, ca), (r, ca + 8), (r + 8, ca + 8)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int r = a + l.gq + 8 * (e & 1), c = ca + 8 * (e >> 1);
        const float2 x = ptx::unpack_bf16(ld_pair(q, r, c));
        const float2 br = ld_b(b, r, c);
        u[2 * e] = x.x * ptx::exp2_approx(br.x - ba[e >> 1].x);
        u[2 * e + 1] = x.y * ptx::exp2_approx(br.y - ba[e >> 1].y);
      }
      float2 f[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) f[h] = make_float2(ptx::exp2_approx(ba[h].x), ptx::exp2_approx(ba[h].y));
#pragma unroll
      for (int e = 0; e < 4; ++e) qe[ks][e] = ptx::pack_bf16(u[2 * e] * f[e >> 1].x, u[2 * e + 1] * f[e >> 1].y);
#pragma unroll
      for (int J = 0; J < 3; ++J) {
        if (l.warp > J) {
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const float2 be = ld_b(b, 16 * J + 15, ca + 8 * h);
            f[h] = make_float2(ptx::exp2_approx(ba[h].x - be.x), ptx::exp2_approx(ba[h].y - be.y));
          }
#pragma unroll
          for (int e = 0; e < 4; ++e)
            aj[J][kk][e] = ptx::pack_bf16(u[2 * e] * f[e >> 1].x, u[2 * e + 1] * f[e >> 1].y);
        } else {
          aj[J][kk][0] = aj[J][kk][1] = aj[J][kk][2] = aj[J][kk][3] = 0u;
        }
      }
    }
#pragma unroll
    for (int J = 0; J < 3; ++J) {
      sm90::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < 4; ++kk)
        sm90::wgmma_m64n16k16_rs(acc_a[J], aj[J][kk], sm90::sw128_desc(kd + box * 8192 + J * 2048 + kk * 32),
                                 box > 0 || kk > 0);
      sm90::wgmma_commit();
    }
    sm90::wgmma_wait<0>();
#pragma unroll
    for (int J = 0; J < 3; ++J) {
      sm90::fence_regs(acc_a[J]);
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) sm90::fence_regs(aj[J][kk]);
    }
  }
}

// G2, issued and committed (the caller then calls finish_output_gemms): o = qe S_n + A v,
// A's key blocks left of the diagonal from G1 (acc_a), the diagonal block from the warp's
// scratch, zeros right of it. s_n: bf16 S_n, swizzled [k][v]; v: swizzled [j][v].
template <int K>
__device__ __forceinline__ void issue_output_gemms(float (&acc_o)[32], std::uint32_t (&am)[4][4],
                                                   const std::uint32_t (&qe)[K / 16][4], const float (&acc_a)[3][8],
                                                   const float* scratch, const unsigned char* s_n,
                                                   const unsigned char* v, const Lane& l) {
#pragma unroll
  for (int sc = 0; sc < 4; ++sc) {
    if (sc < l.warp) {
      const float* x = acc_a[sc < 3 ? sc : 2];
      am[sc][0] = ptx::pack_bf16(x[0], x[1]);
      am[sc][1] = ptx::pack_bf16(x[2], x[3]);
      am[sc][2] = ptx::pack_bf16(x[4], x[5]);
      am[sc][3] = ptx::pack_bf16(x[6], x[7]);
    } else if (sc == l.warp) {
      const int r = l.gq, cc = 2 * l.tq;
      am[sc][0] = ptx::pack_bf16(scratch[r * 16 + cc], scratch[r * 16 + cc + 1]);
      am[sc][1] = ptx::pack_bf16(scratch[(r + 8) * 16 + cc], scratch[(r + 8) * 16 + cc + 1]);
      am[sc][2] = ptx::pack_bf16(scratch[r * 16 + cc + 8], scratch[r * 16 + cc + 9]);
      am[sc][3] = ptx::pack_bf16(scratch[(r + 8) * 16 + cc + 8], scratch[(r + 8) * 16 + cc + 9]);
    } else {
      am[sc][0] = am[sc][1] = am[sc][2] = am[sc][3] = 0u;
    }
  }
  sm90::wgmma_fence();
#pragma unroll
  for (int ks = 0; ks < K / 16; ++ks)
    sm90::wgmma_m64n64k16_rs<1>(acc_o, qe[ks], sm90::sw128_desc(s_n + ks * 2048), ks > 0);
#pragma unroll
  for (int sc = 0; sc < 4; ++sc) sm90::wgmma_m64n64k16_rs<1>(acc_o, am[sc], sm90::sw128_desc(v + sc * 2048), 1);
  sm90::wgmma_commit();
}

// Waits for G2 and fences the registers its wgmmas read or wrote (acc_o, qe, am), so that no
// later instruction touches them while the asynchronous MMAs might still be using them.
template <int K>
__device__ __forceinline__ void finish_output_gemms(float (&acc_o)[32], std::uint32_t (&am)[4][4],
                                                    std::uint32_t (&qe)[K / 16][4]) {
  sm90::wgmma_wait<0>();
  sm90::fence_regs(acc_o);
#pragma unroll
  for (int ks = 0; ks < K / 16; ++ks) sm90::fence_regs(qe[ks]);
#pragma unroll
  for (int sc = 0; sc < 4; ++sc) sm90::fence_regs(am[sc]);
}

// o rows of chunk n owned by the warp, times the scale, as bf16 (rows past T skipped).
__device__ __forceinline__ void store_o(const Params& p, const float (&acc_o)[32], long long v_row0, int n,
                                        const Lane& l) {
  const long long v_stride = (long long)p.H * p.V;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int t = n * kChunk + 16 * l.warp + l.gq + 8 * half;
    if (t >= p.T) continue;
    bf16* row = p.o + v_row0 + t * v_stride;
#pragma unroll
    for (int nt = 0; nt < kBlockV / 8; ++nt)
      *reinterpret_cast<std::uint32_t*>(row + nt * 8 + 2 * l.tq) =
          ptx::pack_bf16(acc_o[4 * nt + 2 * half] * p.scale, acc_o[4 * nt + 2 * half + 1] * p.scale);
  }
}

// The fp32 state S (K x 64) of one consumer in wgmma accumulator layout: K/64 m64 tiles;
// element e of tile mt is row 64mt + 16w + gq + 8((e>>1)&1), column 8(e>>2) + 2tq + (e&1).
template <int K>
struct State {
  static constexpr int kTiles = K / 64;
  float s[kTiles][32];
  __device__ static int row(const Lane& l, int mt, int e) { return 64 * mt + 16 * l.warp + l.gq + 8 * ((e >> 1) & 1); }
  __device__ static int col(const Lane& l, int e) { return 8 * (e >> 2) + 2 * l.tq + (e & 1); }

  __device__ void load(const Lane& l, const float* src, int ld) {
#pragma unroll
    for (int mt = 0; mt < kTiles; ++mt)
#pragma unroll
      for (int e = 0; e < 32; ++e) s[mt][e] = src ? src[(long long)row(l, mt, e) * ld + col(l, e)] : 0.f;
  }
  __device__ void store(const Lane& l, float* dst, int ld) const {
#pragma unroll
    for (int mt = 0; mt < kTiles; ++mt)
#pragma unroll
      for (int e = 0; e < 32; e += 2)
        *reinterpret_cast<float2*>(dst + (long long)row(l, mt, e) * ld + col(l, e)) = make_float2(s[mt][e], s[mt][e + 1]);
  }
  // bf16 copy in the swizzled N-contiguous layout the inter-chunk wgmma reads as B.
  __device__ void store_smem_bf16(const Lane& l, unsigned char* dst) const {
#pragma unroll
    for (int mt = 0; mt < kTiles; ++mt)
#pragma unroll
      for (int e = 0; e < 32; e += 2)
        *reinterpret_cast<std::uint32_t*>(dst + sw_bf16(row(l, mt, e), col(l, e), K)) =
            ptx::pack_bf16(s[mt][e], s[mt][e + 1]);
  }
  // G3, issued (the caller waits): S <- diag(2^{b_last}) S + kd^T v, kd the keys decayed to
  // the chunk's end (swizzled [j][k], read as the MN-major A), v swizzled [j][v].
  __device__ void update(const Lane& l, const unsigned char* b, const unsigned char* kd, const unsigned char* v) {
    decay(l, b);
    sm90::wgmma_fence();
#pragma unroll
    for (int mt = 0; mt < kTiles; ++mt)
#pragma unroll
      for (int ks = 0; ks < 4; ++ks)
        sm90::wgmma_m64n64k16_ss<1, 1>(s[mt], sm90::sw128_desc(kd + mt * 8192 + ks * 2048),
                                       sm90::sw128_desc(v + ks * 2048), 1);
    sm90::wgmma_commit();
  }
  // S <- diag(2^{b_last}) S.
  __device__ void decay(const Lane& l, const unsigned char* b) {
#pragma unroll
    for (int mt = 0; mt < kTiles; ++mt) {
      const float d0 = ptx::exp2_approx(*reinterpret_cast<const float*>(b + sw_f32(kChunk - 1, row(l, mt, 0))));
      const float d1 = ptx::exp2_approx(*reinterpret_cast<const float*>(b + sw_f32(kChunk - 1, row(l, mt, 2))));
#pragma unroll
      for (int e = 0; e < 32; ++e) s[mt][e] *= ((e >> 1) & 1) ? d1 : d0;
    }
  }
};

// Work unit -> slice and chunk range.
struct Unit {
  int b, h, vb;
  int n_begin, count;
};
template <Pass P>
__device__ __forceinline__ Unit unit_of(const Params& p, int u) {
  const int v_blocks = p.V / kBlockV;
  Unit w;
  int slice = u;
  w.n_begin = 0;
  w.count = p.num_chunks;
  if constexpr (P == Pass::Outputs) {
    const int groups = (p.num_chunks + p.chunks_per_cta - 1) / p.chunks_per_cta;
    slice = u / groups;
    w.n_begin = (u % groups) * p.chunks_per_cta;
    w.count = min(p.chunks_per_cta, p.num_chunks - w.n_begin);
  }
  w.vb = slice % v_blocks;
  w.h = (slice / v_blocks) % p.H;
  w.b = slice / (v_blocks * p.H);
  return w;
}

template <int K, Pass P>
__device__ void producer(const Params& p, unsigned char* smem, std::uint64_t* full, std::uint64_t* empty) {
  using L = Layout<K, P>;
  Unit units[kConsumers];
  bool valid[kConsumers];
  int most = 0;
#pragma unroll
  for (int c = 0; c < kConsumers; ++c) {
    const int u = blockIdx.x * p.units_per_cta + c;
    valid[c] = c < p.units_per_cta && u < p.units;
    if (valid[c]) {
      units[c] = unit_of<P>(p, u);
      most = max(most, units[c].count);
    }
  }
  for (int it = 0; it < most; ++it) {
#pragma unroll
    for (int c = 0; c < kConsumers; ++c) {
      if (!valid[c] || it >= units[c].count) continue;
      const Unit& w = units[c];
      const int spc = L::kStages / p.units_per_cta;  // stages per busy consumer
      const int s = c * spc + it % spc;
      const int use = it / spc;
      sm90::mbar_wait(&empty[s], (use & 1) ^ 1);
      sm90::mbar_arrive_expect_tx(&full[s], L::kLoadBytes(P != Pass::States));
      unsigned char* st = smem + s * L::kStageBytes;
      const int n = w.n_begin + it, t0 = n * kChunk;
#pragma unroll
      for (int box = 0; box < K / 64; ++box) {
        if constexpr (P != Pass::States)
          sm90::tma_load_4d(st + L::kQ + box * 8192, &p.q_map, &full[s], box * 64, t0, w.h, w.b);
        sm90::tma_load_4d(st + L::kK + box * 8192, &p.k_map, &full[s], box * 64, t0, w.h, w.b);
      }
      sm90::tma_load_4d(st + L::kV, &p.v_map, &full[s], w.vb * kBlockV, t0, w.h, w.b);
#pragma unroll
      for (int box = 0; box < K / 32; ++box)
        sm90::tma_load_4d(st + L::kG + box * 8192, &p.g_map, &full[s], box * 32, t0, w.h, w.b);
      if constexpr (P == Pass::Outputs)
        sm90::tma_load_4d(st + L::kS, &p.s_map, &full[s], w.vb * kBlockV, 0, n, w.b * p.H + w.h);
    }
  }
}

// The producer warpgroup's part of every pingpong kernel: it gives its registers to the
// consumers, then one thread prefetches the tensor maps and issues every load.
template <int K, Pass P>
__device__ __forceinline__ void producer_warpgroup(const Params& p, unsigned char* smem, std::uint64_t* full,
                                                   std::uint64_t* empty) {
  sm90::setmaxnreg_dec<kProducerRegs>();
  if (threadIdx.x != 0) return;
  sm90::tma_prefetch_map(&p.q_map);
  sm90::tma_prefetch_map(&p.k_map);
  sm90::tma_prefetch_map(&p.v_map);
  sm90::tma_prefetch_map(&p.g_map);
  producer<K, P>(p, smem, full, empty);
}

template <int K, Pass P>
__device__ void consumer(const Params& p, unsigned char* smem, std::uint64_t* full, std::uint64_t* empty, int c) {
  using L = Layout<K, P>;
  const int u = blockIdx.x * p.units_per_cta + c;
  if (c >= p.units_per_cta || u >= p.units) return;
  const Unit w = unit_of<P>(p, u);
  const Lane l;
  const int bar = 1 + c;  // named barrier of this consumer's 128 threads
  unsigned char* kd = smem + L::kKd + c * L::kKdBytes;
  float* scratch = reinterpret_cast<float*>(smem + L::kDiag) + (c * 4 + l.warp) * 256;
  float* totals = reinterpret_cast<float*>(smem + L::kTotals) + c * 128;
  const long long v_row0 = ((long long)w.b * p.T * p.H + w.h) * p.V + w.vb * kBlockV;
  const long long state0 = ((long long)w.b * p.H + w.h) * K * p.V + w.vb * kBlockV;

  for (int e = l.t & 31; e < 256; e += 32) scratch[e] = 0.f;  // upper triangle stays zero
  __syncwarp();

  State<K> S;
  if constexpr (P == Pass::States) S.load(l, p.h0 ? p.h0 + state0 : nullptr, p.V);

  // Regions `paired.*` (tools/sass_mix.py): the per-chunk work the model charges; the `.loops`
  // regions are loops ptxas keeps rolled at some K (counted per pass of their bodies).
  for (int it = 0; it < w.count; ++it) {  // sass:paired.chunk {
    const int n = w.n_begin + it;
    const int spc = L::kStages / p.units_per_cta;  // a lone consumer takes the whole ring
    const int s = c * spc + it % spc;
    unsigned char* st = smem + s * L::kStageBytes;
    const unsigned char* q = st + L::kQ;
    const unsigned char* k = st + L::kK;
    const unsigned char* v = st + L::kV;
    unsigned char* b = st + L::kG;
    sm90::mbar_wait(&full[s], (it / spc) & 1);  // sass:paired.wait {}

    // S_n goes out through the stage's S slot (unused by this pass) and one TMA store: per-thread
    // stores of S's fragments (16 B to each of 8 rows a warp instruction) backed up the store
    // path, the F2FPs that packed the next pairs waiting for the registers the STGs still held.
    if constexpr (P == Pass::States) {  // sass:paired.states_out {
      S.store_smem_bf16(l, st + L::kS);  // the layout of an s_map box
      sm90::fence_proxy_async();         // visible to the TMA unit after the barrier below
    }  // } sass:paired.states_out
    cumsum_gates<K>(b, totals, bar);  // sass:paired.cumsum {}
    sm90::named_sync(bar, 128);  // b complete (and every thread's part of S_n written)
    if constexpr (P == Pass::States) {
      if (l.t == 0) {  // sass:paired.states_out {
        sm90::tma_store_4d(&p.s_map, st + L::kS, w.vb * kBlockV, 0, n, w.b * p.H + w.h);
        sm90::bulk_commit();
      }  // } sass:paired.states_out
    }
    decay_keys<K, P == Pass::States>(k, b, kd);  // sass:paired.decay_keys {}
    sm90::fence_proxy_async();
    sm90::named_sync(bar, 128);  // decayed keys visible to wgmma

    float acc_o[32];
    if constexpr (P != Pass::States) {
      // G1: the off-diagonal blocks of the intra-chunk matrix, one wgmma group per key
      // sub-chunk J (the query operand depends on J).
      float acc_a[3][8];
      std::uint32_t qe[K / 16][4];  // q_i 2^{b_i}: A of the inter-chunk GEMM in G2
      intra_off_diagonal<K>(acc_a, qe, q, b, kd, l);  // sass:paired.g1 {}

      // E2: the diagonal block on mma.sync.
      diagonal_block<K>(q, k, b, l, scratch);  // sass:paired.diagonal {}
      __syncwarp();

      // G2: o = (q 2^b) S_n + A V, A's key blocks left of the diagonal from G1, the diagonal
      // from scratch, S_n from the stage.
      std::uint32_t am[4][4];
      issue_output_gemms<K>(acc_o, am, qe, acc_a, scratch, st + L::kS, v, l);  // sass:paired.g2 {
      finish_output_gemms<K>(acc_o, am, qe);  // } sass:paired.g2
    } else {
      S.update(l, b, kd, v);  // sass:paired.update {
      sm90::wgmma_wait<0>();  // } sass:paired.update
    }
    if constexpr (P == Pass::States) {
#pragma unroll
      for (int mt = 0; mt < State<K>::kTiles; ++mt) sm90::fence_regs(S.s[mt]);
    }
    // Every read of this stage is done (the S_n store's too, for the thread that issued it); the
    // fence orders this thread's in-place writes of b before the TMA unit's next write of the stage.
    if constexpr (P == Pass::States) {
      if (l.t == 0) sm90::bulk_wait_read_all();  // sass:paired.states_out {}
    }
    sm90::fence_proxy_async();
    sm90::mbar_arrive(&empty[s]);

    if constexpr (P == Pass::Outputs) store_o(p, acc_o, v_row0, n, l);  // sass:paired.store_o {}
    // The next chunk starts with the cumsum's barrier before any shared kd is read.
  }  // } sass:paired.chunk
  if constexpr (P == Pass::States) {
    if (p.hT) S.store(l, p.hT + state0, p.V);
  }
}

template <int K, Pass P>
__global__ void __launch_bounds__(kThreads, 1) gla_pingpong_kernel(const __grid_constant__ Params p) {
  using L = Layout<K, P>;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  unsigned char* smem = sm90::aligned_smem(smem_raw);
  auto* full = reinterpret_cast<std::uint64_t*>(smem + L::kBars);
  std::uint64_t* empty = full + L::kStages;
  if (threadIdx.x == 0) {
    for (int s = 0; s < L::kStages; ++s) {
      sm90::mbar_init(&full[s], 1);
      sm90::mbar_init(&empty[s], 128);
    }
    sm90::mbar_init_fence();
  }
  __syncthreads();
  const int wg = threadIdx.x / 128;
  if (wg == 0) {
    producer_warpgroup<K, P>(p, smem, full, empty);
  } else {
    sm90::setmaxnreg_inc<kConsumerRegs>();
    consumer<K, P>(p, smem, full, empty, wg - 1);
  }
}

}  // namespace overlap::cuda::gla_pingpong
