#pragma once
// Sweeps over shapes, variants and hardware profiles: `--sweep T=512:8192:x2` (geometric),
// `T=512:4096:+512` (arithmetic) or `T=512/1024/4096` (a list); several sweeps combine as a
// cartesian product over a base shape.
#include <functional>
#include <string>
#include <vector>

#include "sim/api.hpp"

namespace overlap::sim {

// Name lists as the command line and the Python package take them.
std::vector<std::string> split_names(std::string_view list);  // "a,b" -> {a, b}; empty items dropped
// A comma list of profile names or files, or "all" (every built-in profile).
std::vector<std::string> profile_list(std::string_view hw);
// A comma list of variant names, or "all" (every variant modelled for `workload`).
std::vector<std::string> variant_list(std::string_view workload, std::string_view variants);

struct SweepAxis {
  std::string key;
  std::vector<std::int64_t> values;
};
SweepAxis parse_sweep_axis(std::string_view text);

struct SweepConfig {
  std::string hw, variant, shape;  // shape text to parse with the workload's keys
};
// The cartesian product, in order hw x variant x axes (last axis fastest).
std::vector<SweepConfig> expand_sweep(const std::vector<std::string>& hws, const std::vector<std::string>& variants,
                                      std::string_view base_shape, const std::vector<SweepAxis>& axes);

struct SweepRow {
  SweepConfig config;
  bool ok = false;
  std::string error;  // cannot run: why
  Prediction prediction;
};
// Runs every configuration (in parallel; results in input order). `progress(done, total)` is
// called from worker threads, serialised.
std::vector<SweepRow> run_sweep(std::string_view workload, const std::vector<SweepConfig>& configs,
                                const std::function<void(std::size_t, std::size_t)>& progress = {});

std::string sweep_table(const std::vector<SweepRow>& rows);
std::string sweep_csv(const std::vector<SweepRow>& rows);
nlohmann::json sweep_json(const std::vector<SweepRow>& rows);

}  // namespace overlap::sim
