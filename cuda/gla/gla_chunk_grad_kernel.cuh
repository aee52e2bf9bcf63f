#pragma once
// gla backward, pass 3 (gla_backward_common.cuh): one CTA per (b, h, chunk) turns the chunk's
// q, k, v, g, do, its entry state S_n and the gradient at its end dS_n into dq, dk, dv, dg.
// With b the in-chunk cumulative log2-gate, D_{t,j} = 2^{b_t - b_j} (j <= t) and s the scale:
//   dA_{t,j} = s <do_t, v_j> (j <= t)          A_{t,j} = s <q_t D_{t,j}, k_j>
//   dq_t = s 2^{b_t} (S_n do_t)  + sum_j dA_{t,j} D_{t,j} k_j
//   dk_j = 2^{b_last-b_j} (dS_n v_j) + sum_t dA_{t,j} D_{t,j} q_t
//   dv_j = dS_n^T (k_j 2^{b_last-b_j}) + sum_t A_{t,j} do_t
//   dg_t = 2^{b_last} R_n + sum_{u >= t in chunk} (q_u dq_u - k_u dk_u) + sum_j k_j dk^inter_j
//
// Numerics: no factor formed is 2^x with x > 0. Pairs in different 16-row sub-chunks are split
// at an anchor row r between them, D_{t,j} = 2^{b_t - b_r} 2^{b_r - b_j}, so those sums are
// tensor-core GEMMs of decayed operands; pairs inside one sub-chunk are summed directly.
//
// Eight warps, phases separated by barriers:
//   A  warps 0-3: dA for rows 16w.. (do v^T);  warps 4-7: A for rows 16(w-4)..
//   B  warps 0-3: dq for rows 16w..;           warps 4-7: dk for rows 16(w-4)..
//   E  q dq - k dk through shared memory, reverse-summed per column -> dg
//   D  all warps: dv for rows 16(w%4).., V columns half w/4
#include "gla/gla_backward_common.cuh"

