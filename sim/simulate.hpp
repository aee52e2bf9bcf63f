#pragma once
// One kernel launch on the whole GPU: CTAs placed on SMs in waves by occupancy, each distinct
// wave simulated once on a representative SM (full waves are identical, so one simulation is
// replicated; the last, partial wave runs with fewer active SMs and hence a larger share of
// HBM/L2 bandwidth), plus the launch overhead.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/engine.hpp"
#include "sim/kernel.hpp"
#include "sim/profile.hpp"

namespace overlap::sim {

struct KernelResult {
  std::string name;
  std::int64_t ctas = 0;
  int ctas_per_sm = 0;
  std::string occupancy_limiter;
  std::int64_t full_waves = 0;
  std::int64_t tail_ctas = 0;  // CTAs in the last, partial wave
  double launch_ns = 0;
  double time_ns = 0;  // launch + waves
  std::array<double, kUnitCount> busy{};         // GPU-average utilisation of each unit over time_ns
  std::array<double, kUnitCount> busy_active{};  // the same over the SMs that had CTAs (the bottleneck)
  double sm_fill = 0;  // share of SM-time (after launch) in which an SM had CTAs
  double load_ns = 0, load_hidden_ns = 0;  // summed over SMs
  double tensor_flops = 0, fma_ops = 0, sfu_ops = 0, smem_bytes = 0;
  double hbm_bytes = 0, load_bytes = 0, store_bytes = 0;
};

// `trace` (optional) receives the timeline of one SM of the first wave, shifted by start_ns.
// `queued`: the kernel is launched right behind another of the same workload, so its launch costs
// the profile's queued_kernel_gap_us where measured (an empty kernel behind another), not a whole
// launch_overhead_us.
KernelResult simulate_kernel(const HardwareProfile& hw, const KernelSpec& kernel, double start_ns = 0,
                             std::vector<TraceEvent>* trace = nullptr, bool queued = false);

}  // namespace overlap::sim
