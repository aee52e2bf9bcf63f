#pragma once
// The chunked gla forward kernel (SPEC section 1), one template for the sequential and the
// pipelined schedules and for every pass of both state carries:
//
//   Pass::Fused    one CTA per (b, h, v-block) walks all chunks; S stays in registers.
//   Pass::States   materialized carry, kernel 1: walks the chunks, writes each entry state
//                  S_n (bf16, the exact operand the output GEMM uses) and hT; reads no q.
//   Pass::Outputs  materialized carry, kernel 2: chunks in parallel, o from q, k, v, g, S_n.
//
// Stages = 1 is the sequential schedule (load, then compute); Stages = 2 prefetches chunk
// n+1 with cp.async while chunk n is computed.
//
// Eight warps in two roles that overlap inside each chunk:
//   output warps 0-3: warp w owns rows 16w..16w+15 (one anchoring sub-chunk): the intra-chunk
//                     matrix left of its diagonal block, the inter-chunk GEMM, then A V;
//   state warps 4-7:  warp 4+w builds the diagonal 16x16 block of A for output warp w, then
//                     updates rows w*K/4.. of the state S (fp32, in registers).
// All GEMMs are bf16 mma.sync with fp32 accumulation.
//
// Numerics: every decay factor the kernel forms is 2^x with x <= 0, so nothing overflows
// whatever the gates are. With b the in-chunk cumulative sum of g (times log2 e):
//   inter-chunk   q_i 2^{b_i}            and  S_n
//   state update  k_j 2^{b_last - b_j}   and  2^{b_last} S_n
//   intra-chunk, j in an earlier sub-chunk than i: anchored at r = first row of i's
//                 sub-chunk, q_i 2^{b_i - b_r} . k_j 2^{b_r - b_j}
//   intra-chunk, j and i in the same 16-row sub-chunk: split by the highest bit where the
//                 local indices differ (levels h = 8, 4, 2, 1); at level h the anchor is the
//                 first row of i's half-block, which lies between j and i. Plus the diagonal.
#include <cstdint>
#include <cuda_bf16.h>

#include "common/mma_operands.cuh"
#include "common/ptx_sm80.cuh"
#include "gla/gla_gate_cumsum.cuh"
#include "gla/gla_tiling.hpp"

