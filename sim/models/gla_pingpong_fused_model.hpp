#pragma once
// The model of cuda/gla/gla_pingpong_fused.cuh (gla's pingpong_fused variant); see the .cpp.
#include <cstdint>

#include "sim/kernel.hpp"
#include "sim/profile.hpp"

namespace overlap::sim {

struct GlaPingpongFusedShape {
  std::int64_t B, T, H, K, V;
  bool h0, hT;
};

KernelSpec gla_pingpong_fused_kernel(const HardwareProfile& hw, const GlaPingpongFusedShape& shape);

}  // namespace overlap::sim
