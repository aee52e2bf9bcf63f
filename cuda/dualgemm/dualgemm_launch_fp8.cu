// Every dualgemm variant with fp8 operands (one translation unit per format, so the two
// formats' kernels compile in parallel).
#include "dualgemm/dualgemm_launch.cuh"

namespace overlap::cuda::dualgemm_launch {

cudaError_t launch_fp8(std::size_t index, const DualGemmDeviceArgs& args, const DualGemmSizes& shape,
                       cudaStream_t stream) {
  return launch_variant<true>(index, args, shape, stream);
}

}  // namespace overlap::cuda::dualgemm_launch