namespace overlap::cuda::gla_kernel {

using bf16 = __nv_bfloat16;
namespace ptx = overlap::cuda::ptx;

enum class Pass { Fused, States, Outputs };

constexpr int kChunk = 64;
constexpr int kBlockV = 64;
constexpr int kOutputWarps = 4;  // = kChunk / 16
constexpr int kStateWarps = 4;
constexpr int kWarps = kOutputWarps + kStateWarps;
constexpr int kThreads = 32 * kWarps;

struct Params {
  const bf16* q;
  const bf16* k;
  const bf16* v;
  const float* g;
  const float* h0;  // [B,H,K,V] or null (S_0 = 0)
  float* hT;        // [B,H,K,V] or null
  bf16* o;          // [B,T,H,V]
  bf16* states;     // [B,H,NT,K,V]: S_n entering chunk n (materialized carry; fused: saved if set)
  int T, H, V;
  int num_chunks;      // NT = ceil(T / C)
  int chunks_per_cta;  // Outputs pass only
  float scale;
};

// Shared-memory layout, derived from the one tiling definition (gla_tiling.hpp).
template <int K, int Stages>
struct Layout {
  static constexpr int kQkLd = gla::Tiling::padded_bf16(K);
  static constexpr int kVLd = gla::Tiling::padded_bf16(kBlockV);
  static constexpr int kGLd = gla::Tiling::padded_f32(K);
  static constexpr int kQ = 0;
  static constexpr int kK = kQ + kChunk * kQkLd * 2;
  static constexpr int kV = kK + kChunk * kQkLd * 2;
  static constexpr int kG = kV + kChunk * kVLd * 2;
  static constexpr int kS = kG + kChunk * kGLd * 4;
  static constexpr int kStageBytes = kS + K * kVLd * 2;
  static constexpr int kDecayedKeys = kStageBytes * Stages;
  static constexpr int kDiag = kDecayedKeys + kChunk * kQkLd * 2;
  static constexpr int kScanTotals = kDiag + kOutputWarps * 16 * 16 * 4;
  static constexpr int kBytes = kScanTotals + kThreads * 4;
};

template <int K, int Stages>
struct Stage {
  bf16* q;
  bf16* k;
  bf16* v;
  float* b;  // g on arrival, then log2(e) * in-chunk cumsum
  bf16* s;   // S_n in bf16
  __device__ Stage(unsigned char* smem, int index) {
    using L = Layout<K, Stages>;
    unsigned char* base = smem + index * L::kStageBytes;
    q = reinterpret_cast<bf16*>(base + L::kQ);
    k = reinterpret_cast<bf16*>(base + L::kK);
    v = reinterpret_cast<bf16*>(base + L::kV);
    b = reinterpret_cast<float*>(base + L::kG);
    s = reinterpret_cast<bf16*>(base + L::kS);
  }
};

// Where one CTA's (b, h, v-block) slice starts in each tensor.
struct Slice {
  long long qk_row0;  // element offset of (b, t=0, h, 0) in q, k, g
  long long v_row0;   // element offset of (b, t=0, h, v0) in v, o
  long long state0;   // element offset of (b, h, 0, v0) in h0, hT
  long long states0;  // element offset of (b, h, n=0, 0, v0) in states
};

template <int K>
__device__ __forceinline__ Slice slice_of(const Params& p, int b, int h, int v0) {
  Slice s;
  s.qk_row0 = ((long long)b * p.T * p.H + h) * K;
  s.v_row0 = ((long long)b * p.T * p.H + h) * p.V + v0;
  s.state0 = ((long long)b * p.H + h) * K * p.V + v0;
  s.states0 = ((long long)b * p.H + h) * p.num_chunks * K * p.V + v0;
  return s;
}

// Issues the cp.async copies of chunk n into a stage. Rows past T arrive as zeros: zero k and
// v add nothing to the state, zero g keeps b_last at the last real step.
template <int K, int Stages, Pass P>
__device__ void load_chunk(const Params& p, const Slice& sl, const Stage<K, Stages>& st, int n) {
  using L = Layout<K, Stages>;
  const int tid = threadIdx.x;
  const int t0 = n * kChunk;
  const long long qk_stride = (long long)p.H * K;
  const long long v_stride = (long long)p.H * p.V;
  constexpr int kQkPieces = K / 8;  // 16-byte pieces per bf16 row
  for (int idx = tid; idx < kChunk * kQkPieces; idx += kThreads) {
    const int r = idx / kQkPieces, c = (idx % kQkPieces) * 8;
    const bool in = t0 + r < p.T;
    const long long off = sl.qk_row0 + (in ? t0 + r : 0) * qk_stride + c;
    if constexpr (P != Pass::States) ptx::cp_async_16(st.q + r * L::kQkLd + c, p.q + off, in ? 16 : 0);
    ptx::cp_async_16(st.k + r * L::kQkLd + c, p.k + off, in ? 16 : 0);
  }
  constexpr int kVPieces = kBlockV / 8;
  for (int idx = tid; idx < kChunk * kVPieces; idx += kThreads) {
    const int r = idx / kVPieces, c = (idx % kVPieces) * 8;
    const bool in = t0 + r < p.T;
    ptx::cp_async_16(st.v + r * L::kVLd + c, p.v + sl.v_row0 + (in ? t0 + r : 0) * v_stride + c,
                     in ? 16 : 0);
  }
  constexpr int kGPieces = K / 4;
  for (int idx = tid; idx < kChunk * kGPieces; idx += kThreads) {
    const int r = idx / kGPieces, c = (idx % kGPieces) * 4;
    const bool in = t0 + r < p.T;
    ptx::cp_async_16(st.b + r * L::kGLd + c, p.g + sl.qk_row0 + (in ? t0 + r : 0) * qk_stride + c,
                     in ? 16 : 0);
  }
  if constexpr (P == Pass::Outputs) {
    const bf16* src = p.states + sl.states0 + (long long)n * K * p.V;
    for (int idx = tid; idx < K * kVPieces; idx += kThreads) {
      const int r = idx / kVPieces, c = (idx % kVPieces) * 8;
      ptx::cp_async_16(st.s + r * L::kVLd + c, src + (long long)r * p.V + c, 16);
    }
  }
}

// g -> b = log2(e) * inclusive cumulative sum over the chunk's rows, in place (`totals`:
// kThreads floats).
template <int K, int Stages>
__device__ void cumsum_gates(float* b, float* totals) {
  gla_gates::cumsum_log2<K, kThreads, kChunk>(b, Layout<K, Stages>::kGLd, totals);
}

// x[row][col..col+1] * 2^(b[row] - b[anchor]) (queries) or 2^(b[anchor] - b[row]) (keys),
// packed as bf16x2. anchor < 0 stands for b = 0 (the chunk's start).
template <int K, int Stages, bool kKeySide>
__device__ __forceinline__ std::uint32_t decayed_pair(const bf16* x, const float* b, int row, int anchor,
                                                      int col) {
  using L = Layout<K, Stages>;
  const float2 xv = ptx::unpack_bf16(*reinterpret_cast<const std::uint32_t*>(x + row * L::kQkLd + col));
  const float2 br = *reinterpret_cast<const float2*>(b + row * L::kGLd + col);
  const float2 ba =
      anchor >= 0 ? *reinterpret_cast<const float2*>(b + anchor * L::kGLd + col) : make_float2(0.f, 0.f);
  const float e0 = kKeySide ? ba.x - br.x : br.x - ba.x;
  const float e1 = kKeySide ? ba.y - br.y : br.y - ba.y;
  return ptx::pack_bf16(xv.x * ptx::exp2_approx(e0), xv.y * ptx::exp2_approx(e1));
}

template <int K, int Stages>
__device__ __forceinline__ std::uint32_t plain_pair(const bf16* x, int row, int col) {
  using L = Layout<K, Stages>;
  return *reinterpret_cast<const std::uint32_t*>(x + row * L::kQkLd + col);
}

// Fills a warp's 16x16 scratch with the diagonal block of the intra-chunk matrix
// A[i][j] = sum_k q_ik k_jk 2^{b_ik - b_jk}, j <= i, rows/cols i0..i0+15 (lower triangle;
// the upper triangle stays zero from the kernel's start).
template <int K, int Stages>
__device__ void diagonal_block(const Stage<K, Stages>& st, int i0, float* scratch) {
  const int lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3;
#pragma unroll
  for (int h = 8; h >= 1; h >>= 1) {
    // Rows with bit h set pair with columns with bit h clear in the same 2h-block.
    const int jl = (gq / h) * 2 * h + (gq % h);  // this lane's B column -> local key index
    const int anchor_b = i0 + (jl & ~(2 * h - 1)) + h;
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int kc = 0; kc < K; kc += 16) {
      // Only rows with bit h set are kept. At h = 1 their anchor is the row itself (factor 1);
      // at h = 8 rows 0-7 (this lane's first row) are dropped: plain q, no exponentials.
      std::uint32_t a[4];
      const int r0 = gq, r1 = gq + 8;
      if (h == 1 || h == 8) {
        a[0] = plain_pair<K, Stages>(st.q, i0 + r0, kc + 2 * tq);
        a[2] = plain_pair<K, Stages>(st.q, i0 + r0, kc + 2 * tq + 8);
      } else {
        a[0] = decayed_pair<K, Stages, false>(st.q, st.b, i0 + r0, i0 + (r0 & ~(h - 1)), kc + 2 * tq);
        a[2] = decayed_pair<K, Stages, false>(st.q, st.b, i0 + r0, i0 + (r0 & ~(h - 1)), kc + 2 * tq + 8);
      }
      if (h == 1) {
        a[1] = plain_pair<K, Stages>(st.q, i0 + r1, kc + 2 * tq);
        a[3] = plain_pair<K, Stages>(st.q, i0 + r1, kc + 2 * tq + 8);
      } else {
        a[1] = decayed_pair<K, Stages, false>(st.q, st.b, i0 + r1, i0 + (r1 & ~(h - 1)), kc + 2 * tq);
        a[3] = decayed_pair<K, Stages, false>(st.q, st.b, i0 + r1, i0 + (r1 & ~(h - 1)), kc + 2 * tq + 8);
      }
      const std::uint32_t b0 = decayed_pair<K, Stages, true>(st.k, st.b, i0 + jl, anchor_b, kc + 2 * tq);
      const std::uint32_t b1 = decayed_pair<K, Stages, true>(st.k, st.b, i0 + jl, anchor_b, kc + 2 * tq + 8);
      ptx::mma_bf16_16816(acc, a, b0, b1);
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
  // The diagonal: q_i . k_i, no decay.
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int kc = 0; kc < K; kc += 16) {
      std::uint32_t a[4];
      a[0] = plain_pair<K, Stages>(st.q, i0 + gq, kc + 2 * tq);
      a[1] = plain_pair<K, Stages>(st.q, i0 + gq + 8, kc + 2 * tq);
      a[2] = plain_pair<K, Stages>(st.q, i0 + gq, kc + 2 * tq + 8);
      a[3] = plain_pair<K, Stages>(st.q, i0 + gq + 8, kc + 2 * tq + 8);
      const int j = i0 + half * 8 + gq;
      ptx::mma_bf16_16816(acc, a, plain_pair<K, Stages>(st.k, j, kc + 2 * tq),
                          plain_pair<K, Stages>(st.k, j, kc + 2 * tq + 8));
    }
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int il = gq + (e >> 1) * 8;
      const int j = half * 8 + 2 * tq + (e & 1);
      if (j == il) scratch[il * 16 + j] = acc[e];
    }
  }
}

