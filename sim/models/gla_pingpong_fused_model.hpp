#pragma once
// The model of cuda/gla/gla_pingpong_fused.cuh (gla's pingpong_fused variant); see the .cpp.
#include <cstdint>

#include "sim/kernel.hpp"
#include "sim/models/gla_model.hpp"
#include "sim/profile.hpp"

namespace overlap::sim {

KernelSpec gla_pingpong_fused_kernel(const HardwareProfile& hw, const GlaKernelShape& shape);

}  // namespace overlap::sim
