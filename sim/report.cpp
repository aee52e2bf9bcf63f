// Human-readable output of predictions and comparisons.
#include <fmt/format.h>

#include <cmath>

#include "sim/api.hpp"

namespace overlap::sim {
namespace {

std::string bytes_text(double b) {
  if (b >= 1e9) return fmt::format("{:.2f} GB", b * 1e-9);
  if (b >= 1e6) return fmt::format("{:.2f} MB", b * 1e-6);
  return fmt::format("{:.1f} KB", b * 1e-3);
}

std::string time_text(double us) { return us >= 1000 ? fmt::format("{:.3f} ms", us * 1e-3) : fmt::format("{:.2f} us", us); }

}  // namespace

std::string format_prediction(const Prediction& p) {
  std::string s;
  s += fmt::format("{} {} on {}  ({})\n", p.workload, p.variant, p.hw, p.shape);
  s += fmt::format("  predicted time      {}\n", time_text(p.time_us));
  s += fmt::format("  HBM traffic         {}  ->  {:.0f} GB/s achieved\n", bytes_text(p.hbm_bytes), p.achieved_GBps);
  s += fmt::format("  work                {:.3g} GFLOP ({:.3g} on tensor cores)  ->  {:.1f} TFLOP/s achieved\n",
                   p.flops * 1e-9, p.tensor_flops * 1e-9, p.achieved_TFLOPs);
  s += fmt::format("  bottleneck          {}\n", p.bottleneck);
  s += fmt::format("  load time hidden    {:.0f}%\n", 100 * p.load_hidden_fraction);
  s += "  busy fraction       ";
  for (const char* u : {"hbm", "copy", "tensor", "fma", "sfu", "smem", "launch"})
    s += fmt::format("{} {:.0f}%  ", u, 100 * (p.units.count(u) ? p.units.at(u) : 0.0));
  s += "\n  busy on SMs w/ work ";
  for (const char* u : {"copy", "tensor", "fma", "sfu", "smem"})
    s += fmt::format("{} {:.0f}%  ", u, 100 * (p.units_active.count(u) ? p.units_active.at(u) : 0.0));
  s += fmt::format("(SM-time with CTAs: {:.0f}%)", 100 * p.sm_fill);
  s += "\n  why                 " + p.explanation + "\n";
  s += fmt::format("  {:<30} {:>10} {:>6} {:>12} {:>7} {:>11} {:>9} {:>8}\n", "kernel", "time", "CTAs", "per SM", "waves",
                   "HBM", "hidden", "bound");
  for (const auto& k : p.kernels) {
    const std::string waves = k.tail_ctas ? fmt::format("{}+tail", k.full_waves) : fmt::format("{}", k.full_waves);
    s += fmt::format("  {:<30} {:>10} {:>6} {:>12} {:>7} {:>11} {:>8.0f}% {:>8}\n", k.name, time_text(k.time_us), k.ctas,
                     fmt::format("{} ({})", k.ctas_per_sm, k.occupancy_limiter == "CTA slots" ? "slots" : k.occupancy_limiter.substr(0, 4)),
                     waves, bytes_text(k.hbm_bytes), 100 * k.load_hidden_fraction, k.bottleneck);
  }
  return s;
}

Comparison compare(const Prediction& a, const Prediction& b) {
  Comparison c{a, b, a.time_us / b.time_us, {}};
  const auto u = [](const Prediction& p, const std::string& n) {
    return p.units_active.count(n) ? p.units_active.at(n) : 0.0;
  };
  std::vector<std::string> why;
  if (a.bottleneck != b.bottleneck) why.push_back(fmt::format("bottleneck {} -> {}", a.bottleneck, b.bottleneck));
  if (std::abs(a.load_hidden_fraction - b.load_hidden_fraction) > 0.05)
    why.push_back(fmt::format("load time hidden {:.0f}% -> {:.0f}%", 100 * a.load_hidden_fraction, 100 * b.load_hidden_fraction));
  if (a.hbm_bytes > 0 && std::abs(b.hbm_bytes / a.hbm_bytes - 1) > 0.05)
    why.push_back(fmt::format("HBM traffic {:.3g} -> {:.3g} MB", a.hbm_bytes * 1e-6, b.hbm_bytes * 1e-6));
  if (a.kernels.size() != b.kernels.size()) why.push_back(fmt::format("launches {} -> {}", a.kernels.size(), b.kernels.size()));
  if (a.tensor_flops > 0 && std::abs(b.tensor_flops / a.tensor_flops - 1) > 0.05)
    why.push_back(fmt::format("tensor work {:.3g} -> {:.3g} GFLOP", a.tensor_flops * 1e-9, b.tensor_flops * 1e-9));
  const std::string bn = b.bottleneck;
  if (why.empty() || (a.bottleneck == b.bottleneck && bn != "latency" && bn != "launch"))
    why.push_back(fmt::format("{} busy {:.0f}% -> {:.0f}%", bn, 100 * u(a, bn), 100 * u(b, bn)));
  if (std::abs(a.sm_fill - b.sm_fill) > 0.1)
    why.push_back(fmt::format("SM-time with CTAs {:.0f}% -> {:.0f}%", 100 * a.sm_fill, 100 * b.sm_fill));
  if (!a.kernels.empty() && !b.kernels.empty() &&
      (a.kernels.front().ctas_per_sm != b.kernels.front().ctas_per_sm))
    why.push_back(fmt::format("CTAs per SM {} -> {}", a.kernels.front().ctas_per_sm, b.kernels.front().ctas_per_sm));
  std::string reason;
  for (const auto& w : why) reason += (reason.empty() ? "" : "; ") + w;
  c.reason = reason;
  return c;
}

std::string format_comparison(const Comparison& c) {
  return fmt::format("{} {} on {} ({})\n  {:<28} {:>12}  bound by {}\n  {:<28} {:>12}  bound by {}\n"
                     "  speedup of {} over {}: {:.2f}x\n  why: {}\n",
                     c.a.workload, c.a.variant + " vs " + c.b.variant, c.a.hw, c.a.shape, c.a.variant,
                     fmt::format("{:.2f} us", c.a.time_us), c.a.bottleneck, c.b.variant,
                     fmt::format("{:.2f} us", c.b.time_us), c.b.bottleneck, c.b.variant, c.a.variant, c.speedup, c.reason);
}

}  // namespace overlap::sim
