#pragma once
// What a dualgemm launch takes, in plain C++17 (the .cu files include it; the ref headers
// need C++20): the device pointers and the problem's sizes.

namespace overlap::cuda {

struct DualGemmDeviceArgs {
  const void* a = nullptr;  // bf16 or e4m3 codes, [L, M, K]
  const void* b1 = nullptr; // [L, N, K]
  const void* b2 = nullptr;
  const float* a_scale = nullptr;  // fp8 only: [L, M]
  const float* b1_scale = nullptr; // [L, N]
  const float* b2_scale = nullptr;
  void* c = nullptr;  // fp16 [L, M, N]
};

struct DualGemmSizes {
  long long L = 1, M = 0, N = 0, K = 0;
};

}  // namespace overlap::cuda
