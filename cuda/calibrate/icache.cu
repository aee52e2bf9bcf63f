#include "calibrate/icache.hpp"

#include <cuda_runtime.h>

#include <algorithm>

#include <fmt/format.h>

#include "calibrate/clock_runs.hpp"
#include "runtime/device_buffer.hpp"

namespace overlap::gpu {
namespace {

// 4096 FFMAs in 8 independent chains: 64 KiB of SASS (16 bytes an instruction), issued at
// about one a cycle once fetched, so the warm pass is short and the cold pass's excess is the
// fetch.
constexpr int kBody = 4096;
constexpr int kChains = 8;
constexpr double kBodyKiB = kBody * 16.0 / 1024.0;

__global__ void straight_line(float seed, float* sink, long long* cycles) {
  float x[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) x[c] = seed + float(c) + float(threadIdx.x);
  long long t[3];
#pragma unroll 1
  for (int pass = 0; pass < 2; ++pass) {
    t[pass] = clock64();
#pragma unroll
    for (int i = 0; i < kBody / kChains; ++i)
#pragma unroll
      for (int c = 0; c < kChains; ++c) asm volatile("fma.rn.f32 %0, %0, %0, %0;" : "+f"(x[c]));
  }
  t[2] = clock64();
  float s = 0;
#pragma unroll
  for (int c = 0; c < kChains; ++c) s += x[c];
  sink[blockIdx.x * blockDim.x + threadIdx.x] = s;
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    cycles[0] = t[1] - t[0];  // first pass: cold
    cycles[1] = t[2] - t[1];  // second pass: the same instructions, fetched
  }
}

}  // namespace

std::vector<MeasuredField> measure_cold_code() {
  const int sms = overlap::gpu::current_sm_count();
  DeviceBuffer sink(std::size_t(sms) * 32 * sizeof(float));
  DeviceBuffer flush(std::size_t(256) << 20);
  // One warp per SM, every SM at once; the L2 flushed before each launch, so the code comes
  // from device memory as it does in a benchmark that flushes L2 between calls.
  auto runs = clock_runs<2>(
      [&](long long* c) {
        OVERLAP_CUDA_CHECK(cudaMemset(flush.get(), 0, flush.bytes()));
        straight_line<<<sms, 32>>>(1.0f, sink.as<float>(), c);
      },
      2, 9);
  const double cold = median_of(runs[0]), warm = median_of(runs[1]);
  // A first pass can come out a few cycles faster than the second (run-to-run noise): no
  // measurable cost, recorded as 0 (a profile's costs are never negative).
  const double excess = std::max(0.0, (cold - warm) / kBodyKiB);
  return {{"cold_code_cycles_per_KiB", excess,
           fmt::format("measured by overlap calibrate (cuda/calibrate/icache.cu): {} CTAs of one warp, one per SM, "
                       "a straight-line body of {} independent FFMAs ({:.0f} KiB of SASS) run twice after an L2 "
                       "flush; first pass {:.0f} cycles, second {:.0f}, clock64 medians of 9, excess per KiB{}",
                       sms, kBody, kBodyKiB, cold, warm, cold < warm ? " (the first pass was faster: 0)" : "")}};
}

}  // namespace overlap::gpu
