#include "sim/tune.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"
#include "sim/api.hpp"

namespace overlap::sim {

TuneResult tune(const HardwareProfile& hw, std::string_view workload, const ShapeArgs& shape) {
  TuneResult t{std::string(workload), hw.name, shape.to_string(), {}};
  for (const VariantInfo& v : list_variants(workload)) {
    TuneEntry e;
    e.variant = v.name;
    e.cannot_run = cannot_run(hw, workload, v.name, shape);
    if (e.cannot_run.empty()) {
      const Prediction p = predict(hw, workload, v.name, shape);
      e.time_us = p.time_us;
      e.bottleneck = p.bottleneck;
    }
    t.ranked.push_back(std::move(e));
  }
  // Predicted first, fastest first; ties keep the listed order (the baseline comes first).
  std::stable_sort(t.ranked.begin(), t.ranked.end(), [](const TuneEntry& a, const TuneEntry& b) {
    if (a.cannot_run.empty() != b.cannot_run.empty()) return a.cannot_run.empty();
    return a.cannot_run.empty() && a.time_us < b.time_us;
  });
  return t;
}

std::string format_tune(const TuneResult& t) {
  std::string out = fmt::format("{} on {} at {}: {} variants\n\n", t.workload, t.hw, t.shape, t.ranked.size());
  out += fmt::format("{:>4}  {:<36} {:>10} {:>8}  {}\n", "rank", "variant", "time_us", "vs pick", "bottleneck");
  const double best = t.has_pick() ? t.ranked.front().time_us : 0;
  int rank = 0;
  for (const TuneEntry& e : t.ranked) {
    if (e.cannot_run.empty())
      out += fmt::format("{:>4}  {:<36} {:>10.2f} {:>7.2f}x  {}\n", ++rank, e.variant, e.time_us, e.time_us / best,
                         e.bottleneck);
    else
      out += fmt::format("{:>4}  {:<36} {:>10} {:>8}  cannot run: {}\n", "-", e.variant, "-", "-", e.cannot_run);
  }
  if (t.has_pick())
    out += fmt::format("\npick: {} ({:.2f} us, {}-bound)\n", t.ranked.front().variant, best,
                       t.ranked.front().bottleneck);
  else
    out += "\npick: none (no variant can run this shape on this GPU)\n";
  return out;
}

nlohmann::json tune_json(const TuneResult& t) {
  nlohmann::ordered_json j;
  j["workload"] = t.workload;
  j["hw"] = t.hw;
  j["shape"] = t.shape;
  j["pick"] = t.has_pick() ? nlohmann::ordered_json(t.ranked.front().variant) : nlohmann::ordered_json(nullptr);
  j["ranked"] = nlohmann::ordered_json::array();
  for (const TuneEntry& e : t.ranked) {
    nlohmann::ordered_json r = {{"variant", e.variant}};
    if (e.cannot_run.empty()) {
      r["time_us"] = e.time_us;
      r["bottleneck"] = e.bottleneck;
    } else {
      r["cannot_run"] = e.cannot_run;
    }
    j["ranked"].push_back(std::move(r));
  }
  return j;
}

}  // namespace overlap::sim
