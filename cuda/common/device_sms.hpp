#pragma once
// The SM count of the current device, for launchers that size a grid by it (persistent kernels,
// splits that fill the GPU).
#include <cuda_runtime.h>

namespace overlap::cuda {

inline cudaError_t current_device_sms(int* sms) {
  int device = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  return cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, device);
}

}  // namespace overlap::cuda
