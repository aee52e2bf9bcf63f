#pragma once
// The calibrate microbenchmarks' timing: two warm-up launches, then `repeats` timed ones
// (runtime/timing.hpp: device events, L2 emptied before each unless the data is meant to stay
// resident), the median in microseconds.
#include <functional>

#include <cuda_runtime_api.h>

#include "runtime/timing.hpp"

namespace overlap::gpu {

inline double median_us(const std::function<void(cudaStream_t)>& launch, int repeats, bool flush_l2 = true) {
  TimingOptions options;
  options.warmup = 2;
  options.runs_per_set = repeats;
  options.flush_l2 = flush_l2;
  return time_launches([&](int, cudaStream_t s) { launch(s); }, 1, options).median_us;
}

}  // namespace overlap::gpu
