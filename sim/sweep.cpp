#include "sim/sweep.hpp"

#include <atomic>
#include <charconv>
#include <map>
#include <mutex>

#include <tbb/parallel_for.h>

#include "core/error.hpp"
#include "sim/variants.hpp"

namespace overlap::sim {
namespace {

std::int64_t to_int(std::string_view s, std::string_view whole) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  OVERLAP_REQUIRE(ec == std::errc() && end == s.data() + s.size(), "sweep '{}': '{}' is not an integer", whole, s);
  return v;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    const auto p = s.find(sep);
    out.push_back(s.substr(0, p));
    if (p == std::string_view::npos) return out;
    s.remove_prefix(p + 1);
  }
}

}  // namespace

std::vector<std::string> split_names(std::string_view list) {
  std::vector<std::string> out;
  for (auto item : split(list, ','))
    if (!item.empty()) out.emplace_back(item);
  return out;
}

std::vector<std::string> profile_list(std::string_view hw) {
  return hw == "all" ? builtin_profile_names() : split_names(hw);
}

std::vector<std::string> variant_list(std::string_view workload, std::string_view variants) {
  if (variants != "all") return split_names(variants);
  std::vector<std::string> out;
  for (const auto& v : list_variants(workload)) out.push_back(v.name);
  return out;
}

SweepAxis parse_sweep_axis(std::string_view text) {
  const auto eq = text.find('=');
  OVERLAP_REQUIRE(eq != std::string_view::npos && eq > 0,
                  "sweep '{}' is not KEY=FROM:TO:xFACTOR, KEY=FROM:TO:+STEP or KEY=A/B/C", text);
  SweepAxis a;
  a.key = std::string(text.substr(0, eq));
  const std::string_view spec = text.substr(eq + 1);
  if (spec.find(':') == std::string_view::npos) {
    for (auto v : split(spec, '/')) a.values.push_back(to_int(v, text));
    return a;
  }
  const auto parts = split(spec, ':');
  OVERLAP_REQUIRE(parts.size() == 3 && parts[2].size() >= 2 && (parts[2][0] == 'x' || parts[2][0] == '+'),
                  "sweep '{}' is not KEY=FROM:TO:xFACTOR or KEY=FROM:TO:+STEP", text);
  const std::int64_t from = to_int(parts[0], text), to = to_int(parts[1], text), by = to_int(parts[2].substr(1), text);
  OVERLAP_REQUIRE(from >= 1 && to >= from, "sweep '{}': need 1 <= FROM <= TO", text);
  OVERLAP_REQUIRE(by >= (parts[2][0] == 'x' ? 2 : 1), "sweep '{}': the factor must be at least 2, the step at least 1", text);
  for (std::int64_t v = from; v <= to; v = parts[2][0] == 'x' ? v * by : v + by) {
    a.values.push_back(v);
    OVERLAP_REQUIRE(a.values.size() <= 100000, "sweep '{}' has too many values", text);
  }
  return a;
}

std::vector<SweepConfig> expand_sweep(const std::vector<std::string>& hws, const std::vector<std::string>& variants,
                                      std::string_view base_shape, const std::vector<SweepAxis>& axes) {
  std::vector<std::string> shapes{std::string(base_shape)};
  for (const auto& axis : axes) {
    std::vector<std::string> next;
    for (const auto& s : shapes)
      for (auto v : axis.values) {
        // Later keys override earlier ones: strip `key=` from the base before appending.
        std::string kept;
        for (auto item : split(s, ','))
          if (!item.empty() && item.substr(0, item.find('=')) != axis.key)
            kept += (kept.empty() ? "" : ",") + std::string(item);
        next.push_back(kept + (kept.empty() ? "" : ",") + axis.key + "=" + std::to_string(v));
      }
    shapes = std::move(next);
  }
  std::vector<SweepConfig> out;
  for (const auto& h : hws)
    for (const auto& v : variants)
      for (const auto& s : shapes) out.push_back({h, v, s});
  return out;
}

