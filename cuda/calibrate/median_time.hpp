#pragma once
// The calibrate microbenchmarks' timing: two warm-up launches, then `repeats` timed ones
// (runtime/timing.hpp: device events, L2 emptied before each unless the data is meant to stay
// resident), the median in microseconds.
#include <functional>

#include <cuda_runtime_api.h>

#include "runtime/cuda_check.hpp"
#include "runtime/device_buffer.hpp"
#include "runtime/timing.hpp"

namespace overlap::gpu {

inline double median_us(const std::function<void(cudaStream_t)>& launch, int repeats, bool flush_l2 = true) {
  TimingOptions options;
  options.warmup = 2;
  options.runs_per_set = repeats;
  options.flush_l2 = flush_l2;
  return time_launches([&](int, cudaStream_t s) { launch(s); }, 1, options).median_us;
}

// The median time of an L2-resident stream kernel (no flush), and the clock64 cycles of one more
// launch: the kernel's threads atomicMax their cycles into `cycles` (one long long), so the
// slowest CTA's count says what clock the SMs held under that load.
struct StreamTiming {
  double us;
  long long cycles;
};
inline StreamTiming median_us_and_cycles(const std::function<void(cudaStream_t)>& launch, const DeviceBuffer& cycles,
                                         int repeats) {
  const double us = median_us(launch, repeats, /*flush_l2=*/false);
  OVERLAP_CUDA_CHECK(cudaGetLastError());
  OVERLAP_CUDA_CHECK(cudaMemset(cycles.get(), 0, sizeof(long long)));
  launch(nullptr);
  OVERLAP_CUDA_CHECK(cudaDeviceSynchronize());
  long long c = 0;
  cycles.download(&c, sizeof(c));
  return {us, c};
}

}  // namespace overlap::gpu
