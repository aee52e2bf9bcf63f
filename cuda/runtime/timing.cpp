#include "runtime/timing.hpp"

#include <algorithm>

namespace overlap::gpu {

TimingResult time_launches(const std::function<void(int, cudaStream_t)>& launch, int sets,
                           const TimingOptions& options, cudaStream_t stream) {
  OVERLAP_REQUIRE(sets >= 1, "time_launches needs at least one input set, got {}", sets);
  L2Flusher flusher;
  for (int i = 0; i < options.warmup; ++i) launch(i % sets, stream);
  OVERLAP_CUDA_CHECK(cudaGetLastError());
  OVERLAP_CUDA_CHECK(cudaStreamSynchronize(stream));

  cudaEvent_t start, stop;
  OVERLAP_CUDA_CHECK(cudaEventCreate(&start));
  OVERLAP_CUDA_CHECK(cudaEventCreate(&stop));
  TimingResult result;
  for (int set = 0; set < sets; ++set) {
    for (int r = 0; r < options.runs_per_set; ++r) {
      if (options.flush_l2) flusher.flush(stream);
      OVERLAP_CUDA_CHECK(cudaEventRecord(start, stream));
      launch(set, stream);
      OVERLAP_CUDA_CHECK(cudaEventRecord(stop, stream));
      OVERLAP_CUDA_CHECK(cudaEventSynchronize(stop));
      OVERLAP_CUDA_CHECK(cudaGetLastError());
      float ms = 0;
      OVERLAP_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
      result.samples_us.push_back(1e3 * ms);
    }
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  result.runs = static_cast<int>(result.samples_us.size());
  result.median_us = median(result.samples_us);
  result.min_us = *std::min_element(result.samples_us.begin(), result.samples_us.end());
  result.max_us = *std::max_element(result.samples_us.begin(), result.samples_us.end());
  return result;
}

}  // namespace overlap::gpu
