#pragma once
// Kernel timing the way METHOD.md asks: warm-up, device events around each run, the L2
// flushed before every timed run, several input sets, the median of many runs.
#include <functional>
#include <vector>

#include <cuda_runtime_api.h>

#include "core/statistics.hpp"
#include "runtime/device_buffer.hpp"

namespace overlap::gpu {

struct TimingOptions {
  int warmup = 3;
  int runs_per_set = 15;
  bool flush_l2 = true;
};

struct TimingResult {
  double median_us = 0;
  double min_us = 0;
  double max_us = 0;
  int runs = 0;
  std::vector<double> samples_us;
};

// Evicts the L2 by writing a buffer twice its size.
class L2Flusher {
 public:
  L2Flusher();
  void flush(cudaStream_t stream);

 private:
  DeviceBuffer scratch_;
};

// Times launch(set, stream) for every input set in [0, sets): warm-up on set 0, then for each
// run: flush L2, event, launch, event. Returns the median over all runs of all sets.
TimingResult time_launches(const std::function<void(int set, cudaStream_t)>& launch, int sets,
                           const TimingOptions& options = {}, cudaStream_t stream = nullptr);

}  // namespace overlap::gpu
