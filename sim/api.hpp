#pragma once
// The simulator's public API: hardware profiles, the variants it models, and predictions.
//
//   HardwareProfile hw = load_profile("H100");
//   ShapeArgs shape = parse_shape("gla", "B=8,T=4096,H=16,K=128,V=128");
//   Prediction p = predict(hw, "gla", "pipelined", shape);
//   std::cout << format_prediction(p);
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/shape_args.hpp"
#include "sim/kernel.hpp"
#include "sim/profile.hpp"

namespace overlap::sim {

struct VariantInfo {
  std::string workload, name, description;
  std::vector<std::string> aliases;
  std::vector<std::string> forms;  // launch-form keys: "name@key=value"
};
// Every modelled variant of `workload` (all workloads when empty); throws on an unknown one.
std::vector<VariantInfo> list_variants(std::string_view workload = "");

// Shape text with the workload's own keys (its CPU reference's parse_shape) when that is
// built, otherwise the simulator's copy of the same key list.
ShapeArgs parse_shape(std::string_view workload, std::string_view text);
// The reference shape SPEC names for a workload (used by `predictions`).
std::string reference_shape(std::string_view workload);

struct PredictOptions {
  std::string trace_path;  // when set, write a Chrome trace-event JSON of one SM per kernel
};

struct KernelPrediction {
  std::string name;
  std::int64_t ctas = 0;
  int ctas_per_sm = 0;
  std::string occupancy_limiter;
  std::int64_t full_waves = 0, tail_ctas = 0;
  double time_us = 0, launch_us = 0;
  double hbm_bytes = 0, flops = 0;
  std::map<std::string, double> units;  // busy fractions of this kernel (GPU average)
  double sm_fill = 0;                   // share of SM-time with CTAs resident
  double load_hidden_fraction = 0;
  std::string bottleneck;
};

struct Prediction {
  std::string workload, variant, hw, shape;
  double time_us = 0;
  double flops = 0;         // tensor flops + 2 x FMA lane operations
  double tensor_flops = 0;
  double hbm_bytes = 0;     // reads + writes that reach device memory
  double achieved_GBps = 0, achieved_TFLOPs = 0;
  std::string bottleneck;   // hbm, copy, tensor, fma, sfu, launch or latency
  std::map<std::string, double> units;  // busy fraction of time (GPU average): copy, tensor, fma, sfu, hbm, launch
  // Busy fractions over the SMs that had work: what the bottleneck is judged on (a kernel
  // that leaves SMs idle is bound by what its busy SMs wait for).
  std::map<std::string, double> units_active;
  double sm_fill = 0;  // share of SM-time (launch excluded) in which SMs had CTAs
  double load_hidden_fraction = 0;      // share of load-in-flight time overlapped by compute
  std::string explanation;              // one line: why this time
  std::vector<KernelPrediction> kernels;
  nlohmann::json to_json() const;
};

Prediction predict(const HardwareProfile& hw, std::string_view workload, std::string_view variant,
                   const ShapeArgs& shape, const PredictOptions& options = {});
// Predicts already-built launches (schedule files use this).
Prediction predict_kernels(const HardwareProfile& hw, std::string_view workload, std::string_view variant,
                           const ShapeArgs& shape, const std::vector<KernelSpec>& kernels,
                           const PredictOptions& options = {});
// Empty when the variant can run the shape on `hw`, else the reason (can_implement).
std::string cannot_run(const HardwareProfile& hw, std::string_view workload, std::string_view variant,
                       const ShapeArgs& shape);

// The human table of `overlap predict` (also used by `overlap run`).
std::string format_prediction(const Prediction& p);

struct Comparison {
  Prediction a, b;
  double speedup = 0;  // time(a) / time(b): > 1 means b is faster
  std::string reason;  // one line
};
Comparison compare(const Prediction& a, const Prediction& b);
std::string format_comparison(const Comparison& c);

}  // namespace overlap::sim
