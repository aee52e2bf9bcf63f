#pragma once
// gla training on a variable-length batch (cuda/gla/gla_varlen.hpp): the forward
// (pingpong_fused, saving every chunk's state) and the saved_states backward over packed
// sequences of different lengths, against the same steps as equal sequences.
//
// The model takes each kernel's cost from its prediction on the equal batch (N sequences of
// round(total / N) steps): the time of one CTA at full occupancy, per chunk for the kernels
// whose CTAs walk a sequence (the forward, the dS walk) and per CTA for the chunk-parallel one.
// On the packed batch a walk CTA takes its sequence's chunks at that rate; the CTAs go to the
// GPU's CTA slots (SMs x CTAs an SM) in the kernels' order, longest walk first, each to the
// slot that frees first (list scheduling; the hardware's block scheduler does the same), each
// CTA first reading its sequence from the plan (two dependent L2 reads). What the model leaves
// out: a busy SM's bandwidth share growing as the others drain (it charges the
// full-occupancy rate to the end), the masked steps of each sequence's last chunk.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/profile.hpp"

namespace overlap::sim {

struct VarlenKernelTime {
  std::string name;
  double equal_us = 0, varlen_us = 0;
};

struct VarlenPrediction {
  std::int64_t steps = 0, equal_T = 0;
  double equal_us = 0, varlen_us = 0;
  double per_step_ratio = 0;  // (varlen_us / steps) / (equal_us / (N equal_T))
  std::vector<VarlenKernelTime> kernels;
};

// Lengths >= 0 (zero allowed), at least one positive; K, V as the kernels take them.
VarlenPrediction predict_gla_varlen_train(const HardwareProfile& hw, const std::vector<std::int64_t>& lengths,
                                          std::int64_t H, std::int64_t K, std::int64_t V);

// The benchmark's batch (bench/gpu/bench_gla_varlen.py): 64 lengths max(1, round(8192 (i/63)^3)).
std::vector<std::int64_t> gla_varlen_bench_lengths();

}  // namespace overlap::sim
