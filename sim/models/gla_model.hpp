#pragma once
// The gla kernels' models that other models build on (gla_model.cpp and
// gla_pingpong_fused_model.cpp have the rest).
#include <cstdint>

#include "sim/kernel.hpp"
#include "sim/profile.hpp"

namespace overlap::sim {

struct GlaKernelShape {
  std::int64_t B, T, H, K, V;
  bool h0, hT;
};

// The materialized carry's state pass with the pipelined schedule (gla_chunk_kernel.cuh,
// Pass::States): S_n entering every chunk, written as bf16. gla's backward runs it first.
KernelSpec gla_pipelined_states_kernel(const HardwareProfile& hw, const GlaKernelShape& shape);

}  // namespace overlap::sim
