// Every dualgemm variant with bf16 operands (one translation unit per format, so the two
// formats' kernels compile in parallel).
#include "dualgemm/dualgemm_launch.cuh"

namespace overlap::cuda::dualgemm_launch {

cudaError_t launch_bf16(std::size_t index, const DualGemmDeviceArgs& args, const DualGemmSizes& shape,
                        cudaStream_t stream) {
  return launch_variant<false>(index, args, shape, stream);
}

}  // namespace overlap::cuda::dualgemm_launch