std::vector<SweepRow> run_sweep(std::string_view workload, const std::vector<SweepConfig>& configs,
                                const std::function<void(std::size_t, std::size_t)>& progress) {
  std::map<std::string, HardwareProfile> profiles;  // loaded once, read-only in the workers
  for (const auto& c : configs)
    if (!profiles.count(c.hw)) profiles.emplace(c.hw, load_profile(c.hw));
  for (const auto& c : configs) (void)find_variant_model(workload, c.variant);  // unknown names fail early
  std::vector<SweepRow> rows(configs.size());
  std::atomic<std::size_t> done{0};
  std::mutex report;
  tbb::parallel_for(std::size_t(0), configs.size(), [&](std::size_t i) {
    SweepRow& row = rows[i];
    row.config = configs[i];
    const HardwareProfile& hw = profiles.at(configs[i].hw);
    const ShapeArgs shape = parse_shape(workload, configs[i].shape);
    const std::string why = cannot_run(hw, workload, configs[i].variant, shape);
    if (why.empty()) {
      row.prediction = predict(hw, workload, configs[i].variant, shape);
      row.ok = true;
    } else {
      row.error = why;
    }
    const std::size_t n = ++done;
    if (progress) {
      std::lock_guard lock(report);
      progress(n, configs.size());
    }
  });
  return rows;
}

std::string sweep_table(const std::vector<SweepRow>& rows) {
  std::string s = fmt::format("{:<6} {:<32} {:<44} {:>12} {:>9} {:>9} {:>8}  {}\n", "hw", "variant", "shape", "time_us",
                              "GB/s", "TFLOP/s", "hidden", "bottleneck");
  for (const auto& r : rows) {
    if (!r.ok) {
      s += fmt::format("{:<6} {:<32} {:<44} {:>12}  {}\n", r.config.hw, r.config.variant, r.config.shape, "n/a", r.error);
      continue;
    }
    const auto& p = r.prediction;
    s += fmt::format("{:<6} {:<32} {:<44} {:>12.2f} {:>9.0f} {:>9.1f} {:>7.0f}%  {}\n", r.config.hw, p.variant, p.shape,
                     p.time_us, p.achieved_GBps, p.achieved_TFLOPs, 100 * p.load_hidden_fraction, p.bottleneck);
  }
  return s;
}

std::string sweep_csv(const std::vector<SweepRow>& rows) {
  std::string s = "hw,workload,variant,shape,time_us,hbm_bytes,flops,achieved_GBps,achieved_TFLOPs,load_hidden_fraction,"
                  "bottleneck,copy,tensor,fma,sfu,hbm,launch,error\n";
  for (const auto& r : rows) {
    if (!r.ok) {
      s += fmt::format("{},,{},\"{}\",,,,,,,,,,,,,,\"{}\"\n", r.config.hw, r.config.variant, r.config.shape, r.error);
      continue;
    }
    const auto& p = r.prediction;
    const auto u = [&](const char* n) { return p.units.count(n) ? p.units.at(n) : 0.0; };
    s += fmt::format("{},{},{},\"{}\",{:.4f},{:.0f},{:.0f},{:.2f},{:.3f},{:.4f},{},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f},\n",
                     p.hw, p.workload, p.variant, p.shape, p.time_us, p.hbm_bytes, p.flops, p.achieved_GBps,
                     p.achieved_TFLOPs, p.load_hidden_fraction, p.bottleneck, u("copy"), u("tensor"), u("fma"), u("sfu"),
                     u("hbm"), u("launch"));
  }
  return s;
}

nlohmann::json sweep_json(const std::vector<SweepRow>& rows) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& r : rows) {
    if (r.ok) a.push_back(r.prediction.to_json());
    else a.push_back({{"hw", r.config.hw}, {"variant", r.config.variant}, {"shape", r.config.shape}, {"error", r.error}});
  }
  return a;
}

}  // namespace overlap::sim