namespace overlap::cuda::gla_backward_kernel {

constexpr int kChunkGradWarps = 8;
constexpr int kChunkGradThreads = 32 * kChunkGradWarps;

template <int K, int V>
struct ChunkGradLayout {
  static constexpr int kQkLd = K + 8;
  static constexpr int kVLd = V + 8;
  static constexpr int kBLd = K + 4;
  static constexpr int kCLd = kChunk + 8;
  static constexpr int kQ = 0;
  static constexpr int kK = kQ + kChunk * kQkLd * 2;
  static constexpr int kDo = kK + kChunk * kQkLd * 2;
  static constexpr int kB = kDo + kChunk * kVLd * 2;
  static constexpr int kDS = kB + kChunk * kBLd * 4;
  static constexpr int kA = kDS + K * kVLd * 2;  // A, bf16, zero above the diagonal
  // Needed only until dq and dk are formed; then reused for q dq - k dk (fp32 [C][K]).
  static constexpr int kSn = kA + kChunk * kCLd * 2;
  static constexpr int kV = kSn + K * kVLd * 2;
  static constexpr int kDA = kV + kChunk * kVLd * 2;       // dA, bf16, zero above the diagonal
  static constexpr int kDAdiag = kDA + kChunk * kCLd * 2;  // dA's diagonal 16x16 blocks, fp32
  static constexpr int kReusedEnd = kDAdiag + (kChunk / kSub) * kSub * kSub * 4;
  static constexpr int kDgLd = K + 4;
  static constexpr int kDg = kSn;
  static_assert(kDg + kChunk * kDgLd * 4 <= kReusedEnd, "q dq - k dk must fit where S_n, v and dA were");
  static constexpr int kTotals = kReusedEnd;
  static constexpr int kColSums = kTotals + kChunkGradThreads * 4;  // per dk warp: sum_j k_j * dk^inter_j
  static constexpr int kBytes = kColSums + (kChunk / kSub) * K * 4;
};

// x[row][col] * 2^{b[row][col] - b[anchor][col]} (query side) or 2^{b[anchor][col] - b[row][col]}
// (key side), for two adjacent columns as bf16x2 (an operand whose pairs run along its rows).
template <bool kKeySide>
__device__ __forceinline__ float decay(const float* b, int ldb, int row, int anchor, int col) {
  const float x = b[row * ldb + col], a = b[anchor * ldb + col];
  return ptx::exp2_approx(kKeySide ? a - x : x - a);
}
template <bool kKeySide>
__device__ __forceinline__ std::uint32_t decayed_row_pair(const bf16* x, int ldx, const float* b, int ldb, int row,
                                                          int anchor, int col) {
  const float2 xv = ptx::unpack_bf16(*reinterpret_cast<const std::uint32_t*>(x + row * ldx + col));
  return ptx::pack_bf16(xv.x * decay<kKeySide>(b, ldb, row, anchor, col),
                        xv.y * decay<kKeySide>(b, ldb, row, anchor, col + 1));
}
// The same for two adjacent rows (an operand whose pairs run down a column), as a bf16 pair and
// the bf16 pair of what that rounding lost:
// GEMMs of both carry the decayed operand to about 2^-17, so that a pair (t, j) reaches dq_t and
// dk_j with the same rounding (the sums of q dq - k dk must cancel, gla_backward_common.cuh).
template <bool kKeySide>
__device__ __forceinline__ void decayed_col_split(std::uint32_t& hi, std::uint32_t& lo, const bf16* x, int ldx,
                                                  const float* b, int ldb, int row, int anchor, int col) {
  const float x0 = __bfloat162float(x[row * ldx + col]) * decay<kKeySide>(b, ldb, row, anchor, col);
  const float x1 = __bfloat162float(x[(row + 1) * ldx + col]) * decay<kKeySide>(b, ldb, row + 1, anchor, col);
  hi = ptx::pack_bf16(x0, x1);
  const float2 h = ptx::unpack_bf16(hi);
  lo = ptx::pack_bf16(x0 - h.x, x1 - h.y);
}

template <int K, int V>
__device__ void load_chunk_grad_inputs(const Params& p, const Slice& sl, unsigned char* smem, int n) {
  using L = ChunkGradLayout<K, V>;
  constexpr int kT = kChunkGradThreads;
  const int t0 = n * kChunk, valid = min(kChunk, p.T - t0);
  const long long qk_stride = (long long)p.H * K, v_stride = (long long)p.H * V;
  const long long qk0 = sl.qk_row0 + t0 * qk_stride, v0 = sl.v_row0 + t0 * v_stride;
  const long long state = sl.states0 + (long long)n * K * V;
  load_rows<kT>(reinterpret_cast<bf16*>(smem + L::kQ), L::kQkLd, p.q + qk0, qk_stride, kChunk, K, valid);
  load_rows<kT>(reinterpret_cast<bf16*>(smem + L::kK), L::kQkLd, p.k + qk0, qk_stride, kChunk, K, valid);
  load_rows<kT>(reinterpret_cast<float*>(smem + L::kB), L::kBLd, p.g + qk0, qk_stride, kChunk, K, valid);
  load_rows<kT>(reinterpret_cast<bf16*>(smem + L::kDo), L::kVLd, p.do_ + v0, v_stride, kChunk, V, valid);
  load_rows<kT>(reinterpret_cast<bf16*>(smem + L::kV), L::kVLd, p.v + v0, v_stride, kChunk, V, valid);
  load_rows<kT>(reinterpret_cast<bf16*>(smem + L::kSn), L::kVLd, p.states + state, V, K, V, K);
  load_rows<kT>(reinterpret_cast<bf16*>(smem + L::kDS), L::kVLd, p.dstates + state, V, K, V, K);
}

template <int K, int V>
__device__ __forceinline__ const bf16* k_of_layout(const unsigned char* smem) {
  return reinterpret_cast<const bf16*>(smem + ChunkGradLayout<K, V>::kK);
}

// Phase A, warps 0-3: dA rows i0..i0+15 over all 64 columns (zero right of the diagonal), and
// the diagonal block in fp32.
template <int K, int V>
__device__ void form_dA(unsigned char* smem, int i0, float scale) {
  using L = ChunkGradLayout<K, V>;
  const bf16* d_o = reinterpret_cast<const bf16*>(smem + L::kDo);
  const bf16* v = reinterpret_cast<const bf16*>(smem + L::kV);
  bf16* dA = reinterpret_cast<bf16*>(smem + L::kDA);
  float* diag = reinterpret_cast<float*>(smem + L::kDAdiag) + (i0 / kSub) * kSub * kSub;
  const int lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3, w = i0 / kSub;
  float acc[kChunk / 8][4] = {};
#pragma unroll
  for (int vc = 0; vc < V; vc += 16) {
    std::uint32_t a[4];
    a_rows(a, d_o, L::kVLd, i0, vc);
#pragma unroll
    for (int np = 0; np < kChunk / 16; ++np) {
      if (np > w) break;
      std::uint32_t bf[4];
      b_cols(bf, v, L::kVLd, np * 16, vc);
      mma_pair(acc[2 * np], acc[2 * np + 1], a, bf);
    }
  }
#pragma unroll
  for (int nt = 0; nt < kChunk / 8; ++nt)
#pragma unroll
    for (int e = 0; e < 4; e += 2) {
      const int tl = gq + (e >> 1) * 8, t = i0 + tl, j = nt * 8 + 2 * tq;
      const float x0 = j <= t ? scale * acc[nt][e] : 0.f, x1 = j + 1 <= t ? scale * acc[nt][e + 1] : 0.f;
      *reinterpret_cast<std::uint32_t*>(dA + t * L::kCLd + j) = ptx::pack_bf16(x0, x1);
      if (j >= i0 && j < i0 + kSub) {
        diag[tl * kSub + j - i0] = x0;
        diag[tl * kSub + j + 1 - i0] = x1;
      }
    }
}

// Phase A, warps 4-7: A rows i0..i0+15 (zero right of the diagonal). Left of the diagonal block
// anchored at row i0: (q_t 2^{b_t - b_i0}) . (k_j 2^{b_i0 - b_j}); the block itself directly.
template <int K, int V>
__device__ void form_A(unsigned char* smem, int i0, float scale) {
  using L = ChunkGradLayout<K, V>;
  const bf16* q = reinterpret_cast<const bf16*>(smem + L::kQ);
  const bf16* k = reinterpret_cast<const bf16*>(smem + L::kK);
  const float* b = reinterpret_cast<const float*>(smem + L::kB);
  bf16* A = reinterpret_cast<bf16*>(smem + L::kA);
  const int lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3, w = i0 / kSub;
  float acc[6][4] = {};
#pragma unroll
  for (int kc = 0; kc < K; kc += 16) {
    if (w == 0) break;
    std::uint32_t a[4];
    a[0] = decayed_row_pair<false>(q, L::kQkLd, b, L::kBLd, i0 + gq, i0, kc + 2 * tq);
    a[1] = decayed_row_pair<false>(q, L::kQkLd, b, L::kBLd, i0 + gq + 8, i0, kc + 2 * tq);
    a[2] = decayed_row_pair<false>(q, L::kQkLd, b, L::kBLd, i0 + gq, i0, kc + 2 * tq + 8);
    a[3] = decayed_row_pair<false>(q, L::kQkLd, b, L::kBLd, i0 + gq + 8, i0, kc + 2 * tq + 8);
#pragma unroll
    for (int jt = 0; jt < 6; ++jt) {
      if (jt >= 2 * w) break;
      const int j = jt * 8 + gq;
      ptx::mma_bf16_16816(acc[jt], a, decayed_row_pair<true>(k, L::kQkLd, b, L::kBLd, j, i0, kc + 2 * tq),
                          decayed_row_pair<true>(k, L::kQkLd, b, L::kBLd, j, i0, kc + 2 * tq + 8));
    }
  }
#pragma unroll
  for (int jt = 0; jt < 6; ++jt) {
    if (jt >= 2 * w) break;
#pragma unroll
    for (int e = 0; e < 4; e += 2) {
      const int t = i0 + gq + (e >> 1) * 8, j = jt * 8 + 2 * tq;
      *reinterpret_cast<std::uint32_t*>(A + t * L::kCLd + j) =
          ptx::pack_bf16(scale * acc[jt][e], scale * acc[jt][e + 1]);
    }
  }
  // The diagonal block, one (t, j) pair per lane at a time, and zeros right of it.
  for (int idx = lane; idx < kSub * kSub; idx += 32) {
    const int tl = idx / kSub, jl = idx % kSub, t = i0 + tl, j = i0 + jl;
    float dot = 0.f;
    if (jl <= tl) {
#pragma unroll 8
      for (int c = 0; c < K; ++c)
        dot += __bfloat162float(q[t * L::kQkLd + c]) * __bfloat162float(k[j * L::kQkLd + c]) *
               ptx::exp2_approx(b[t * L::kBLd + c] - b[j * L::kBLd + c]);
    }
    A[t * L::kCLd + j] = __float2bfloat16(scale * dot);
  }
  for (int idx = lane; idx < kSub * (kChunk - i0 - kSub); idx += 32) {
    const int tl = idx / (kChunk - i0 - kSub), j = i0 + kSub + idx % (kChunk - i0 - kSub);
    A[(i0 + tl) * L::kCLd + j] = __float2bfloat16(0.f);
  }
}

// acc += X[r0..r0+15] M^T with X [C][V] (do or v) and M [K][V] (S_n or dS_n): the inter-chunk
// GEMM of dq and of dk.
template <int K, int V>
__device__ void rows_times_state_t(float (&acc)[K / 8][4], const bf16* x, const bf16* m, int r0) {
  using L = ChunkGradLayout<K, V>;
#pragma unroll
  for (int vc = 0; vc < V; vc += 16) {
    std::uint32_t a[4];
    a_rows(a, x, L::kVLd, r0, vc);
#pragma unroll
    for (int np = 0; np < K / 16; ++np) {
      std::uint32_t bf[4];
      b_cols(bf, m, L::kVLd, np * 16, vc);
      mma_pair(acc[2 * np], acc[2 * np + 1], a, bf);
    }
  }
}

// acc += a (16 x 16, from dA) times the decayed rows row0..row0+15 of x (q or k) over all K
// columns, the decayed operand split in two bf16 parts (decayed_col_split).
template <int K, bool kKeySide>
__device__ void times_decayed_rows(float (&acc)[K / 8][4], const std::uint32_t (&a)[4], const bf16* x, int ldx,
                                   const float* b, int ldb, int row0, int anchor) {
  const int lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3;
#pragma unroll
  for (int nt = 0; nt < K / 8; ++nt) {
    const int c = nt * 8 + gq;
    std::uint32_t hi0, lo0, hi1, lo1;
    decayed_col_split<kKeySide>(hi0, lo0, x, ldx, b, ldb, row0 + 2 * tq, anchor, c);
    decayed_col_split<kKeySide>(hi1, lo1, x, ldx, b, ldb, row0 + 2 * tq + 8, anchor, c);
    ptx::mma_bf16_16816(acc[nt], a, hi0, hi1);
    ptx::mma_bf16_16816(acc[nt], a, lo0, lo1);
  }
}

// Phase B, warps 0-3: dq rows i0..i0+15 (fp32 accumulators, K/8 n-tiles), anchored at r = i0:
//   dq_t = 2^{b_t - b_r} [ s 2^{b_r} (S_n do_t) + sum_{j < r} dA_{t,j} (k_j 2^{b_r - b_j}) ] + diagonal
// without the self pair dA_{t,t} k_t (added when stored, left out of q dq - k dk).
template <int K, int V>
__device__ void form_dq(float (&acc)[K / 8][4], unsigned char* smem, int i0, float scale) {
  using L = ChunkGradLayout<K, V>;
  const bf16* k = reinterpret_cast<const bf16*>(smem + L::kK);
  const bf16* d_o = reinterpret_cast<const bf16*>(smem + L::kDo);
  const float* b = reinterpret_cast<const float*>(smem + L::kB);
  const bf16* Sn = reinterpret_cast<const bf16*>(smem + L::kSn);
  const bf16* dA = reinterpret_cast<const bf16*>(smem + L::kDA);
  const float* diag = reinterpret_cast<const float*>(smem + L::kDAdiag) + (i0 / kSub) * kSub * kSub;
  const int lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3;
  rows_times_state_t<K, V>(acc, d_o, Sn, i0);
#pragma unroll
  for (int nt = 0; nt < K / 8; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc[nt][e] *= scale * ptx::exp2_approx(b[i0 * L::kBLd + nt * 8 + 2 * tq + (e & 1)]);
  for (int jc = 0; jc < i0; jc += 16) {
    std::uint32_t a[4];
    a_rows(a, dA, L::kCLd, i0, jc);
    times_decayed_rows<K, true>(acc, a, k, L::kQkLd, b, L::kBLd, jc, i0);
  }
#pragma unroll
  for (int nt = 0; nt < K / 8; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int tl = gq + (e >> 1) * 8, t = i0 + tl, c = nt * 8 + 2 * tq + (e & 1);
      const float bt = b[t * L::kBLd + c];
      float x = acc[nt][e] * ptx::exp2_approx(bt - b[i0 * L::kBLd + c]);
      for (int jl = 0; jl < tl; ++jl)
        x += diag[tl * kSub + jl] * __bfloat162float(k[(i0 + jl) * L::kQkLd + c]) *
             ptx::exp2_approx(bt - b[(i0 + jl) * L::kBLd + c]);
      acc[nt][e] = x;
    }
}

// Phase B, warps 4-7: dk rows j0..j0+15, anchored at e = j0 + 15 (the sub-chunk's last row):
//   dk_j = 2^{b_e - b_j} [ 2^{b_last - b_e} (dS_n v_j) + sum_{t > e} dA_{t,j} (q_t 2^{b_t - b_e}) ] + diagonal
// without the self pair dA_{j,j} q_j; and col_sum[c] = sum over its rows of k_j * dk^inter_j.
template <int K, int V>
__device__ void form_dk(float (&acc)[K / 8][4], unsigned char* smem, int j0, float* col_sum) {
  using L = ChunkGradLayout<K, V>;
  const bf16* q = reinterpret_cast<const bf16*>(smem + L::kQ);
  const bf16* v = reinterpret_cast<const bf16*>(smem + L::kV);
  const float* b = reinterpret_cast<const float*>(smem + L::kB);
  const bf16* dS = reinterpret_cast<const bf16*>(smem + L::kDS);
  const bf16* dA = reinterpret_cast<const bf16*>(smem + L::kDA);
  const float* diag = reinterpret_cast<const float*>(smem + L::kDAdiag) + (j0 / kSub) * kSub * kSub;
  const int lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3, e_row = j0 + kSub - 1;
  rows_times_state_t<K, V>(acc, v, dS, j0);
#pragma unroll
  for (int nt = 0; nt < K / 8; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int c = nt * 8 + 2 * tq + (e & 1);
      acc[nt][e] *= ptx::exp2_approx(b[(kChunk - 1) * L::kBLd + c] - b[e_row * L::kBLd + c]);
    }
  // k_j * dk^inter_j summed over this warp's 16 rows: over the thread's two rows, then the lanes
  // holding the same columns (gq = 0..7).
#pragma unroll
  for (int nt = 0; nt < K / 8; ++nt)
#pragma unroll
    for (int col = 0; col < 2; ++col) {
      const int c = nt * 8 + 2 * tq + col;
      float sum = 0.f;
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int j = j0 + gq + half * 8;
        sum += __bfloat162float(k_of_layout<K, V>(smem)[j * L::kQkLd + c]) * acc[nt][2 * half + col] *
               ptx::exp2_approx(b[e_row * L::kBLd + c] - b[j * L::kBLd + c]);
      }
      sum += __shfl_xor_sync(0xffffffffu, sum, 4);
      sum += __shfl_xor_sync(0xffffffffu, sum, 8);
      sum += __shfl_xor_sync(0xffffffffu, sum, 16);
      if (gq == 0) col_sum[c] = sum;
    }
  for (int tc = j0 + kSub; tc < kChunk; tc += 16) {
    std::uint32_t a[4];
    a_cols(a, dA, L::kCLd, j0, tc);
    times_decayed_rows<K, false>(acc, a, q, L::kQkLd, b, L::kBLd, tc, e_row);
  }
#pragma unroll
  for (int nt = 0; nt < K / 8; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int jl = gq + (e >> 1) * 8, j = j0 + jl, c = nt * 8 + 2 * tq + (e & 1);
      const float bj = b[j * L::kBLd + c];
      float x = acc[nt][e] * ptx::exp2_approx(b[e_row * L::kBLd + c] - bj);
      for (int tl = jl + 1; tl < kSub; ++tl)
        x += diag[tl * kSub + jl] * __bfloat162float(q[(j0 + tl) * L::kQkLd + c]) *
             ptx::exp2_approx(b[(j0 + tl) * L::kBLd + c] - bj);
      acc[nt][e] = x;
    }
}

// dq or dk rows r0..r0+15 with the self pair put back: acc + dA_{r,r} x_r (x = k for dq, q for
// dk; diag = the rows' 16x16 block of dA), as bf16 rows of a token-major tensor, rows at or past
// T skipped.
template <int NT>
__device__ void store_grad_rows(const float (&acc)[NT][4], const float* diag, const bf16* x, int ldx, bf16* dst,
                                long long row_stride, int r0, int t0, int T) {
  const int lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int rl = gq + half * 8, r = r0 + rl;
    if (t0 + r >= T) continue;
    const float self = diag[rl * kSub + rl];
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
      const int c = nt * 8 + 2 * tq;
      const float2 xv = ptx::unpack_bf16(*reinterpret_cast<const std::uint32_t*>(x + r * ldx + c));
      *reinterpret_cast<std::uint32_t*>(dst + r * row_stride + c) =
          ptx::pack_bf16(acc[nt][2 * half] + self * xv.x, acc[nt][2 * half + 1] + self * xv.y);
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

// Phase D: dv rows j0..j0+15, columns v0..v0+V/2-1:
//   sum_{t >= j} A_{t,j} do_t  +  (k_j 2^{b_last - b_j}) dS_n
template <int K, int V>
__device__ void form_dv(float (&acc)[V / 16][4], unsigned char* smem, int j0, int v0) {
  using L = ChunkGradLayout<K, V>;
  const bf16* k = reinterpret_cast<const bf16*>(smem + L::kK);
  const bf16* d_o = reinterpret_cast<const bf16*>(smem + L::kDo);
  const float* b = reinterpret_cast<const float*>(smem + L::kB);
  const bf16* dS = reinterpret_cast<const bf16*>(smem + L::kDS);
  const bf16* A = reinterpret_cast<const bf16*>(smem + L::kA);
  const int lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3;
#pragma unroll
  for (int tc = 0; tc < kChunk; tc += 16) {
    if (tc < j0) continue;
    std::uint32_t a[4];
    a_cols(a, A, L::kCLd, j0, tc);
#pragma unroll
    for (int np = 0; np < V / 32; ++np) {
      std::uint32_t bf[4];
      b_rows(bf, d_o, L::kVLd, v0 + np * 16, tc);
      mma_pair(acc[2 * np], acc[2 * np + 1], a, bf);
    }
  }
  constexpr int kLast = kChunk - 1;
#pragma unroll
  for (int kc = 0; kc < K; kc += 16) {
    std::uint32_t a[4];
    a[0] = decayed_row_pair<true>(k, L::kQkLd, b, L::kBLd, j0 + gq, kLast, kc + 2 * tq);
    a[1] = decayed_row_pair<true>(k, L::kQkLd, b, L::kBLd, j0 + gq + 8, kLast, kc + 2 * tq);
    a[2] = decayed_row_pair<true>(k, L::kQkLd, b, L::kBLd, j0 + gq, kLast, kc + 2 * tq + 8);
    a[3] = decayed_row_pair<true>(k, L::kQkLd, b, L::kBLd, j0 + gq + 8, kLast, kc + 2 * tq + 8);
#pragma unroll
    for (int np = 0; np < V / 32; ++np) {
      std::uint32_t bf[4];
      b_rows(bf, dS, L::kVLd, v0 + np * 16, kc);
      mma_pair(acc[2 * np], acc[2 * np + 1], a, bf);
    }
  }
}

template <int K, int V>
__global__ void __launch_bounds__(kChunkGradThreads, 1) gla_chunk_grad_kernel(const Params p) {
  using L = ChunkGradLayout<K, V>;
  extern __shared__ __align__(128) unsigned char smem[];
  const int n = blockIdx.x, h = blockIdx.y, bb = blockIdx.z;
  const Slice sl = slice_of<K>(p, bb, h);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3;
  const int rows0 = (warp % 4) * kSub;  // the 16 rows this warp serves
  const int t0 = n * kChunk;
  const long long qk_stride = (long long)p.H * K, v_stride = (long long)p.H * V;
  float* totals = reinterpret_cast<float*>(smem + L::kTotals);

  load_chunk_grad_inputs<K, V>(p, sl, smem, n);
  ptx::cp_async_commit();
  ptx::cp_async_wait<0>();
  __syncthreads();
  cumsum_log2<K, kChunkGradThreads>(reinterpret_cast<float*>(smem + L::kB), L::kBLd, totals);
  __syncthreads();

  if (warp < 4) form_dA<K, V>(smem, rows0, p.scale);
  else form_A<K, V>(smem, rows0, p.scale);
  __syncthreads();

  float acc[K / 8][4] = {};
  float* col_sums = reinterpret_cast<float*>(smem + L::kColSums);
  const float* diag = reinterpret_cast<const float*>(smem + L::kDAdiag) + (warp % 4) * kSub * kSub;
  if (warp < 4) {
    form_dq<K, V>(acc, smem, rows0, p.scale);
    store_grad_rows(acc, diag, reinterpret_cast<const bf16*>(smem + L::kK), L::kQkLd,
                    p.dq + sl.qk_row0 + t0 * qk_stride, qk_stride, rows0, t0, p.T);
  } else {
    form_dk<K, V>(acc, smem, rows0, col_sums + (warp - 4) * K);
    store_grad_rows(acc, diag, reinterpret_cast<const bf16*>(smem + L::kQ), L::kQkLd,
                    p.dk + sl.qk_row0 + t0 * qk_stride, qk_stride, rows0, t0, p.T);
  }
  __syncthreads();  // S_n, v and dA are no longer read: their space takes q dq - k dk

  // Phase E: q dq - k dk per element without the self pairs (the two warps serving the same
  // rows hold dq and dk at the same fragment positions), then the suffix sums down each column,
  // plus 2^{b_last} R_n and sum_j k_j dk^inter_j (gla_backward_common.cuh).
  {
    const bf16* x = reinterpret_cast<const bf16*>(smem + (warp < 4 ? L::kQ : L::kK));
    float* da = reinterpret_cast<float*>(smem + L::kDg);
    for (int pass = 0; pass < 2; ++pass) {
      if ((warp < 4) == (pass == 0)) {
#pragma unroll
        for (int nt = 0; nt < K / 8; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int r = rows0 + gq + (e >> 1) * 8, c = nt * 8 + 2 * tq + (e & 1);
            const float term = __bfloat162float(x[r * L::kQkLd + c]) * acc[nt][e];
            if (pass == 0) da[r * L::kDgLd + c] = term;
            else da[r * L::kDgLd + c] -= term;
          }
      }
      __syncthreads();
    }
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
    __syncthreads();
    const int v_blocks = V / kStateBlockV;
    float r_n = 0.f;
    for (int vb = 0; vb < v_blocks; ++vb) r_n += p.r_n[sl.r_n0 + ((long long)n * v_blocks + vb) * K + c];
    float carry = r_n * ptx::exp2_approx(reinterpret_cast<const float*>(smem + L::kB)[(kChunk - 1) * L::kBLd + c]);
#pragma unroll
    for (int w = 0; w < kChunk / kSub; ++w) carry += col_sums[w * K + c];
#pragma unroll
    for (int later = kParts - 1; later > 0; --later)
      if (later > part) carry += totals[later * K + c];
    float* dg = p.dg + sl.qk_row0 + t0 * qk_stride;
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const int t = part * kRows + r;
      if (t0 + t < p.T) dg[t * qk_stride + c] = suffix[r] + carry;
    }
  }

  float dv[V / 16][4] = {};
  const int v0 = (warp / 4) * (V / 2);
  form_dv<K, V>(dv, smem, rows0, v0);
  store_rows_bf16(dv, p.dv + sl.v_row0 + t0 * v_stride + v0, v_stride, rows0, t0, p.T);
}

}  // namespace overlap::cuda::gla_backward_kernel
