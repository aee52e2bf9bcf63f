#include "calibrate/fp8_gemm_rate.hpp"

#include <cublasLt.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include "calibrate/median_time.hpp"
#include "calibrate/random_fill.cuh"
#include "runtime/cublas_check.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device_buffer.hpp"

namespace overlap::gpu {
namespace {


// RAII for the cuBLASLt descriptors, so a failing call leaks nothing.
struct LtObjects {
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  ~LtObjects() {
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (d) cublasLtMatrixLayoutDestroy(d);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (op) cublasLtMatmulDescDestroy(op);
    if (handle) cublasLtDestroy(handle);
  }
};

}  // namespace

std::vector<MeasuredField> measure_fp8_tensor_rate(int repeats, int compute_capability) {
  if (compute_capability < 89) return {};
  constexpr int n = 8192;
  constexpr std::size_t workspace_bytes = std::size_t(32) << 20;
  const std::size_t elems = std::size_t(n) * n;
  DeviceBuffer a(elems), b(elems), d(elems * 2), workspace(workspace_bytes);
  fill_random<<<1024, 256>>>(a.as<__nv_fp8_e4m3>(), elems, 1);
  fill_random<<<1024, 256>>>(b.as<__nv_fp8_e4m3>(), elems, 2);
  OVERLAP_CUDA_CHECK(cudaGetLastError());

  // fp8 GEMMs in cuBLASLt take A transposed ("TN"), both operands K-major: D = A^T B.
  LtObjects lt;
  OVERLAP_CUBLAS_CHECK(cublasLtCreate(&lt.handle));
  OVERLAP_CUBLAS_CHECK(cublasLtMatmulDescCreate(&lt.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
  OVERLAP_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(lt.op, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(transa)));
  OVERLAP_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(lt.op, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof(transb)));
  OVERLAP_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lt.a, CUDA_R_8F_E4M3, n, n, n));
  OVERLAP_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lt.b, CUDA_R_8F_E4M3, n, n, n));
  OVERLAP_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lt.d, CUDA_R_16BF, n, n, n));
  OVERLAP_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&lt.pref));
  OVERLAP_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(lt.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                              &workspace_bytes, sizeof(workspace_bytes)));
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  OVERLAP_CUBLAS_CHECK(
      cublasLtMatmulAlgoGetHeuristic(lt.handle, lt.op, lt.a, lt.b, lt.d, lt.d, lt.pref, 1, &heuristic, &found));
  if (found == 0) fail("cuBLASLt offers no fp8 e4m3 GEMM algorithm for {0}x{0}x{0} on this GPU", n);

  const float alpha = 1.0f, beta = 0.0f;
  const double us = median_us(
      [&](cudaStream_t s) {
        OVERLAP_CUBLAS_CHECK(cublasLtMatmul(lt.handle, lt.op, &alpha, a.get(), lt.a, b.get(), lt.b, &beta, d.get(), lt.d,
                                            d.get(), lt.d, &heuristic.algo, workspace.get(), workspace_bytes, s));
      },
      repeats);
  return {{"tensor_fp8_TFLOPs", 2.0 * n * n * double(n) / (us * 1e6),
           fmt::format("measured by overlap calibrate: cuBLASLt fp8 e4m3 GEMM {0}x{0}x{0} (A transposed, bf16 out), "
                       "fp32 accumulation, random data, median of {1} runs ({2:.1f} us)",
                       n, repeats, us)}};
}

}  // namespace overlap::gpu
