// projchain's kernels as validation variants. No projchain kernel is compiled yet (issue 6), so the
// list is empty and `overlap validate` reports projchain as having nothing to measure.
#include "validate/gpu_variant.hpp"

namespace overlap::gpu {

std::vector<GpuVariant> projchain_gpu_variants() { return {}; }

}  // namespace overlap::gpu
