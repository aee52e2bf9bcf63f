// An experiment, not a calibration: what clock the SMs hold while some of them stream wgmma.
// calibrate's tensor stream (tensor_stream.cu) runs every SM, launch after launch, and reports the
// clock that load settles at (about 1.6-1.7 GHz on the lent H100). A GEMM with fewer tiles than
// SMs (128 x 128 at M = 256: 48-96 CTAs) leaves SMs idle, and `overlap validate` times each call
// after an L2 flush, so the tensor pipes rest between calls: both may let the clock stay higher.
//
//   tma_tensor_clock [repeats]
//
// For each CTA count (one CTA of two warpgroups an SM, wgmma m64n256 with A and B in shared
// memory, 8 a group, about 100 us a launch at the datasheet's rate) and format, two ways of
// running it: `back_to_back` (calibrate's: launches queued one after another) and `flushed` (as
// validate times a workload: the L2 flushed by a 256 MiB read before each launch, device events
// around the launch alone). Prints one CSV row per case: the launch's median time, the slowest
// CTA's clock64 cycles over that time (the clock the SMs held), FLOPs an SM a clock, and the
// rate an SM reached per microsecond against the rate at every SM back to back.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "calibrate/clock_runs.hpp"
#include "calibrate/experiment_args.hpp"
#include "calibrate/wgmma_stream.cuh"
#include "runtime/cuda_check.hpp"
#include "runtime/timing.hpp"

namespace {

using namespace overlap::gpu;

struct Clocked {
  double us, mhz, flops_per_sm_clk, flops_per_sm_us;
};

template <bool Fp8>
Clocked measure(int ctas, bool flushed, int repeats, L2Flusher& flusher) {
  using namespace wgmma_stream_detail;
  constexpr int kN = 256, kGroup = 8;
  const double flops_per_mma = 2.0 * 64 * kN * (Fp8 ? 32 : 16);
  const int groups = int(100e-6 * 1.98e9 * (Fp8 ? 8192.0 : 4096.0) / (2 * kGroup * flops_per_mma));
  DeviceBuffer sink(std::size_t(ctas) * kThreads * sizeof(float)), cycles(sizeof(long long));
  cudaEvent_t start, stop;
  OVERLAP_CUDA_CHECK(cudaEventCreate(&start));
  OVERLAP_CUDA_CHECK(cudaEventCreate(&stop));
  const auto launch = [&] {
    stream<Fp8, kN, kGroup, 0><<<ctas, kThreads>>>(groups, sink.as<float>(), cycles.as<long long>());
    OVERLAP_CUDA_CHECK(cudaGetLastError());
  };
  std::vector<double> us, mhz;
  for (int w = 0; w < 3; ++w) launch();
  OVERLAP_CUDA_CHECK(cudaDeviceSynchronize());
  if (flushed) {
    for (int r = 0; r < repeats; ++r) {
      flusher.flush(nullptr);
      OVERLAP_CUDA_CHECK(cudaMemsetAsync(cycles.get(), 0, sizeof(long long)));
      OVERLAP_CUDA_CHECK(cudaEventRecord(start));
      launch();
      OVERLAP_CUDA_CHECK(cudaEventRecord(stop));
      OVERLAP_CUDA_CHECK(cudaEventSynchronize(stop));
      float ms = 0;
      OVERLAP_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
      long long c = 0;
      cycles.download(&c, sizeof(c));
      us.push_back(ms * 1e3);
      mhz.push_back(double(c) / (ms * 1e3));
    }
  } else {
    // Back to back: the launches queue; each launch's own events, its cycles from the same launch.
    std::vector<cudaEvent_t> marks(2 * repeats);
    for (auto& e : marks) OVERLAP_CUDA_CHECK(cudaEventCreate(&e));
    DeviceBuffer all_cycles(sizeof(long long) * repeats);
    for (int r = 0; r < repeats; ++r) {
      OVERLAP_CUDA_CHECK(cudaMemsetAsync(all_cycles.as<long long>() + r, 0, sizeof(long long)));
      OVERLAP_CUDA_CHECK(cudaEventRecord(marks[2 * r]));
      stream<Fp8, kN, kGroup, 0><<<ctas, kThreads>>>(groups, sink.as<float>(), all_cycles.as<long long>() + r);
      OVERLAP_CUDA_CHECK(cudaGetLastError());
      OVERLAP_CUDA_CHECK(cudaEventRecord(marks[2 * r + 1]));
    }
    OVERLAP_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<long long> c(repeats);
    all_cycles.download(c.data(), sizeof(long long) * repeats);
    for (int r = 0; r < repeats; ++r) {
      float ms = 0;
      OVERLAP_CUDA_CHECK(cudaEventElapsedTime(&ms, marks[2 * r], marks[2 * r + 1]));
      us.push_back(ms * 1e3);
      mhz.push_back(double(c[r]) / (ms * 1e3));
    }
    for (auto& e : marks) OVERLAP_CUDA_CHECK(cudaEventDestroy(e));
  }
  OVERLAP_CUDA_CHECK(cudaEventDestroy(start));
  OVERLAP_CUDA_CHECK(cudaEventDestroy(stop));
  const double t = median_of(us);
  const double per_cta = 2.0 * groups * kGroup * flops_per_mma;
  const double m = median_of(mhz);
  return {t, m, per_cta / (m * t), per_cta / t};
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const int repeats = overlap::gpu::repeats_arg(argc, argv, 10, "tma_tensor_clock");
  if (repeats == 0) return 2;
  const int sms = overlap::gpu::current_sm_count();
  L2Flusher flusher;
  std::printf("# tensor_clock: wgmma m64n256 streams on some SMs (%d on this GPU), back to back or each after an L2 flush\n",
              sms);
  std::printf("format,ctas,mode,us,clock_MHz,flops_per_sm_clk,per_sm_rate_vs_all_back_to_back\n");
  const int counts[] = {32, 48, 64, 96, 128, sms};
  for (const bool fp8 : {false, true}) {
    const auto run = [&](int ctas, bool flushed) {
      return fp8 ? measure<true>(ctas, flushed, repeats, flusher) : measure<false>(ctas, flushed, repeats, flusher);
    };
    const double base = run(sms, false).flops_per_sm_us;
    for (const int ctas : counts)
      for (const bool flushed : {false, true}) {
        const Clocked c = run(std::min(ctas, sms), flushed);
        std::printf("%s,%d,%s,%.1f,%.0f,%.0f,%.3f\n", fp8 ? "fp8" : "bf16", std::min(ctas, sms),
                    flushed ? "flushed" : "back_to_back", c.us, c.mhz, c.flops_per_sm_clk, c.flops_per_sm_us / base);
      }
  }
  return 0;
}
