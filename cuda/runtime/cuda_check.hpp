#pragma once
// Every CUDA runtime call is checked; a failure becomes an overlap::Error naming the call, the
// error and where it happened, so the tool exits non-zero with a readable line.
#include <cuda_runtime_api.h>

#include "common/device_sms.hpp"
#include "core/error.hpp"

#define OVERLAP_CUDA_CHECK(call)                                                              \
  do {                                                                                        \
    const cudaError_t overlap_cuda_status_ = (call);                                          \
    if (overlap_cuda_status_ != cudaSuccess)                                                  \
      ::overlap::fail("CUDA error {} ({}) in {} at {}:{}", cudaGetErrorName(overlap_cuda_status_), \
                      cudaGetErrorString(overlap_cuda_status_), #call, __FILE__, __LINE__);   \
  } while (0)

namespace overlap::gpu {

// Number of CUDA devices, 0 when there is no driver or no GPU (never throws).
inline int device_count() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

// The current device's SM count (common/device_sms.hpp's query, checked): the grid of a
// microbenchmark that runs one CTA an SM.
inline int current_sm_count() {
  int sms = 0;
  OVERLAP_CUDA_CHECK(cuda::current_device_sms(&sms));
  return sms;
}

}  // namespace overlap::gpu
