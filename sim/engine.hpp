#pragma once
// Event-driven simulation of ONE SM running `ctas_on_sm` resident CTAs of a kernel while
// `active_sms` SMs in total are running (they share HBM and L2 bandwidth equally: every SM of
// a wave runs the same CTAs, so by symmetry each gets 1/active_sms of the device bandwidth,
// capped by its own L2->SM port). Units are fluid processor-sharing servers: concurrent ops
// on one unit split its throughput max-min fairly, each op limited by the share of the SM its
// role's warps can drive. See sim/README.md for the approximations.
#include <array>
#include <string>
#include <vector>

#include "sim/kernel.hpp"
#include "sim/profile.hpp"

namespace overlap::sim {

struct TraceEvent {
  std::string track;  // "unit copy", "cta0 consumer1", ...
  std::string name;
  double start_ns = 0, end_ns = 0;
  bool async = false;  // may overlap others on its track
};

struct SmResult {
  double time_ns = 0;
  std::array<double, kUnitCount> busy_ns{};  // integral of each unit's utilisation
  double load_ns = 0;         // time with at least one load in flight (transfer or latency)
  double load_hidden_ns = 0;  // part of load_ns during which a compute unit was busy
  // Work of ONE CTA (every CTA of a kernel runs the same program):
  double tensor_flops = 0, fma_ops = 0, sfu_ops = 0, smem_bytes = 0;
  double load_bytes = 0, store_bytes = 0, hbm_bytes = 0;
};

// `cold_start`: the kernel's first wave, whose loads land no earlier than the profile's cold
// first load (tma_first_load_ns) after its start. `launch_sms`: the SMs the whole launch holds,
// which set the clock its tensor steps run at (HardwareProfile::tensor_clock_boost; 0: every SM).
SmResult simulate_sm(const HardwareProfile& hw, const KernelSpec& kernel, int ctas_on_sm, double active_sms,
                     std::vector<TraceEvent>* trace = nullptr, bool cold_start = false, double launch_sms = 0);

}  // namespace overlap::sim
