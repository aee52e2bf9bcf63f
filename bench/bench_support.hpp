#pragma once
// Shared pieces of the CPU-reference benchmarks.
#include <benchmark/benchmark.h>

namespace overlap::bench {

// Reports `flops` and `bytes` per iteration as GFLOP/s and GB/s (per wall second with
// UseRealTime()).
inline void set_rates(benchmark::State& state, double flops, double bytes) {
  using benchmark::Counter;
  state.counters["GFLOP/s"] = Counter(flops * 1e-9, Counter::kIsIterationInvariantRate);
  state.counters["GB/s"] = Counter(bytes * 1e-9, Counter::kIsIterationInvariantRate);
}

}  // namespace overlap::bench
