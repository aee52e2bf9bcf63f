#pragma once
// Row-major bf16 GEMMs through cuBLAS, for the variants whose projection is "a library GEMM"
// (linrnn three_kernel / semi_fused, projchain unfused / wide_gemm) and for the peers the
// benchmarks time beside our kernels. Host-only; every cuBLAS status is checked.
//
//   C[M,N] = A[M,K] · B[K,N]   (row-major, leading dimensions in elements)
//
// cuBLAS is column-major, so the call computes Cᵀ = Bᵀ·Aᵀ: the same bytes, no transposes.
#include <cstdint>

struct CUstream_st;  // cudaStream_t without the CUDA headers

namespace overlap::cuda {

enum class GemmOut { BF16, F32 };

struct RowMajorGemm {
  std::int64_t M = 0, N = 0, K = 0;
  const void* A = nullptr;  // bf16
  std::int64_t lda = 0;     // >= K
  const void* B = nullptr;  // bf16
  std::int64_t ldb = 0;     // >= N
  void* C = nullptr;        // bf16 or fp32 (out)
  std::int64_t ldc = 0;     // >= N
  GemmOut out = GemmOut::BF16;
};

// Enqueues C = A·B (fp32 accumulation) on `stream`, with one cuBLAS handle per thread and
// device, created on first use. Throws overlap::Error on a bad argument or a cuBLAS failure.
void cublas_gemm_bf16(const RowMajorGemm& gemm, CUstream_st* stream);

}  // namespace overlap::cuda
