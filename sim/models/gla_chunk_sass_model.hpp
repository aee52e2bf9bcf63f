#pragma once
// The per-chunk work of the sequential and pipelined gla kernels (cuda/gla/gla_chunk_kernel.cuh)
// from their compiled code: each barrier-separated phase charges the SASS of its marked regions
// (sim/models/generated/gla_chunk_sass.hpp, counted by tools/sass_mix.py and checked against a
// fresh compile by the CPU test sim.sass_mix_matches_gla_chunk).
#include <optional>
#include <vector>

#include "sim/kernel.hpp"
#include "sim/profile.hpp"

namespace overlap::sim::gla_chunk {

// The kernel's template argument: one walk keeping S on chip, the states pass, the outputs pass.
enum class Pass { Fused = 0, States = 1, Outputs = 2 };

struct Phases {
  std::vector<Step> compute;            // on this chunk's data
  std::vector<Step> carried;            // after the previous chunk's state
  std::vector<BarrierSpec> barriers;    // the phases' pipe barriers, from kTileLoopBarriers on
};

// One chunk of the kernel compiled for head dim K with `stages` stages, or nothing where the
// table has no such instantiation (a tiling our kernels do not compile).
std::optional<Phases> sass_chunk_phases(const HardwareProfile& hw, int K, int stages, Pass pass, int chunk);

}  // namespace overlap::sim::gla_chunk
