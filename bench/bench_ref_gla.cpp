// gla CPU references: the fp32 chunked reference at kernel-sized shapes (issue 2's goal:
// B=4, T=4096, H=32, K=V=64 in under 0.5 s on 2 cores) and the float64 oracle at a small one.
// Times are wall-clock (both run in parallel); rates are per wall second.
//
// FLOPs counted for the chunked algorithm (2 per multiply-add of the matrix products it runs,
// per chunk of L tokens, sub-chunks of n):
//   inter-chunk output  (q*e^b) S             2 L K V
//   diagonal sub-chunk  scores, per pair       2 K        per (i, j) with j <= i in a sub-chunk
//   off-diagonal scores anchored q . k^T       2 n i0 K   per sub-chunk starting at i0
//   scores times v      lower-triangular A V   2 L(L+1)/2 V
//   state update        (k*e^{b_last-b})^T v   2 L K V,   plus K V for the decay of S
// The element-wise decays and exponentials are work too but are not counted. Bytes: every fp32
// array read or written once (q, k, g, v, h0 in; o, hT out) — the traffic floor.
// The oracle's FLOPs: 4 K V per token (state update and output, one multiply-add each).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <vector>

#include "gla/inputs.hpp"
#include "gla/reference.hpp"
#include "bench_support.hpp"

namespace {

using namespace overlap;
using overlap::bench::set_rates;
using namespace overlap::gla;

GlaShape shape_from(const benchmark::State& state) {
  ShapeArgs args = ShapeArgs::defaults(GlaShape::keys());
  args.set("B", state.range(0));
  args.set("T", state.range(1));
  args.set("H", state.range(2));
  args.set("K", state.range(3));
  args.set("V", state.range(4));
  return GlaShape::from_args(args);
}

double chunked_flops(const GlaShape& s, const ChunkOptions& options) {
  const double K = static_cast<double>(s.K), V = static_cast<double>(s.V);
  double per_head = 0;
  for (std::int64_t t0 = 0; t0 < s.T; t0 += options.chunk) {
    const std::int64_t L = std::min<std::int64_t>(options.chunk, s.T - t0);
    double flops = 2 * 2 * L * K * V + K * V + 2 * (L * (L + 1) / 2.0) * V;
    for (std::int64_t i0 = 0; i0 < L; i0 += options.sub_chunk) {
      const std::int64_t n = std::min<std::int64_t>(options.sub_chunk, L - i0);
      flops += 2 * (n * (n + 1) / 2.0) * K + 2.0 * n * i0 * K;
    }
    per_head += flops;
  }
  return per_head * static_cast<double>(s.B * s.H);
}

double fp32_bytes(const GlaShape& s) {
  const double arrays = 3.0 * s.qk_numel() + 2.0 * s.v_numel() +
                        (s.has_h0 ? 1.0 : 0.0) * s.state_numel() +
                        (s.want_hT ? 1.0 : 0.0) * s.state_numel();
  return 4 * arrays;
}

// Argument 5 picks the gates: 0 = "default", 1 = "strong_gates" (many values underflow to
// zero or become subnormal, which can cost time on some CPUs).
void BM_GlaChunkedReference(benchmark::State& state) {
  const GlaShape shape = shape_from(state);
  const char* distribution = state.range(5) == 0 ? "default" : "strong_gates";
  const DecodedInputs in = decode_inputs(shape, make_inputs(shape, 1, distribution));
  std::vector<float> o(static_cast<std::size_t>(shape.v_numel()));
  std::vector<float> hT(static_cast<std::size_t>(shape.state_numel()));
  for (auto _ : state) {
    chunked_reference(shape, in.spans(), {o, hT});
    benchmark::DoNotOptimize(o.data());
    benchmark::ClobberMemory();
  }
  set_rates(state, chunked_flops(shape, {}), fp32_bytes(shape));
}
BENCHMARK(BM_GlaChunkedReference)
    ->ArgNames({"B", "T", "H", "K", "V", "strong"})
    ->Args({4, 4096, 32, 64, 64, 0})    // issue 2's goal shape
    ->Args({1, 4096, 16, 128, 128, 0})  // wider heads
    ->Args({1, 4096, 16, 128, 128, 1})  // the same with strong gates
    ->Args({2, 1000, 4, 256, 256, 0})   // the widest tested K, V; T not a multiple of 64
    ->Args({1, 63, 2, 64, 64, 0})       // a small test shape: fixed costs
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_GlaOracle(benchmark::State& state) {
  const GlaShape shape = shape_from(state);
  const DecodedInputs in = decode_inputs(shape, make_inputs(shape, 1, "default"));
  std::vector<double> o(static_cast<std::size_t>(shape.v_numel()));
  std::vector<double> hT(static_cast<std::size_t>(shape.state_numel()));
  for (auto _ : state) {
    oracle(shape, in.spans(), {o, hT});
    benchmark::DoNotOptimize(o.data());
    benchmark::ClobberMemory();
  }
  set_rates(state, 4.0 * shape.B * shape.T * shape.H * shape.K * shape.V, fp32_bytes(shape));
}
BENCHMARK(BM_GlaOracle)
    ->ArgNames({"B", "T", "H", "K", "V"})
    ->Args({1, 512, 4, 64, 64})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