// What an output warp carries from the first half of a chunk to the second: the intra-chunk
// matrix left of its diagonal block and the output accumulator.
struct OutputRegs {
  float a_off[6][4];
  float acc[kBlockV / 8][4];
};

// Output warp w, first half: A[16w.., 0..16w) anchored at row 16w, and (q_i 2^{b_i}) S_n.
template <int K, int Stages>
__device__ void output_first_half(OutputRegs& r, const Stage<K, Stages>& st, const bf16* s_n) {
  using L = Layout<K, Stages>;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3;
  const int i0 = warp * 16;
#pragma unroll
  for (int jt = 0; jt < 6; ++jt)
#pragma unroll
    for (int e = 0; e < 4; ++e) r.a_off[jt][e] = 0.f;
  if (warp > 0) {
#pragma unroll
    for (int kc = 0; kc < K; kc += 16) {
      std::uint32_t a[4];
      a[0] = decayed_pair<K, Stages, false>(st.q, st.b, i0 + gq, i0, kc + 2 * tq);
      a[1] = decayed_pair<K, Stages, false>(st.q, st.b, i0 + gq + 8, i0, kc + 2 * tq);
      a[2] = decayed_pair<K, Stages, false>(st.q, st.b, i0 + gq, i0, kc + 2 * tq + 8);
      a[3] = decayed_pair<K, Stages, false>(st.q, st.b, i0 + gq + 8, i0, kc + 2 * tq + 8);
#pragma unroll
      for (int jt = 0; jt < 6; ++jt) {
        if (jt < 2 * warp) {
          const int j = jt * 8 + gq;
          ptx::mma_bf16_16816(r.a_off[jt], a, decayed_pair<K, Stages, true>(st.k, st.b, j, i0, kc + 2 * tq),
                              decayed_pair<K, Stages, true>(st.k, st.b, j, i0, kc + 2 * tq + 8));
        }
      }
    }
  }

#pragma unroll
  for (int nt = 0; nt < kBlockV / 8; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) r.acc[nt][e] = 0.f;
#pragma unroll
  for (int kc = 0; kc < K; kc += 16) {
    std::uint32_t a[4];
    a[0] = decayed_pair<K, Stages, false>(st.q, st.b, i0 + gq, -1, kc + 2 * tq);
    a[1] = decayed_pair<K, Stages, false>(st.q, st.b, i0 + gq + 8, -1, kc + 2 * tq);
    a[2] = decayed_pair<K, Stages, false>(st.q, st.b, i0 + gq, -1, kc + 2 * tq + 8);
    a[3] = decayed_pair<K, Stages, false>(st.q, st.b, i0 + gq + 8, -1, kc + 2 * tq + 8);
    mma::mma_b_rows(r.acc, a, s_n, L::kVLd, 0, kc);
  }
}

