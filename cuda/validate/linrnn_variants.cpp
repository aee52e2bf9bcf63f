// linrnn's kernels as validation variants. No linrnn kernel is compiled yet (issue 6), so the
// list is empty and `overlap validate` reports linrnn as having nothing to measure.
#include "validate/gpu_variant.hpp"

namespace overlap::gpu {

std::vector<GpuVariant> linrnn_gpu_variants() { return {}; }

}  // namespace overlap::gpu
