#pragma once
// Between dualgemm_forward.cpp and the per-format launch files: launch the kernel of
// kTilings[index] for already-checked arguments (C++17: the .cu files include it).
#include <cstddef>

#include <cuda_runtime_api.h>

#include "dualgemm/dualgemm_args.hpp"

namespace overlap::cuda::dualgemm_launch {

cudaError_t launch_bf16(std::size_t index, const DualGemmDeviceArgs& args, const DualGemmSizes& shape,
                        cudaStream_t stream);
cudaError_t launch_fp8(std::size_t index, const DualGemmDeviceArgs& args, const DualGemmSizes& shape,
                       cudaStream_t stream);

}  // namespace overlap::cuda::dualgemm_launch
