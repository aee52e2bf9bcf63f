#pragma once
// Host side of the clock64 microbenchmarks (sm_latency.cu, sm_throughput.cu): each launch runs a
// kernel that writes the SM cycles of its timed part into a few device counters; these helpers
// repeat the launch, check it, read the counters back and take medians.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <vector>

#include "runtime/cuda_check.hpp"
#include "runtime/device_buffer.hpp"

namespace overlap::gpu {

inline double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Calls launch(long long* counters) `warmups` + `repeats` times, each launch checked and waited
// for; returns, per counter, its values over the `repeats` timed launches.
template <int N, typename Launch>
std::array<std::vector<double>, N> clock_runs(const Launch& launch, int warmups, int repeats) {
  DeviceBuffer counters(N * sizeof(long long));
  std::array<std::vector<double>, N> out;
  for (int rep = 0; rep < warmups + repeats; ++rep) {
    launch(counters.as<long long>());
    OVERLAP_CUDA_CHECK(cudaGetLastError());
    OVERLAP_CUDA_CHECK(cudaDeviceSynchronize());
    std::array<long long, N> c{};
    counters.download(c.data(), sizeof(c));
    if (rep < warmups) continue;
    for (int i = 0; i < N; ++i) out[i].push_back(static_cast<double>(c[i]));
  }
  return out;
}

}  // namespace overlap::gpu
