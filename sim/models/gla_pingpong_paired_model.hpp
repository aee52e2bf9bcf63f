#pragma once
// The model of cuda/gla/gla_pingpong_kernel.cuh (gla's pingpong_materialized variant: a states
// kernel, then an outputs kernel, in the kernels' paired form); see the .cpp.
#include <vector>

#include "sim/kernel.hpp"
#include "sim/models/gla_model.hpp"
#include "sim/profile.hpp"

namespace overlap::sim {

std::vector<KernelSpec> gla_pingpong_paired_kernels(const HardwareProfile& hw, const GlaKernelShape& shape);

}  // namespace overlap::sim
