// projchain CPU references at SPEC shapes: the fp32 wide-GEMM reference (one GEMM against
// [W_q|W_k|W_v|W_g|W_alpha] tiled over tokens, activations as an epilogue), next to the Eigen
// GEMM of the same wide projection alone — the floor the reference cannot beat — and the
// float64 oracle at a small shape. Times are wall-clock (everything runs on all OpenMP
// threads); rates are per wall second.
//
// FLOPs counted: the five projections only, 2·N·d·(4·H·dk + H) (ProjchainShape::gemm_flops).
// The L2 norm, SiLU and sigmoid are a few operations per output element, under 1% here, not
// counted. Bytes counted: bf16 x and weights read, fp32 q, k, v, g, alpha written, once each
// (ProjchainShape::min_bytes).
#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <vector>

#include "projchain/projchain.hpp"
#include "bench_support.hpp"

namespace {

using namespace overlap;
using overlap::bench::set_rates;
using namespace overlap::projchain;

ProjchainShape shape_from(const benchmark::State& state) {
  ProjchainShape s;
  s.B = state.range(0);
  s.T = state.range(1);
  s.d = state.range(2);
  s.H = state.range(3);
  s.dk = state.range(4);
  s.validate();
  return s;
}

void BM_ProjchainWideGemmReference(benchmark::State& state) {
  const ProjchainShape shape = shape_from(state);
  const TensorMap inputs = make_inputs(shape, 1, "default");
  for (auto _ : state) {
    TensorMap out = wide_gemm_reference(shape, inputs);
    benchmark::DoNotOptimize(out.at("k").bytes().data());
  }
  set_rates(state, shape.gemm_flops(), shape.min_bytes());
}

// The wide projection alone, [N, d] × [d, 4·H·dk + H] in fp32 through Eigen, one GEMM.
void BM_ProjchainWideGemmFloor(benchmark::State& state) {
  using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const ProjchainShape shape = shape_from(state);
  const RowMajor X = RowMajor::Random(shape.N(), shape.d);
  const RowMajor W = RowMajor::Random(shape.d, shape.wide_width());
  RowMajor out(shape.N(), shape.wide_width());
  for (auto _ : state) {
    out.noalias() = X * W;
    benchmark::DoNotOptimize(out.data());
  }
  set_rates(state, shape.gemm_flops(), 2.0 * X.size() + 2.0 * W.size() + 4.0 * out.size());
}

void BM_ProjchainOracle(benchmark::State& state) {
  const ProjchainShape shape = shape_from(state);
  const TensorMap inputs = make_inputs(shape, 1, "default");
  for (auto _ : state) {
    TensorMap out = oracle(shape, inputs);
    benchmark::DoNotOptimize(out.at("k").bytes().data());
  }
  set_rates(state, shape.gemm_flops(), shape.min_bytes());
}

// SPEC §3 shapes: B=4 over T = 512..4096, and the reference shape B=8, T=4096.
void spec_shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"B", "T", "d", "H", "dk"});
  for (std::int64_t T : {512, 1024, 2048, 4096}) b->Args({4, T, 2048, 16, 128});
  b->Args({8, 4096, 2048, 16, 128});
  b->UseRealTime()->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_ProjchainWideGemmReference)->Apply(spec_shapes);
BENCHMARK(BM_ProjchainWideGemmFloor)->Apply(spec_shapes);
BENCHMARK(BM_ProjchainOracle)
    ->ArgNames({"B", "T", "d", "H", "dk"})
    ->Args({1, 128, 2048, 16, 128})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
