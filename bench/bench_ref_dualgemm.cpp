// The dualgemm fast reference (ref/dualgemm) for each input format at the SPEC benchmark
// shapes and two small ones. Inputs are drawn and decoded once, outside the timed loop; the
// time is the two fp32 GEMMs plus the epilogue. FLOP/s counts 4 M N K; B/s counts the bytes
// a kernel moves (inputs in their format, scales included, and C in fp16). Compare FLOP/s
// with bench_ref_gemm_floor's eigen_gemm_fp32.
//   bench_ref_dualgemm --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <cstdint>

#include "dualgemm/dualgemm.hpp"

namespace {

using overlap::dualgemm::Format;

double kernel_bytes(const overlap::TensorMap& inputs, const overlap::dualgemm::DualGemmShape& s) {
  double bytes = 2.0 * s.L * s.M * s.N;  // C in fp16
  for (const auto& [name, t] : inputs) bytes += static_cast<double>(t.nbytes());
  return bytes;
}

void dualgemm_fast_reference(benchmark::State& state) {
  const overlap::dualgemm::DualGemmShape s{1, state.range(1), state.range(2), state.range(3),
                                           static_cast<Format>(state.range(0))};
  const overlap::TensorMap inputs = overlap::dualgemm::make_inputs(s, 1);
  const overlap::dualgemm::Operands ops = overlap::dualgemm::decode_operands(s, inputs);
  for (auto _ : state) {
    overlap::Tensor c = overlap::dualgemm::fast_reference(ops);
    benchmark::DoNotOptimize(c.bytes().data());
  }
  state.SetLabel(std::string(overlap::dualgemm::format_name(s.format)));
  state.counters["FLOP/s"] =
      benchmark::Counter(s.flops(), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["B/s"] =
      benchmark::Counter(kernel_bytes(inputs, s), benchmark::Counter::kIsIterationInvariantRate);
}

void shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"fmt", "M", "N", "K"});
  for (std::int64_t fmt : {0, 1, 2}) {
    b->Args({fmt, 256, 512, 256});    // the default test shape
    b->Args({fmt, 4096, 768, 512});   // a mid-size test shape
    b->Args({fmt, 256, 4096, 7168});  // SPEC benchmark shapes
    b->Args({fmt, 512, 4096, 7168});
    b->Args({fmt, 256, 3072, 4096});
    b->Args({fmt, 512, 3072, 7168});
  }
  b->UseRealTime()->Unit(benchmark::kMillisecond);
}

BENCHMARK(dualgemm_fast_reference)->Apply(shapes);

}  // namespace

BENCHMARK_MAIN();
