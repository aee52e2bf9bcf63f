// An experiment beside the calibration: do SMs that load in bursts between compute phases stay
// in step (every burst shares HBM with every SM) or drift apart (a burst shares it with the few
// SMs loading at that moment)? The simulator's engine assumes the first; gla's sequential kernels
// (one CTA walking 64 chunks, each a 40 KB load then about 5 us of work) run faster than that.
//
//   tma_burst_drift [repeats]
//
// Every CTA (one an SM, 256 threads) does `iterations` rounds of: read its next `burst` bytes from
// HBM (every byte once: L2 emptied before each run; 16 bytes a thread a load, all the round's
// loads issued before any is used), a CTA barrier, then `work` ns of dependent FMAs on the loaded
// values. Prints CSV: CTAs, iterations, burst bytes, work ns, the launch's time (us), and the time
// a burst would take if all CTAs' bursts shared HBM at once (CTAs x burst / the copy rate measured
// here with work 0 and every SM). The steady round is the slope of time over iterations.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "calibrate/median_time.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device_buffer.hpp"

namespace {

using overlap::gpu::DeviceBuffer;

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads, 1)
    bursts(const float4* src, float* sink, int iterations, int burst_vecs, int work_fmas) {
  float acc = 0.0f;
  const float4* mine = src + static_cast<long long>(blockIdx.x) * iterations * burst_vecs;
  for (int it = 0; it < iterations; ++it) {
    const float4* round = mine + static_cast<long long>(it) * burst_vecs;
    float4 v[16];
    const int per_thread = burst_vecs / kThreads;  // <= 16
#pragma unroll
    for (int i = 0; i < 16; ++i)
      if (i < per_thread) v[i] = __ldcg(round + i * kThreads + threadIdx.x);
#pragma unroll
    for (int i = 0; i < 16; ++i)
      if (i < per_thread) acc += v[i].x + v[i].y + v[i].z + v[i].w;
    __syncthreads();
    // The round's work: a dependent FMA chain (about 4 cycles a step) on what was loaded.
    float x = acc;
    for (int i = 0; i < work_fmas; ++i) x = fmaf(x, 0.999f, 1e-6f);
    acc = x;
  }
  if (acc == 12345.678f) sink[blockIdx.x] = acc;  // keep the loads and the chain
}

double run(const float4* src, float* sink, int ctas, int iterations, int burst_bytes, int work_fmas, int repeats) {
  const double us = overlap::gpu::median_us(
      [&](cudaStream_t s) { bursts<<<ctas, kThreads, 0, s>>>(src, sink, iterations, burst_bytes / 16, work_fmas); },
      repeats, true);
  OVERLAP_CUDA_CHECK(cudaGetLastError());
  return us;
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 10;
  const int sms = overlap::gpu::current_sm_count();
  int clock_khz = 0;
  OVERLAP_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  constexpr int kBurst = 40960;  // gla sequential's chunk at K = V = 64: q, k, v (bf16) and g (fp32)
  constexpr int kMaxIterations = 64;
  const std::size_t bytes = std::size_t(sms) * kMaxIterations * kBurst;
  DeviceBuffer src(bytes), sink(std::size_t(sms) * sizeof(float));
  OVERLAP_CUDA_CHECK(cudaMemset(src.get(), 0x3c, bytes));
  const auto* s = static_cast<const float4*>(src.get());
  auto* k = static_cast<float*>(sink.get());
  // The copy rate with every SM bursting and no work: what all bursts at once would share.
  const double stream_us = run(s, k, sms, kMaxIterations, kBurst, 0, repeats);
  const double GBps = double(bytes) / (stream_us * 1e3);
  std::printf("# tma_burst_drift: %d SMs, %d threads a CTA, bursts of %d bytes; every SM bursting with no work: "
              "%.0f GB/s\n",
              sms, kThreads, kBurst, GBps);
  std::printf("ctas,iterations,burst_bytes,work_ns,total_us,lockstep_burst_us\n");
  const double fma_ns = 4.0 / (clock_khz * 1e-6);  // a dependent FMA, at the nominal clock
  for (int work_ns : {2000, 5000}) {
    const int fmas = int(work_ns / fma_ns);
    for (int ctas : {8, sms})
      for (int iterations : {1, 4, 16, 64}) {
        const double us = run(s, k, ctas, iterations, kBurst, fmas, repeats);
        std::printf("%d,%d,%d,%d,%.3f,%.3f\n", ctas, iterations, kBurst, work_ns, us,
                    double(ctas) * kBurst / (GBps * 1e3));
      }
  }
  return 0;
}
