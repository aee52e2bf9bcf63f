// Simulator speed (issue 3): one full-size prediction must take <= 10 ms; a sweep of 10,000
// configurations <= 30 s on 2 cores.
#include <benchmark/benchmark.h>

#include "sim/api.hpp"
#include "sim/sweep.hpp"
#include "sim/variants.hpp"

namespace overlap::sim {
namespace {

ShapeArgs full_gla() {
  ShapeArgs s;
  for (auto [k, v] : {std::pair{"B", 8}, {"T", 4096}, {"H", 16}, {"K", 128}, {"V", 128}, {"h0", 0}, {"hT", 0}}) s.set(k, v);
  return s;
}

void BM_PredictGlaFullSize(benchmark::State& state) {
  const HardwareProfile hw = load_profile("H100");
  const auto& variants = list_variants("gla");
  const std::string variant = variants[std::size_t(state.range(0))].name;
  const ShapeArgs shape = full_gla();
  for (auto _ : state) benchmark::DoNotOptimize(predict(hw, "gla", variant, shape).time_us);
  state.SetLabel(variant);
}
BENCHMARK(BM_PredictGlaFullSize)->DenseRange(0, 5)->ArgNames({"variant"})->Unit(benchmark::kMillisecond);

void BM_PredictEveryVariantReferenceShape(benchmark::State& state) {
  const HardwareProfile hw = load_profile("H100");
  std::vector<std::pair<std::string, ShapeArgs>> work;
  for (const auto& m : all_variant_models()) {
    ShapeArgs s = parse_shape(m.workload, reference_shape(m.workload));
    if (m.cannot_run(hw, s).empty()) work.emplace_back(m.workload + "/" + m.name, s);
  }
  for (auto _ : state)
    for (const auto& [name, s] : work) {
      const auto slash = name.find('/');
      benchmark::DoNotOptimize(predict(hw, name.substr(0, slash), name.substr(slash + 1), s).time_us);
    }
  state.counters["predictions/s"] = benchmark::Counter(double(work.size()), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_PredictEveryVariantReferenceShape)->Unit(benchmark::kMillisecond);

// 10,000 configurations: 5 profiles x 6 gla variants x T sweep x B sweep (mixed sizes).
void BM_Sweep10k(benchmark::State& state) {
  std::vector<std::string> variants;
  for (const auto& v : list_variants("gla")) variants.push_back(v.name);
  std::vector<SweepAxis> axes = {parse_sweep_axis("T=64:21376:+64"), parse_sweep_axis("B=1/8")};
  auto configs = expand_sweep({"T4", "A100", "H100", "H200", "B200"}, variants, "H=16,K=128,V=128", axes);
  configs.resize(10000);
  for (auto _ : state) benchmark::DoNotOptimize(run_sweep("gla", configs).size());
  state.counters["configs/s"] = benchmark::Counter(10000.0, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Sweep10k)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();

}  // namespace
}  // namespace overlap::sim

BENCHMARK_MAIN();
