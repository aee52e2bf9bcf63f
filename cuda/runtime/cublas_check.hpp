#pragma once
// cuBLAS and cuBLASLt calls are checked like CUDA runtime calls (cuda_check.hpp): a failure
// becomes an overlap::Error naming the call, the status and where it happened.
#include <cublas_api.h>

#include "core/error.hpp"

#define OVERLAP_CUBLAS_CHECK(call)                                                               \
  do {                                                                                           \
    const cublasStatus_t overlap_cublas_status_ = (call);                                        \
    if (overlap_cublas_status_ != CUBLAS_STATUS_SUCCESS)                                         \
      ::overlap::fail("cuBLAS error {} in {} at {}:{}", cublasGetStatusString(overlap_cublas_status_), #call, \
                      __FILE__, __LINE__);                                                       \
  } while (0)
