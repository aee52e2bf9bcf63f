#pragma once
// gla backward, pass 3, the anchored path (gla_chunk_grad_kernel.cuh): for chunks whose gates
// decay a channel by more than 2^-96, where a single anchor per chunk would overflow. Every
// decay factor formed is 2^x with x <= 0: pairs in different 16-row sub-chunks are split at an
// anchor row r between them, D_{t,j} = 2^{b_t - b_r} 2^{b_r - b_j}, so those sums are
// tensor-core GEMMs of decayed operands; pairs inside one sub-chunk are summed directly.
#include "gla/gla_chunk_grad_parts.cuh"

namespace overlap::cuda::gla_backward_kernel::anchored {

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
  constexpr int kOffDiagTiles = 2 * (kChunk / kSub - 1);  // n8 tiles left of the last row block
  float acc[kOffDiagTiles][4] = {};
#pragma unroll
  for (int kc = 0; kc < K; kc += 16) {
    if (w == 0) break;
    std::uint32_t a[4];
    a[0] = decayed_row_pair<false>(q, L::kQkLd, b, L::kBLd, i0 + gq, i0, kc + 2 * tq);
    a[1] = decayed_row_pair<false>(q, L::kQkLd, b, L::kBLd, i0 + gq + 8, i0, kc + 2 * tq);
    a[2] = decayed_row_pair<false>(q, L::kQkLd, b, L::kBLd, i0 + gq, i0, kc + 2 * tq + 8);
    a[3] = decayed_row_pair<false>(q, L::kQkLd, b, L::kBLd, i0 + gq + 8, i0, kc + 2 * tq + 8);
#pragma unroll
    for (int jt = 0; jt < kOffDiagTiles; ++jt) {
      if (jt >= 2 * w) break;
      const int j = jt * 8 + gq;
      ptx::mma_bf16_16816(acc[jt], a, decayed_row_pair<true>(k, L::kQkLd, b, L::kBLd, j, i0, kc + 2 * tq),
                          decayed_row_pair<true>(k, L::kQkLd, b, L::kBLd, j, i0, kc + 2 * tq + 8));
    }
  }
#pragma unroll
  for (int jt = 0; jt < kOffDiagTiles; ++jt) {
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


// acc += a (16 x 16, from dA) times the decayed rows row0..row0+15 of x (q or k) over the 8 NT
// columns from c0, the decayed operand split in two bf16 parts (decayed_col_split).
template <bool kKeySide, int NT>
__device__ void times_decayed_rows(float (&acc)[NT][4], const std::uint32_t (&a)[4], const bf16* x, int ldx,
                                   const float* b, int ldb, int row0, int anchor, int c0) {
  const int lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3;
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
    const int c = c0 + nt * 8 + gq;
    std::uint32_t hi0, lo0, hi1, lo1;
    decayed_col_split<kKeySide>(hi0, lo0, x, ldx, b, ldb, row0 + 2 * tq, anchor, c);
    decayed_col_split<kKeySide>(hi1, lo1, x, ldx, b, ldb, row0 + 2 * tq + 8, anchor, c);
    ptx::mma_bf16_16816(acc[nt], a, hi0, hi1);
    ptx::mma_bf16_16816(acc[nt], a, lo0, lo1);
  }
}


// Phase B: dq rows i0..i0+15, the 8 NT columns from c0 (fp32 accumulators), anchored at r = i0:
//   dq_t = 2^{b_t - b_r} [ s 2^{b_r} (S_n do_t) + sum_{j < r} dA_{t,j} (k_j 2^{b_r - b_j}) ] + diagonal
// without the self pair dA_{t,t} k_t (added when stored, left out of q dq - k dk).
template <int K, int V, int NT>
__device__ void form_dq(float (&acc)[NT][4], unsigned char* smem, int i0, int c0, float scale) {
  using L = ChunkGradLayout<K, V>;
  const bf16* k = reinterpret_cast<const bf16*>(smem + L::kK);
  const bf16* d_o = reinterpret_cast<const bf16*>(smem + L::kDo);
  const float* b = reinterpret_cast<const float*>(smem + L::kB);
  const bf16* Sn = reinterpret_cast<const bf16*>(smem + L::kSn);
  const bf16* dA = reinterpret_cast<const bf16*>(smem + L::kDA);
  const float* diag = reinterpret_cast<const float*>(smem + L::kDAdiag) + (i0 / kSub) * kSub * kSub;
  const int lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3;
  rows_times_state_t<K, V>(acc, d_o, Sn, i0, c0);
#pragma unroll
  for (int nt = 0; nt < NT; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      acc[nt][e] *= scale * ptx::exp2_approx(b[i0 * L::kBLd + c0 + nt * 8 + 2 * tq + (e & 1)]);
  for (int jc = 0; jc < i0; jc += 16) {
    std::uint32_t a[4];
    a_rows(a, dA, L::kCLd, i0, jc);
    times_decayed_rows<true>(acc, a, k, L::kQkLd, b, L::kBLd, jc, i0, c0);
  }
#pragma unroll
  for (int nt = 0; nt < NT; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int tl = gq + (e >> 1) * 8, t = i0 + tl, c = c0 + nt * 8 + 2 * tq + (e & 1);
      const float bt = b[t * L::kBLd + c];
      float x = acc[nt][e] * ptx::exp2_approx(bt - b[i0 * L::kBLd + c]);
      for (int jl = 0; jl < tl; ++jl)
        x += diag[tl * kSub + jl] * __bfloat162float(k[(i0 + jl) * L::kQkLd + c]) *
             ptx::exp2_approx(bt - b[(i0 + jl) * L::kBLd + c]);
      acc[nt][e] = x;
    }
}


// Phase B: dk rows j0..j0+15, the 8 NT columns from c0, anchored at e = j0 + 15 (the
// sub-chunk's last row):
//   dk_j = 2^{b_e - b_j} [ 2^{b_last - b_e} (dS_n v_j) + sum_{t > e} dA_{t,j} (q_t 2^{b_t - b_e}) ] + diagonal
// without the self pair dA_{j,j} q_j; and col_sum[c] = sum over its rows of k_j * dk^inter_j.
template <int K, int V, int NT>
__device__ void form_dk(float (&acc)[NT][4], unsigned char* smem, int j0, int c0, float* col_sum) {
  using L = ChunkGradLayout<K, V>;
  const bf16* q = reinterpret_cast<const bf16*>(smem + L::kQ);
  const bf16* k = reinterpret_cast<const bf16*>(smem + L::kK);
  const bf16* v = reinterpret_cast<const bf16*>(smem + L::kV);
  const float* b = reinterpret_cast<const float*>(smem + L::kB);
  const bf16* dS = reinterpret_cast<const bf16*>(smem + L::kDS);
  const bf16* dA = reinterpret_cast<const bf16*>(smem + L::kDA);
  const float* diag = reinterpret_cast<const float*>(smem + L::kDAdiag) + (j0 / kSub) * kSub * kSub;
  const int lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3, e_row = j0 + kSub - 1;
  rows_times_state_t<K, V>(acc, v, dS, j0, c0);
#pragma unroll
  for (int nt = 0; nt < NT; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int c = c0 + nt * 8 + 2 * tq + (e & 1);
      acc[nt][e] *= ptx::exp2_approx(b[(kChunk - 1) * L::kBLd + c] - b[e_row * L::kBLd + c]);
    }
  // k_j * dk^inter_j summed over this warp's 16 rows: over the thread's two rows, then the lanes
  // holding the same columns (gq = 0..7).
#pragma unroll
  for (int nt = 0; nt < NT; ++nt)
#pragma unroll
    for (int col = 0; col < 2; ++col) {
      const int c = c0 + nt * 8 + 2 * tq + col;
      float sum = 0.f;
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int j = j0 + gq + half * 8;
        sum += __bfloat162float(k[j * L::kQkLd + c]) * acc[nt][2 * half + col] *
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
    times_decayed_rows<false>(acc, a, q, L::kQkLd, b, L::kBLd, tc, e_row, c0);
  }
#pragma unroll
  for (int nt = 0; nt < NT; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int jl = gq + (e >> 1) * 8, j = j0 + jl, c = c0 + nt * 8 + 2 * tq + (e & 1);
      const float bj = b[j * L::kBLd + c];
      float x = acc[nt][e] * ptx::exp2_approx(b[e_row * L::kBLd + c] - bj);
      for (int tl = jl + 1; tl < kSub; ++tl)
        x += diag[tl * kSub + jl] * __bfloat162float(q[(j0 + tl) * L::kQkLd + c]) *
             ptx::exp2_approx(b[(j0 + tl) * L::kBLd + c] - bj);
      acc[nt][e] = x;
    }
}


// Phase D, second part: dv rows j0..j0+15, columns v0.. += (k_j 2^{b_last - b_j}) dS_n.
template <int K, int V>
__device__ void dv_from_state(float (&acc)[V / 16][4], unsigned char* smem, int j0, int v0) {
  using L = ChunkGradLayout<K, V>;
  const bf16* k = reinterpret_cast<const bf16*>(smem + L::kK);
  const float* b = reinterpret_cast<const float*>(smem + L::kB);
  const bf16* dS = reinterpret_cast<const bf16*>(smem + L::kDS);
  const int lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3;
  constexpr int kLast = kChunk - 1;
#pragma unroll
  for (int kc = 0; kc < K; kc += 16) {
    std::uint32_t a[4];
    a[0] = decayed_row_pair<true>(k, L::kQkLd, b, L::kBLd, j0 + gq, kLast, kc + 2 * tq);
    a[1] = decayed_row_pair<true>(k, L::kQkLd, b, L::kBLd, j0 + gq + 8, kLast, kc + 2 * tq);
    a[2] = decayed_row_pair<true>(k, L::kQkLd, b, L::kBLd, j0 + gq, kLast, kc + 2 * tq + 8);
    a[3] = decayed_row_pair<true>(k, L::kQkLd, b, L::kBLd, j0 + gq + 8, kLast, kc + 2 * tq + 8);
    mma_b_rows(acc, a, dS, L::kVLd, v0, kc);
  }
}

}  // namespace overlap::cuda::gla_backward_kernel::anchored
