// linrnn CPU references at SPEC shapes: the fp32 chunked reference (projection GEMM + two-level
// chunked scan + gate), next to the Eigen GEMM of the same projection alone — the floor the
// reference cannot beat — and the float64 oracle at the smallest shape. Times are wall-clock
// (everything runs on all OpenMP threads); rates are per wall second.
//
// FLOPs counted: the projection only, 2·B·T·d·3dv (LinrnnShape::gemm_flops). The scan and gate
// are ~10 element-wise operations per (token, channel), under 1% at these shapes, not counted.
// Bytes counted: bf16 x and W read, fp32 h0 read, fp32 y and hT written, once each
// (LinrnnShape::min_bytes) — the traffic floor, not the traffic of the fp32 intermediate.
#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <vector>

#include "linrnn/linrnn.hpp"
#include "bench_support.hpp"

namespace {

using namespace overlap;
using overlap::bench::set_rates;
using namespace overlap::linrnn;

LinrnnShape shape_from(const benchmark::State& state) {
  LinrnnShape s;
  s.B = state.range(0);
  s.T = state.range(1);
  s.d = state.range(2);
  s.dv = state.range(3);
  s.validate();
  return s;
}

void BM_LinrnnChunkedReference(benchmark::State& state) {
  const LinrnnShape shape = shape_from(state);
  const TensorMap inputs = make_inputs(shape, 1, "default");
  for (auto _ : state) {
    TensorMap out = chunked_reference(shape, inputs);
    benchmark::DoNotOptimize(out.at("y").bytes().data());
  }
  set_rates(state, shape.gemm_flops(), shape.min_bytes());
}

// The projection alone, [B·T, d] × [d, 3·dv] in fp32 through Eigen on already-decoded inputs.
void BM_LinrnnProjectionGemmFloor(benchmark::State& state) {
  using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const LinrnnShape shape = shape_from(state);
  const TensorMap inputs = make_inputs(shape, 1, "default");
  const std::vector<float> x = inputs.at("x").to_f32(), w = inputs.at("W").to_f32();
  const Eigen::Map<const RowMajor> X(x.data(), shape.B * shape.T, shape.d);
  const Eigen::Map<const RowMajor> W(w.data(), shape.d, 3 * shape.dv);
  RowMajor proj(shape.B * shape.T, 3 * shape.dv);
  for (auto _ : state) {
    proj.noalias() = X * W;
    benchmark::DoNotOptimize(proj.data());
  }
  set_rates(state, shape.gemm_flops(), 2.0 * X.size() + 2.0 * W.size() + 4.0 * proj.size());
}

void BM_LinrnnOracle(benchmark::State& state) {
  const LinrnnShape shape = shape_from(state);
  const TensorMap inputs = make_inputs(shape, 1, "default");
  for (auto _ : state) {
    TensorMap out = oracle(shape, inputs);
    benchmark::DoNotOptimize(out.at("y").bytes().data());
  }
  set_rates(state, shape.gemm_flops(), shape.min_bytes());
}

// SPEC §2 shapes: the reference shape, B=16 over T = 512..4096, and the large one.
void spec_shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"B", "T", "d", "dv"})->Args({4, 2048, 256, 64});
  for (std::int64_t T : {512, 1024, 2048, 4096}) b->Args({16, T, 256, 64});
  b->Args({8, 4096, 1024, 1024});
  b->UseRealTime()->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_LinrnnChunkedReference)->Apply(spec_shapes);
BENCHMARK(BM_LinrnnProjectionGemmFloor)->Apply(spec_shapes);
BENCHMARK(BM_LinrnnOracle)
    ->ArgNames({"B", "T", "d", "dv"})
    ->Args({4, 2048, 256, 64})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
