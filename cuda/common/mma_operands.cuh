#pragma once
// The operands of a bf16 mma.sync m16n8k16 loaded from shared memory with ldmatrix, for the
// gla kernels of the mma.sync family (gla_chunk_kernel.cuh, the backward's kernels).
#include <cstdint>
#include <cuda_bf16.h>

#include "common/ptx_sm80.cuh"

namespace overlap::cuda::mma {

// mma.sync m16n8k16 operands from shared memory, named by how the matrix is stored:
//   a_rows:  A[m][kk] = M[m][kk]   (M row-major, rows m0..m0+15, columns k0..k0+15)
//   a_cols:  A[m][kk] = M[kk][m]   (the transpose of a row-major M)
//   b_cols:  B[kk][n] = M[n][kk]   (rows of M are the output columns), two n8 tiles
//   b_rows:  B[kk][n] = M[kk][n]   (rows of M are the reduction index), two n8 tiles
// A b_* load fills r[0], r[1] for columns n0..n0+7 and r[2], r[3] for n0+8..n0+15.
__device__ __forceinline__ void a_rows(std::uint32_t (&r)[4], const __nv_bfloat16* m, int ld, int m0, int k0) {
  const int lane = threadIdx.x & 31, mi = lane >> 3;
  ptx::ldmatrix_x4(r, m + (m0 + (lane & 7) + (mi & 1) * 8) * ld + k0 + (mi >> 1) * 8);
}
__device__ __forceinline__ void a_cols(std::uint32_t (&r)[4], const __nv_bfloat16* m, int ld, int m0, int k0) {
  const int lane = threadIdx.x & 31, mi = lane >> 3;
  ptx::ldmatrix_x4_trans(r, m + (k0 + (lane & 7) + (mi >> 1) * 8) * ld + m0 + (mi & 1) * 8);
}
__device__ __forceinline__ void b_cols(std::uint32_t (&r)[4], const __nv_bfloat16* m, int ld, int n0, int k0) {
  const int lane = threadIdx.x & 31, mi = lane >> 3;
  ptx::ldmatrix_x4(r, m + (n0 + (lane & 7) + (mi >> 1) * 8) * ld + k0 + (mi & 1) * 8);
}
__device__ __forceinline__ void b_rows(std::uint32_t (&r)[4], const __nv_bfloat16* m, int ld, int n0, int k0) {
  const int lane = threadIdx.x & 31, mi = lane >> 3;
  ptx::ldmatrix_x4_trans(r, m + (k0 + (lane & 7) + (mi & 1) * 8) * ld + n0 + (mi >> 1) * 8);
}

__device__ __forceinline__ void mma_pair(float (&d0)[4], float (&d1)[4], const std::uint32_t (&a)[4],
                                         const std::uint32_t (&b)[4]) {
  ptx::mma_bf16_16816(d0, a, b[0], b[1]);
  ptx::mma_bf16_16816(d1, a, b[2], b[3]);
}

// An ldmatrix.x4 load of B (b_rows or b_cols).
using BLoad = void (*)(std::uint32_t (&)[4], const __nv_bfloat16*, int, int, int);

// acc (16 x 8 NT, fp32) += a (16 x 16) times the 16 x 8 NT block of B whose first column is n0 and
// first reduction index k0, B read from M as Load reads it: NT / 2 ldmatrix, NT mma.
template <int NT, BLoad Load>
__device__ __forceinline__ void mma_b(float (&acc)[NT][4], const std::uint32_t (&a)[4], const __nv_bfloat16* m, int ld,
                                      int n0, int k0) {
  static_assert(NT % 2 == 0, "n8 tiles come in pairs, one ldmatrix.x4 each");
#pragma unroll
  for (int p = 0; p < NT / 2; ++p) {
    std::uint32_t b[4];
    Load(b, m, ld, n0 + 16 * p, k0);
    mma_pair(acc[2 * p], acc[2 * p + 1], a, b);
  }
}
template <int NT>
__device__ __forceinline__ void mma_b_rows(float (&acc)[NT][4], const std::uint32_t (&a)[4], const __nv_bfloat16* m,
                                           int ld, int n0, int k0) {
  mma_b<NT, b_rows>(acc, a, m, ld, n0, k0);
}
template <int NT>
__device__ __forceinline__ void mma_b_cols(float (&acc)[NT][4], const std::uint32_t (&a)[4], const __nv_bfloat16* m,
                                           int ld, int n0, int k0) {
  mma_b<NT, b_cols>(acc, a, m, ld, n0, k0);
}

}  // namespace overlap::cuda::mma
