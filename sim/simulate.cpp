#include "sim/simulate.hpp"

#include <algorithm>

#include "sim/occupancy.hpp"

namespace overlap::sim {
KernelResult simulate_kernel(const HardwareProfile& hw, const KernelSpec& k, double start_ns,
                             std::vector<TraceEvent>* trace, bool queued) {
  const Occupancy occ = occupancy(hw, k);
  KernelResult r;
  r.name = k.name;
  r.ctas = k.ctas;
  r.ctas_per_sm = occ.ctas_per_sm;
  r.occupancy_limiter = occ.limiter;
  r.launch_ns = (k.launch_us >= 0                            ? k.launch_us
                 : queued && hw.queued_kernel_gap_us > 0 ? hw.queued_kernel_gap_us
                                                         : hw.launch_overhead_us) *
                1e3;

  const std::int64_t sms = std::int64_t(hw.sm_count);
  // Clusters are placed whole, within the measured cluster slots (resident_ctas). A persistent
  // kernel whose CTA count is its output tiles (gemm_model.cpp) then runs the tiles past those
  // slots as a tail, as its launcher's grid of the resident clusters walks them.
  const std::int64_t slots = resident_ctas(hw, occ.ctas_per_sm, k.cluster_size);
  r.full_waves = k.ctas / slots;
  r.tail_ctas = k.ctas % slots;

  std::vector<TraceEvent> local;
  std::vector<TraceEvent>* sink = trace ? &local : nullptr;
  double waves_ns = 0, active_sm_ns = 0;
  std::array<double, kUnitCount> busy_sm_ns{};
  SmResult per_cta;
  // A workload's first kernel finds nothing warm (tensor descriptors, address translation, the
  // data in DRAM): its first wave's loads land no earlier than the profile's cold first load;
  // later waves, and kernels queued behind another (whose data that one touched), do not wait
  // it. Copy-engine transfers (launch_us >= 0) are not kernels.
  const bool cold = k.launch_us < 0 && !queued && hw.tma_first_load_ns > 0;
  const auto add_wave = [&](const SmResult& w, double count, double wave_sms) {
    waves_ns += count * w.time_ns;
    active_sm_ns += count * wave_sms * w.time_ns;
    for (int u = 0; u < kUnitCount; ++u) busy_sm_ns[u] += count * wave_sms * w.busy_ns[u];
    r.load_ns += count * wave_sms * w.load_ns;
    r.load_hidden_ns += count * wave_sms * w.load_hidden_ns;
  };
  if (r.full_waves > 0) {
    const SmResult first = simulate_sm(hw, k, occ.ctas_per_sm, double(sms), sink, cold);
    sink = nullptr;
    add_wave(first, 1, double(sms));
    if (r.full_waves > 1)
      add_wave(cold ? simulate_sm(hw, k, occ.ctas_per_sm, double(sms)) : first, double(r.full_waves - 1), double(sms));
    per_cta = first;
  }
  if (r.tail_ctas > 0) {
    // The block scheduler spreads the last CTAs over as many SMs as it can.
    const std::int64_t tail_sms = std::min(sms, r.tail_ctas);
    const int per_sm = int((r.tail_ctas + tail_sms - 1) / tail_sms);
    // The clock is the launch's: a launch that is all tail holds tail_sms SMs, one whose tail
    // follows full waves held every SM (not measured apart: a tail this short is assumed to
    // keep the clock the full waves set).
    const double launch_sms = r.full_waves == 0 ? double(tail_sms) : double(sms);
    const SmResult tail = simulate_sm(hw, k, per_sm, double(tail_sms), sink, cold && r.full_waves == 0, launch_sms);
    add_wave(tail, 1, double(tail_sms));
    if (r.full_waves == 0) per_cta = tail;
  }
  // Where the kernel states its bytes over all CTAs (its simulated CTA is not typical of them),
  // it takes at least as long as HBM needs to move them.
  if (k.hbm_bytes >= 0) waves_ns = std::max(waves_ns, k.hbm_bytes / hw.hbm_bandwidth_GBps);
  r.time_ns = r.launch_ns + waves_ns;
  for (int u = 0; u < kUnitCount; ++u) {
    r.busy[u] = busy_sm_ns[u] / (double(sms) * r.time_ns);
    r.busy_active[u] = active_sm_ns > 0 ? busy_sm_ns[u] / active_sm_ns : 0;
  }
  r.sm_fill = waves_ns > 0 ? active_sm_ns / (double(sms) * waves_ns) : 0;
  const double n = double(k.ctas);
  r.tensor_flops = per_cta.tensor_flops * n;
  r.fma_ops = per_cta.fma_ops * n;
  r.sfu_ops = per_cta.sfu_ops * n;
  r.smem_bytes = per_cta.smem_bytes * n;
  r.hbm_bytes = k.hbm_bytes >= 0 ? k.hbm_bytes : per_cta.hbm_bytes * n;
  r.load_bytes = per_cta.load_bytes * n;
  r.store_bytes = per_cta.store_bytes * n;
  if (trace) {
    trace->push_back({"kernels", k.name + " (launch)", start_ns, start_ns + r.launch_ns, false});
    trace->push_back({"kernels", k.name, start_ns + r.launch_ns, start_ns + r.time_ns, false});
    for (auto& e : local) {
      e.start_ns += start_ns + r.launch_ns;
      e.end_ns += start_ns + r.launch_ns;
      trace->push_back(std::move(e));
    }
  }
  return r;
}

}  // namespace overlap::sim
