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

// Evicts the previous run's data from L2 by reading a buffer five times its size (l2_flush.cu).
// Reading, not writing: a written buffer leaves L2 full of dirty lines, which the timed run's
// misses then write back to HBM, adding up to an L2's size to the run's own HBM traffic (the
// benchmarks' bench_common.L2Flush says what that cost a memory-bound kernel).
class L2Flusher {
 public:
  L2Flusher();
  void flush(cudaStream_t stream);

 private:
  DeviceBuffer scratch_;
  DeviceBuffer sink_;
  int blocks_ = 0;
};

// Times launch(set, stream) for every input set in [0, sets): warm-up on set 0, then for each
// run: flush L2, event, launch, event. Returns the median over all runs of all sets.
TimingResult time_launches(const std::function<void(int set, cudaStream_t)>& launch, int sets,
                           const TimingOptions& options = {}, cudaStream_t stream = nullptr);

}  // namespace overlap::gpu
