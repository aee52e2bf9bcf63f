#include "common/cublas_gemm.hpp"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <map>

#include "core/error.hpp"
#include "runtime/cublas_check.hpp"
#include "runtime/cuda_check.hpp"

namespace overlap::cuda {
namespace {

// One handle per (thread, device): cuBLAS handles are not thread-safe, and a handle is bound
// to the device current when it was created. Handles live until the thread exits.
cublasHandle_t handle_for_current_device() {
  struct Handles {
    std::map<int, cublasHandle_t> by_device;
    ~Handles() {
      for (auto& [device, h] : by_device) cublasDestroy(h);
    }
  };
  thread_local Handles handles;
  int device = 0;
  OVERLAP_CUDA_CHECK(cudaGetDevice(&device));
  auto it = handles.by_device.find(device);
  if (it != handles.by_device.end()) return it->second;
  cublasHandle_t h = nullptr;
  OVERLAP_CUBLAS_CHECK(cublasCreate(&h));
  handles.by_device.emplace(device, h);
  return h;
}

bool fits_int(std::int64_t v) { return v >= 0 && v <= 0x7fffffff; }

}  // namespace

void cublas_gemm_bf16(const RowMajorGemm& g, CUstream_st* stream) {
  OVERLAP_REQUIRE(g.M > 0 && g.N > 0 && g.K > 0, "cublas_gemm_bf16: sizes must be positive (M={}, N={}, K={})",
                  g.M, g.N, g.K);
  OVERLAP_REQUIRE(g.A && g.B && g.C, "cublas_gemm_bf16: null operand");
  OVERLAP_REQUIRE(g.lda >= g.K && g.ldb >= g.N && g.ldc >= g.N,
                  "cublas_gemm_bf16: leading dimensions too small (lda={}, ldb={}, ldc={})", g.lda, g.ldb, g.ldc);
  OVERLAP_REQUIRE(fits_int(g.M) && fits_int(g.N) && fits_int(g.K) && fits_int(g.lda) && fits_int(g.ldb) &&
                      fits_int(g.ldc),
                  "cublas_gemm_bf16: a size exceeds cuBLAS's 32-bit range");
  cublasHandle_t h = handle_for_current_device();
  OVERLAP_CUBLAS_CHECK(cublasSetStream(h, stream));
  const float alpha = 1.0f, beta = 0.0f;
  const cudaDataType_t c_type = g.out == GemmOut::BF16 ? CUDA_R_16BF : CUDA_R_32F;
  // Column-major view: Cᵀ[N,M] = Bᵀ[N,K] · Aᵀ[K,M].
  OVERLAP_CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(g.N), static_cast<int>(g.M),
                                    static_cast<int>(g.K), &alpha, g.B, CUDA_R_16BF, static_cast<int>(g.ldb), g.A,
                                    CUDA_R_16BF, static_cast<int>(g.lda), &beta, g.C, c_type, static_cast<int>(g.ldc),
                                    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace overlap::cuda
