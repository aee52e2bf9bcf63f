#pragma once
// Device-side building blocks of the linrnn kernels: the per-element math of the layer and the
// few PTX instructions that cuda/common/ptx_sm80.cuh does not wrap (the relaxed 64-bit accesses
// of the look-back's {value, flag} words).
#include <cstdint>
#include <cuda_bf16.h>

#include "common/ptx_sm80.cuh"

namespace overlap::cuda::linrnn_kernel {

using bf16 = __nv_bfloat16;

// a = sigmoid(a_pre) and 1 - a = sigmoid(-a_pre), each from its own exponential: forming 1 - a
// by subtraction loses the digits that matter when a is near 1 (long memory, a ~ 0.99).
struct Gate {
  float a, one_minus_a;
};
__device__ __forceinline__ Gate gate_of(float a_pre) {
  return {1.0f / (1.0f + __expf(-a_pre)), 1.0f / (1.0f + __expf(a_pre))};
}
__device__ __forceinline__ float silu(float z) { return z / (1.0f + __expf(-z)); }

// 64-bit words that carry a value and its flag together (single-copy atomic when aligned).
__device__ __forceinline__ unsigned long long load_relaxed_u64(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];\n" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void store_relaxed_u64(unsigned long long* p, unsigned long long v) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;\n" ::"l"(p), "l"(v) : "memory");
}

}  // namespace overlap::cuda::linrnn_kernel