// Output warp w, second half: + A V over key sub-chunks 0..w (the diagonal block from the
// state warp's scratch), times the scale, stored as bf16.
template <int K, int Stages>
__device__ void output_second_half(OutputRegs& r, const Params& p, const Slice& sl, const Stage<K, Stages>& st,
                                   int n, const float* scratch) {
  using L = Layout<K, Stages>;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3;
  const int i0 = warp * 16;
#pragma unroll
  for (int sc = 0; sc < 4; ++sc) {
    if (sc > warp) break;
    std::uint32_t a[4];
    if (sc < warp) {
      a[0] = ptx::pack_bf16(r.a_off[2 * sc][0], r.a_off[2 * sc][1]);
      a[1] = ptx::pack_bf16(r.a_off[2 * sc][2], r.a_off[2 * sc][3]);
      a[2] = ptx::pack_bf16(r.a_off[2 * sc + 1][0], r.a_off[2 * sc + 1][1]);
      a[3] = ptx::pack_bf16(r.a_off[2 * sc + 1][2], r.a_off[2 * sc + 1][3]);
    } else {
      a[0] = ptx::pack_bf16(scratch[gq * 16 + 2 * tq], scratch[gq * 16 + 2 * tq + 1]);
      a[1] = ptx::pack_bf16(scratch[(gq + 8) * 16 + 2 * tq], scratch[(gq + 8) * 16 + 2 * tq + 1]);
      a[2] = ptx::pack_bf16(scratch[gq * 16 + 2 * tq + 8], scratch[gq * 16 + 2 * tq + 9]);
      a[3] = ptx::pack_bf16(scratch[(gq + 8) * 16 + 2 * tq + 8], scratch[(gq + 8) * 16 + 2 * tq + 9]);
    }
    mma::mma_b_rows(r.acc, a, st.v, L::kVLd, 0, sc * 16);
  }

  const long long v_stride = (long long)p.H * p.V;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int t = n * kChunk + i0 + gq + half * 8;
    if (t >= p.T) continue;
    bf16* row = p.o + sl.v_row0 + t * v_stride;
#pragma unroll
    for (int nt = 0; nt < kBlockV / 8; ++nt) {
      *reinterpret_cast<std::uint32_t*>(row + nt * 8 + 2 * tq) =
          ptx::pack_bf16(r.acc[nt][2 * half] * p.scale, r.acc[nt][2 * half + 1] * p.scale);
    }
  }
}

