// The machine's own GEMM rate: Eigen's parallel GEMM (OpenMP, all cores) on C = A B^T with
// A [M,K], B [N,K] row-major, the layout of every GEMM in the references. The fast references
// cannot beat this; their FLOP/s next to it says how close to the floor they run.
//   bench_ref_gemm_floor --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <cstdint>

#include "core/random.hpp"

namespace {

template <class T>
using RowMajorMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

template <class T>
void eigen_gemm(benchmark::State& state) {
  const std::int64_t M = state.range(0), N = state.range(1), K = state.range(2);
  RowMajorMatrix<T> a(M, K), b(N, K), c(M, N);
  overlap::fill_normal<T>({a.data(), static_cast<std::size_t>(a.size())}, 1, "a");
  overlap::fill_normal<T>({b.data(), static_cast<std::size_t>(b.size())}, 1, "b");
  for (auto _ : state) {
    c.noalias() = a * b.transpose();
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  const double flops = 2.0 * M * N * K;
  const double bytes = static_cast<double>(M * K + N * K + M * N) * sizeof(T);
  state.counters["FLOP/s"] =
      benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["B/s"] = benchmark::Counter(bytes, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = Eigen::nbThreads();
}

// Square sizes, and the shape of one dualgemm benchmark GEMM (M=256, N=3072, K=4096).
void shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"M", "N", "K"});
  for (std::int64_t n : {512, 1024, 2048}) b->Args({n, n, n});
  b->Args({256, 3072, 4096});
  b->UseRealTime()->Unit(benchmark::kMillisecond);
}

BENCHMARK(eigen_gemm<float>)->Name("eigen_gemm_fp32")->Apply(shapes);
BENCHMARK(eigen_gemm<double>)->Name("eigen_gemm_fp64")->Apply(shapes);

}  // namespace

BENCHMARK_MAIN();
