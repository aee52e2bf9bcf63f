#pragma once
// Activations built on the hardware's approximate special functions, for epilogues whose
// special-function work would otherwise stall the tensor cores (one MUFU operation per element
// where the exact forms take two).
namespace overlap::cuda {

// silu(z) = z·sigmoid(z) = z·(1 + tanh(z/2))/2 with the hardware tanh (one MUFU operation,
// absolute error about 2^-11). For z < 0, 1 + tanh cancels and the relative error grows (about
// 1% at z = -4, tens of percent at z = -8), but there silu(z) is small: its absolute error,
// about 2.5e-4·|z|, stays near the bf16 rounding of the outputs around it. It is not accurate
// per element for strongly negative z. Measured in the GPU tests of linrnn and projchain
// (whole-tensor relative errors, docs/results/).
__device__ __forceinline__ float silu_fast(float z) {
  float t;
  asm("tanh.approx.f32 %0, %1;" : "=f"(t) : "f"(0.5f * z));
  return 0.5f * z * (1.0f + t);
}

}  // namespace overlap::cuda
