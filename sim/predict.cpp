#include <algorithm>

#include "core/error.hpp"
#include "sim/api.hpp"
#include "sim/simulate.hpp"
#include "sim/trace.hpp"
#include "sim/variants.hpp"

namespace overlap::sim {
namespace {

constexpr const char* kComputeUnits[] = {"tensor", "fma", "sfu", "smem"};

// The unit that limits the time: the busiest of HBM, the SM copy path (L2 / issue limited),
// tensor, FMA, SFU, shared memory and launch overhead; when none is busy at least half of the time the time
// goes to dependent latency (chains, unhidden loads, barriers).
std::string bottleneck_of(const std::map<std::string, double>& units) {
  std::string best = "latency";
  double best_v = 0.5;
  for (const char* u : {"hbm", "copy", "tensor", "fma", "sfu", "smem", "launch"}) {
    const auto it = units.find(u);
    if (it == units.end()) continue;
    // The copy path is only "the" bottleneck when it is busier than HBM by a margin: with
    // HBM-sourced loads both are busy together and HBM is the cause.
    const double v = std::string_view(u) == "copy" ? it->second - 0.1 : it->second;
    if (v > best_v) best = u, best_v = v;
  }
  return best;
}

std::string percent(double f) { return fmt::format("{:.0f}%", 100 * f); }

std::string explain(const Prediction& p) {
  // Busy fractions of the SMs that had work; the share of SMs with work is said separately.
  const auto u = [&](const char* n) { return p.units_active.count(n) ? p.units_active.at(n) : 0.0; };
  const std::string fill =
      p.sm_fill < 0.9 ? fmt::format("; only {} of SM-time has CTAs (too few CTAs / tail)", percent(p.sm_fill)) : "";
  std::string busiest_compute = "tensor";
  for (const char* c : kComputeUnits)
    if (u(c) > u(busiest_compute.c_str())) busiest_compute = c;
  const std::string hidden = fmt::format("{} of load time hidden behind compute", percent(p.load_hidden_fraction));
  const std::string launches = p.kernels.size() == 1 ? "1 launch" : fmt::format("{} launches", p.kernels.size());
  if (p.bottleneck == "hbm")
    return fmt::format("bound by HBM: {} of time at full bandwidth, {}; {} busy {}; {}{}", percent(u("hbm")), hidden,
                       busiest_compute, percent(u(busiest_compute.c_str())), launches, fill);
  if (p.bottleneck == "copy")
    return fmt::format("bound by the SM copy path (L2 / per-SM bandwidth or copy issue): busy {}, HBM {}; {}; {}{}",
                       percent(u("copy")), percent(u("hbm")), hidden, launches, fill);
  if (p.bottleneck == "launch")
    return fmt::format("bound by launch overhead: {} x {:.1f} us = {} of the time", launches,
                       p.kernels.empty() ? 0.0 : p.kernels.front().launch_us, percent(u("launch")));
  if (p.bottleneck == "latency")
    return fmt::format("latency-bound: no unit busy half the time (tensor {}, fma {}, hbm {}); dependent chains, "
                       "unhidden loads or too few CTAs ({}); {}",
                       percent(u("tensor")), percent(u("fma")), percent(u("hbm")),
                       p.kernels.empty() ? std::string("-")
                                         : fmt::format("{} CTAs on {} per SM", p.kernels.front().ctas,
                                                       p.kernels.front().ctas_per_sm),
                       hidden) + fill;
  return fmt::format("bound by {}: busy {} of the time, HBM {}; {}; {}{}", p.bottleneck, percent(u(p.bottleneck.c_str())),
                     percent(u("hbm")), hidden, launches, fill);
}

std::map<std::string, double> unit_map(const std::array<double, kUnitCount>& busy) {
  std::map<std::string, double> m;
  for (int i = 0; i < kUnitCount; ++i) m[std::string(unit_name(Unit(i)))] = busy[i];
  return m;
}

}  // namespace

std::vector<VariantInfo> list_variants(std::string_view workload) {
  std::vector<VariantInfo> out;
  if (!workload.empty()) {
    const auto names = workload_names();
    std::string known;
    for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
    OVERLAP_REQUIRE(std::find(names.begin(), names.end(), workload) != names.end(), "unknown workload '{}' (known: {})",
                    workload, known);
  }
  for (const auto& m : all_variant_models())
    if (workload.empty() || m.workload == workload) {
      std::vector<std::string> forms;
      for (const auto& f : m.forms) forms.push_back(f.name);
      out.push_back({m.workload, m.name, m.description, m.aliases, forms});
    }
  return out;
}

std::string cannot_run(const HardwareProfile& hw, std::string_view workload, std::string_view variant,
                       const ShapeArgs& shape) {
  const ResolvedVariant r = resolve_variant(workload, variant, shape);
  return r.model.cannot_run(hw, r.shape);
}

Prediction predict(const HardwareProfile& hw, std::string_view workload, std::string_view variant, const ShapeArgs& shape,
                   const PredictOptions& options) {
  const ResolvedVariant r = resolve_variant(workload, variant, shape);
  const std::string why = r.model.cannot_run(hw, r.shape);
  OVERLAP_REQUIRE(why.empty(), "{} {} cannot run {} on {}: {}", workload, variant, r.shape.to_string(), hw.name, why);
  const std::string name = variant.find('@') == std::string_view::npos ? r.model.name : std::string(variant);
  Prediction p = predict_kernels(hw, workload, name, r.shape, r.model.build(hw, r.shape), options);
  p.shape = shape.to_string();  // the launch form is in the variant's name
  return p;
}

Prediction predict_kernels(const HardwareProfile& hw, std::string_view workload, std::string_view variant,
                           const ShapeArgs& shape, const std::vector<KernelSpec>& kernels, const PredictOptions& options) {
  OVERLAP_REQUIRE(!kernels.empty(), "{} {}: no kernels to predict", workload, variant);
  Prediction p;
  p.workload = workload;
  p.variant = variant;
  p.hw = hw.name;
  p.shape = shape.to_string();
  std::vector<TraceEvent> trace;
  std::vector<TraceEvent>* sink = options.trace_path.empty() ? nullptr : &trace;
  double t_ns = 0, launch_ns = 0, load_ns = 0, hidden_ns = 0, fma_ops = 0;
  std::array<double, kUnitCount> busy_ns{}, busy_active_ns{};
  double fill_ns = 0;
  for (const auto& k : kernels) {
    const KernelResult r = simulate_kernel(hw, k, t_ns, sink, &k != &kernels.front());
    KernelPrediction kp;
    kp.name = r.name;
    kp.ctas = r.ctas;
    kp.ctas_per_sm = r.ctas_per_sm;
    kp.occupancy_limiter = r.occupancy_limiter;
    kp.full_waves = r.full_waves;
    kp.tail_ctas = r.tail_ctas;
    kp.time_us = r.time_ns * 1e-3;
    kp.launch_us = r.launch_ns * 1e-3;
    kp.hbm_bytes = r.hbm_bytes;
    kp.flops = r.tensor_flops + 2 * r.fma_ops;
    kp.units = unit_map(r.busy);
    kp.units["hbm"] = r.hbm_bytes / (r.time_ns * hw.hbm_bandwidth_GBps);
    kp.units["launch"] = r.launch_ns / r.time_ns;
    kp.sm_fill = r.sm_fill;
    kp.load_hidden_fraction = r.load_ns > 0 ? r.load_hidden_ns / r.load_ns : 0;
    std::map<std::string, double> active = unit_map(r.busy_active);
    const double running = r.time_ns - r.launch_ns;
    for (auto& [name, v] : active) v *= running / r.time_ns;  // launch time counts as idle
    active["hbm"] = kp.units["hbm"];
    active["launch"] = kp.units["launch"];
    kp.bottleneck = bottleneck_of(active);
    p.kernels.push_back(kp);
    for (int u = 0; u < kUnitCount; ++u) {
      busy_ns[u] += r.busy[u] * r.time_ns;
      busy_active_ns[u] += r.busy_active[u] * (r.time_ns - r.launch_ns);
    }
    fill_ns += r.sm_fill * (r.time_ns - r.launch_ns);
    t_ns += r.time_ns;
    launch_ns += r.launch_ns;
    load_ns += r.load_ns;
    hidden_ns += r.load_hidden_ns;
    fma_ops += r.fma_ops;
    p.tensor_flops += r.tensor_flops;
    p.hbm_bytes += r.hbm_bytes;
  }
  p.time_us = t_ns * 1e-3;
  p.flops = p.tensor_flops + 2 * fma_ops;
  p.achieved_GBps = p.hbm_bytes / t_ns;
  p.achieved_TFLOPs = p.flops / t_ns * 1e-3;
  for (int u = 0; u < kUnitCount; ++u) p.units[std::string(unit_name(Unit(u)))] = busy_ns[u] / t_ns;
  p.units["hbm"] = p.hbm_bytes / (t_ns * hw.hbm_bandwidth_GBps);
  p.units["launch"] = launch_ns / t_ns;
  for (int u = 0; u < kUnitCount; ++u) p.units_active[std::string(unit_name(Unit(u)))] = busy_active_ns[u] / t_ns;
  p.units_active["hbm"] = p.units["hbm"];
  p.units_active["launch"] = p.units["launch"];
  p.sm_fill = t_ns > launch_ns ? fill_ns / (t_ns - launch_ns) : 0;
  p.load_hidden_fraction = load_ns > 0 ? hidden_ns / load_ns : 0;
  p.bottleneck = bottleneck_of(p.units_active);
  p.explanation = explain(p);
  if (sink) write_chrome_trace(options.trace_path, trace, fmt::format("{} {} on {} ({})", workload, variant, hw.name, p.shape));
  return p;
}

nlohmann::json Prediction::to_json() const {
  nlohmann::json ks = nlohmann::json::array();
  for (const auto& k : kernels)
    ks.push_back({{"name", k.name}, {"ctas", k.ctas}, {"ctas_per_sm", k.ctas_per_sm},
                  {"occupancy_limiter", k.occupancy_limiter}, {"full_waves", k.full_waves},
                  {"tail_ctas", k.tail_ctas}, {"time_us", k.time_us}, {"launch_us", k.launch_us},
                  {"hbm_bytes", k.hbm_bytes}, {"flops", k.flops}, {"units", k.units}, {"sm_fill", k.sm_fill},
                  {"load_hidden_fraction", k.load_hidden_fraction}, {"bottleneck", k.bottleneck}});
  return {{"workload", workload}, {"variant", variant}, {"hw", hw}, {"shape", shape}, {"time_us", time_us},
          {"flops", flops}, {"tensor_flops", tensor_flops}, {"hbm_bytes", hbm_bytes},
          {"achieved_GBps", achieved_GBps}, {"achieved_TFLOPs", achieved_TFLOPs}, {"bottleneck", bottleneck},
          {"units", units}, {"units_active_sms", units_active}, {"sm_fill", sm_fill},
          {"load_hidden_fraction", load_hidden_fraction}, {"explanation", explanation},
          {"kernels", ks}};
}

}  // namespace overlap::sim
