// `overlap run`: the main job on built-in defaults, no GPU needed. Predicts every variant of a
// workload on a hardware profile (gla on an H100 by default) and checks every workload's CPU
// fast reference against its float64 oracle on fresh test vectors.
#include <chrono>

#include "app/commands.hpp"
#include "sim/api.hpp"
#include "vectors/vectors.hpp"

namespace overlap::app {
namespace {

struct RunOptions {
  std::string hw = "H100", workload = "gla", shape;
  std::uint64_t seed = 1;
};

void print_predictions(const RunOptions& o) {
  const sim::HardwareProfile hw = sim::load_profile(o.hw);
  const std::string shape_text = o.shape.empty() ? sim::reference_shape(o.workload) : o.shape;
  const ShapeArgs shape = sim::parse_shape(o.workload, shape_text);
  fmt::print("Prediction: {} on {} at {}\n\n", o.workload, hw.name, shape.to_string());
  fmt::print("{:<24} {:>10} {:>10} {:>9} {:>9}  {:<10} {}\n", "variant", "time_us", "vs_first", "GB/s", "TFLOP/s",
             "bottleneck", "why");
  double first_us = 0;
  const sim::Prediction* best = nullptr;
  std::vector<sim::Prediction> predictions;
  for (const auto& v : sim::list_variants(o.workload)) {
    if (const std::string why = sim::cannot_run(hw, o.workload, v.name, shape); !why.empty()) {
      fmt::print("{:<24} {:>10}  ({})\n", v.name, "-", why);
      continue;
    }
    predictions.push_back(sim::predict(hw, o.workload, v.name, shape));
  }
  for (const auto& p : predictions) {
    if (first_us == 0) first_us = p.time_us;
    if (!best || p.time_us < best->time_us) best = &p;
    fmt::print("{:<24} {:>10.1f} {:>9.2f}x {:>9.0f} {:>9.1f}  {:<10} {}\n", p.variant, p.time_us, first_us / p.time_us,
               p.achieved_GBps, p.achieved_TFLOPs, p.bottleneck, p.explanation);
  }
  if (best) fmt::print("\nFastest predicted: {}\n{}\n", best->variant, sim::format_prediction(*best));
}

bool check_cpu_references(std::uint64_t seed) {
  fmt::print("CPU check: fast reference against the float64 oracle on fresh test vectors (seed {})\n\n", seed);
  fmt::print("{:<12} {:<34} {:<7} {:>11} {:>10} {:>9}  {}\n", "workload", "shape", "output", "rel_error",
             "tolerance", "fast_ms", "result");
  bool all_pass = true;
  for (const Workload* w : all_workloads()) {
    const VectorSet set = load_vector_set(make_vector_set({.workload = std::string(w->name()), .seed = seed}), "memory");
    const auto t0 = std::chrono::steady_clock::now();
    const TensorMap result = w->fast_reference(set.shape, set.inputs);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    for (const auto& c : check_outputs(set, result)) {
      // The fast reference computes in fp32 what the oracle computes in float64: it must
      // agree far tighter than the kernels' tolerance.
      const bool pass = c.pass() && c.rel_error <= 1e-5;
      all_pass &= pass;
      fmt::print("{:<12} {:<34} {:<7} {:>11.2e} {:>10.0e} {:>9.1f}  {}\n", w->name(), set.shape.to_string(), c.name,
                 c.rel_error, 1e-5, ms, pass ? "PASS" : "FAIL");
    }
  }
  return all_pass;
}

}  // namespace

void register_run_command(CLI::App& app) {
  auto opts = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "The main job: predict a workload's variants and check every CPU reference");
  cmd->add_option("--hw", opts->hw, "hardware profile: a built-in name or a profile file");
  cmd->add_option("--workload,-w", opts->workload, "workload whose variants are predicted");
  cmd->add_option("--shape,-s", opts->shape, "shape to predict (default: the workload's SPEC reference shape)");
  cmd->add_option("--seed", opts->seed, "seed of the CPU check's test vectors");
  cmd->callback([opts] {
    print_predictions(*opts);
    fmt::print("\n");
    if (!check_cpu_references(opts->seed)) throw CLI::RuntimeError(1);
  });
}

}  // namespace overlap::app