// The state rows a state warp owns: K/4 rows as K/64 m-tiles of 16, each 16 x block_v in fp32
// mma accumulators.
template <int K>
struct StateRegs {
  static constexpr int kMTiles = K / 64;
  float s[kMTiles][kBlockV / 8][4];
  __device__ int row(int mt, int e) const {
    return ((threadIdx.x >> 5) - kOutputWarps) * (K / 4) + mt * 16 + ((threadIdx.x & 31) >> 2) + (e >> 1) * 8;
  }
  __device__ int col(int nt, int e) const { return nt * 8 + 2 * ((threadIdx.x & 31) & 3) + (e & 1); }

  // S_0 = h0 (fp32 [K, V] slice starting at `src`, row stride V) or zero.
  __device__ void load(const float* src, int ld) {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int nt = 0; nt < kBlockV / 8; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[mt][nt][e] = src ? src[(long long)row(mt, e) * ld + col(nt, e)] : 0.f;
  }
  __device__ void store(float* dst, int ld) const {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int nt = 0; nt < kBlockV / 8; ++nt)
#pragma unroll
        for (int e = 0; e < 4; e += 2)
          *reinterpret_cast<float2*>(dst + (long long)row(mt, e) * ld + col(nt, e)) =
              make_float2(s[mt][nt][e], s[mt][nt][e + 1]);
  }
  // bf16 copy (row stride ld elements), in shared or global memory.
  __device__ void store_bf16(bf16* dst, long long ld) const {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int nt = 0; nt < kBlockV / 8; ++nt)
