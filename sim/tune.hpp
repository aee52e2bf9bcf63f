#pragma once
// `overlap tune`: every variant of a workload predicted at one shape on one profile, ranked by
// time; the pick is the fastest, with its bottleneck. Variants that cannot run the shape are
// listed last with the reason (can_implement), so a user sees the whole space.
//
//   TuneResult t = tune(load_profile("H100"), "dualgemm", parse_shape("dualgemm", "M=256,N=4096,K=7168,fmt=1"));
//   std::cout << format_tune(t);   // t.ranked[0] is the pick
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/shape_args.hpp"
#include "sim/profile.hpp"

namespace overlap::sim {

struct TuneEntry {
  std::string variant;
  double time_us = 0;         // 0 when it cannot run
  std::string bottleneck;
  std::string cannot_run;     // empty when predicted
};

struct TuneResult {
  std::string workload, hw, shape;
  std::vector<TuneEntry> ranked;  // predicted ones fastest first, then the refused ones
  bool has_pick() const { return !ranked.empty() && ranked.front().cannot_run.empty(); }
};

TuneResult tune(const HardwareProfile& hw, std::string_view workload, const ShapeArgs& shape);
std::string format_tune(const TuneResult& t);  // a table and the pick, for people
nlohmann::json tune_json(const TuneResult& t);

}  // namespace overlap::sim