#pragma unroll
        for (int e = 0; e < 4; e += 2)
          *reinterpret_cast<std::uint32_t*>(dst + row(mt, e) * ld + col(nt, e)) =
              ptx::pack_bf16(s[mt][nt][e], s[mt][nt][e + 1]);
  }
};

// kd[j][k] = k_jk 2^{b_last,k - b_jk}: the keys decayed to the chunk's end (all threads).
template <int K, int Stages>
__device__ void decay_keys(const Stage<K, Stages>& st, bf16* kd) {
  using L = Layout<K, Stages>;
  for (int idx = threadIdx.x; idx < kChunk * K / 2; idx += kThreads) {
    const int j = idx / (K / 2), c = (idx % (K / 2)) * 2;
    *reinterpret_cast<std::uint32_t*>(kd + j * L::kQkLd + c) =
        decayed_pair<K, Stages, true>(st.k, st.b, j, kChunk - 1, c);
  }
}

// S <- diag(2^{b_last}) S + kd^T v.
template <int K, int Stages>
__device__ void update_state(StateRegs<K>& S, const Stage<K, Stages>& st, const bf16* kd) {
  using L = Layout<K, Stages>;
  const float* b_last = st.b + (kChunk - 1) * L::kGLd;
#pragma unroll
  for (int mt = 0; mt < StateRegs<K>::kMTiles; ++mt) {
    const float d0 = ptx::exp2_approx(b_last[S.row(mt, 0)]);
    const float d1 = ptx::exp2_approx(b_last[S.row(mt, 2)]);
#pragma unroll
    for (int nt = 0; nt < kBlockV / 8; ++nt) {
      S.s[mt][nt][0] *= d0;
      S.s[mt][nt][1] *= d0;
      S.s[mt][nt][2] *= d1;
      S.s[mt][nt][3] *= d1;
    }
  }
  const int m_base = ((threadIdx.x >> 5) - kOutputWarps) * (K / 4);
#pragma unroll
  for (int kc = 0; kc < kChunk; kc += 16) {
#pragma unroll
    for (int mt = 0; mt < StateRegs<K>::kMTiles; ++mt) {
      std::uint32_t a[4];
      mma::a_cols(a, kd, L::kQkLd, m_base + mt * 16, kc);
      mma::mma_b_rows(S.s[mt], a, st.v, L::kVLd, 0, kc);
    }
  }
}

// The output pass holds no state in registers: where its shared memory lets two CTAs share an
// SM (227 KB), it is capped at 128 registers so that they do.
template <int K, int Stages, Pass P>
constexpr int kMinBlocksPerSm = P == Pass::Outputs && 2 * Layout<K, Stages>::kBytes <= 227 * 1024 ? 2 : 1;

template <int K, int Stages, Pass P>
__global__ void __launch_bounds__(kThreads, (kMinBlocksPerSm<K, Stages, P>)) gla_chunk_kernel(const Params p) {
  using L = Layout<K, Stages>;
  extern __shared__ __align__(128) unsigned char smem[];
  const int v_blocks = p.V / kBlockV;
  const int vb = blockIdx.x % v_blocks;
  const int h = blockIdx.y, b = blockIdx.z;
  const Slice sl = slice_of<K>(p, b, h, vb * kBlockV);
  int n_begin = 0, n_end = p.num_chunks;
  if constexpr (P == Pass::Outputs) {
    n_begin = (blockIdx.x / v_blocks) * p.chunks_per_cta;
    n_end = min(n_begin + p.chunks_per_cta, p.num_chunks);
  }
  const int count = n_end - n_begin;
  const int warp = threadIdx.x >> 5;
  const bool output_warp = warp < kOutputWarps;
  const int block = output_warp ? warp : warp - kOutputWarps;  // the 16-row block it serves

  bf16* kd = reinterpret_cast<bf16*>(smem + L::kDecayedKeys);
  float* totals = reinterpret_cast<float*>(smem + L::kScanTotals);
  float* scratch = reinterpret_cast<float*>(smem + L::kDiag) + block * 256;
  // The fused carry keeps S_n (bf16, for the output warps) in stage 0's state buffer: the
  // output warps read it before the mid-chunk barrier, the state warps rewrite it after.
  bf16* s_fused = Stage<K, Stages>(smem, 0).s;
  if (!output_warp)
    for (int e = threadIdx.x & 31; e < 256; e += 32) scratch[e] = 0.f;  // upper triangle stays 0

  StateRegs<K> S;
  if constexpr (P != Pass::Outputs) {
    if (!output_warp) {
      S.load(p.h0 ? p.h0 + sl.state0 : nullptr, p.V);
      if constexpr (P == Pass::Fused) S.store_bf16(s_fused, L::kVLd);
    }
  }

#pragma unroll
  for (int s = 0; s < Stages; ++s) {
    if (s < count) load_chunk<K, Stages, P>(p, sl, Stage<K, Stages>(smem, s), n_begin + s);
    ptx::cp_async_commit();
  }
  OutputRegs out;
  // Warps w and w + 4 share scheduler w % 4: each phase's two roles run side by side there.
  // sass-beside: first.out=out.first/state.diagonal
  // sass-beside: first.state=state.diagonal/out.first
  // sass-beside: second.out=out.second/state.update
  // sass-beside: second.state=state.update/out.second
  for (int it = 0; it < count; ++it) {
    const int n = n_begin + it;
    const Stage<K, Stages> st(smem, it % Stages);
    ptx::cp_async_wait<Stages - 1>();  // sass:all.wait {
    __syncthreads();                    // } sass:all.wait
    cumsum_gates<K, Stages>(st.b, totals);  // sass:all.cumsum {
    __syncthreads();                        // } sass:all.cumsum
    if constexpr (P != Pass::Outputs) decay_keys<K, Stages>(st, kd);  // sass:all.decay_keys.loop {}
    if constexpr (P == Pass::States) {
      if (!output_warp) S.store_bf16(p.states + sl.states0 + (long long)n * K * p.V, p.V);  // sass:state.save {}
    } else {
      // The fused carry saves S_n where the caller asks (gla_backward's saved_states).
      if (P == Pass::Fused && p.states && !output_warp)
        S.store_bf16(p.states + sl.states0 + (long long)n * K * p.V, p.V);  // sass:state.save {}
      if (output_warp) output_first_half<K, Stages>(out, st, P == Pass::Fused ? s_fused : st.s);  // sass:out.first {}
      else diagonal_block<K, Stages>(st, block * 16, scratch);  // sass:state.diagonal {}
    }
    __syncthreads();  // sass:all.mid {} kd and the diagonal blocks are ready; S_n has been read
    if constexpr (P != Pass::States) {
      if (output_warp) output_second_half<K, Stages>(out, p, sl, st, n, scratch);  // sass:out.second {}
    }
    if constexpr (P != Pass::Outputs) {
      if (!output_warp) {
        update_state<K, Stages>(S, st, kd);                        // sass:state.update {
        if constexpr (P == Pass::Fused) S.store_bf16(s_fused, L::kVLd);  // } sass:state.update
      }
    }
    __syncthreads();  // sass:all.load { every warp is done with this stage (and kd) before they are refilled
    if (it + Stages < count) load_chunk<K, Stages, P>(p, sl, st, n + Stages);
    ptx::cp_async_commit();  // } sass:all.load
  }
  if constexpr (P != Pass::Outputs) {
    if (!output_warp && p.hT) S.store(p.hT + sl.state0, p.V);
  }
}

}  // namespace overlap::cuda::gla_kernel
