// An experiment, not a calibration: what a warp-specialized GEMM consumer's k-block costs beyond
// its wgmma. Traced in the kernels (tools/device/experiment.sh dualgemm_trace), the dualgemm
// consumers with their data already landed take 242 ns a k-block at 64x64 and 287 at 128x48
// where their wgmma alone (calibrate's stream rate) takes 146 and 227; at 128x64 and 128x128
// the wgmma's time. calibrate's wgmma stream (the wgmma_shapes experiment: groups of 4, one left
// in flight) reaches its full rate at every N, so the wgmma issue alone is not it. This runs the
// consumers' loop with the kernels' ring of mbarriers but no loads: a producer warp arrives on
// stage s's full barrier as soon as both consumer warpgroups have released it (the data is
// always there), the consumers wait for it (mbarrier.try_wait), issue a k-block's 4 wgmma
// m64nNk32 (e4m3, A and B in shared memory), commit, wait until `InFlight` groups are left and
// release the stage the finished group read. What a depth that is not a power of two adds at
// N >= 128 (the stage and phase by division) is the profiles' ring_division_cycles.
//
//   tma_consumer_chain [repeats]
//
// Every SM runs one CTA; prints, per N, ring depth, groups in flight and with or without the
// barriers: SM clocks a k-block (the slowest CTA's clock64 over its loop, median of the
// launches) and that against the wgmma alone (no barriers, one group in flight).
#include <cuda_runtime.h>

#include <cstdio>

#include "calibrate/clock_runs.hpp"
#include "calibrate/experiment_args.hpp"
#include "calibrate/wgmma_stream.cuh"
#include "runtime/cuda_check.hpp"

namespace {

using namespace overlap::gpu;
namespace sm90 = overlap::cuda::sm90;

constexpr int kConsumers = 256, kThreads = kConsumers + 32;
constexpr int kKBlocks = 4096;

template <int N, int Stages, int InFlight, bool Barriers>
__global__ void __launch_bounds__(kThreads, 1) chain(float* sink, long long* cycles) {
  using namespace wgmma_stream_detail;
  constexpr int kWords = (64 + N) * 32;  // A (64 rows) and B (N rows), 128 bytes of K each
  __shared__ __align__(1024) std::uint32_t tiles[kWords];
  __shared__ std::uint64_t full[Stages], empty[Stages];
  const int tid = threadIdx.x;
  for (int i = tid; i < kWords; i += kThreads) tiles[i] = random_word(i + 1);
  if (tid == 0) {
    for (int s = 0; s < Stages; ++s) {
      sm90::mbar_init(&full[s], 1);
      sm90::mbar_init(&empty[s], 2);  // one arrival per consumer warpgroup
    }
    sm90::mbar_init_fence();
  }
  sm90::fence_proxy_async();
  __syncthreads();
  if (tid >= kConsumers) {  // the producer warp: hands each stage back as soon as it is free
    if (Barriers && tid == kConsumers)
      for (int i = 0; i < kKBlocks; ++i) {
        sm90::mbar_wait(&empty[i % Stages], ((i / Stages) & 1) ^ 1);
        sm90::mbar_arrive(&full[i % Stages]);
      }
    return;
  }
  const int t128 = tid % 128;
  const std::uint64_t da = sm90::sw128_desc(tiles), db = sm90::sw128_desc(tiles + 64 * 32);
  float d[N / 2];
#pragma unroll
  for (int j = 0; j < N / 2; ++j) d[j] = 0.f;
  const long long t0 = clock64();
  for (int i = 0; i < kKBlocks; ++i) {
    if constexpr (Barriers) sm90::mbar_wait(&full[i % Stages], (i / Stages) & 1);
    sm90::wgmma_fence();
#pragma unroll
    for (int u = 0; u < 4; ++u) mma<true, N>(da + 2 * u, db + 2 * u, d, std::make_index_sequence<N / 2>{});
    sm90::wgmma_commit();
    sm90::wgmma_wait<InFlight>();
    sm90::fence_regs(d);
    if constexpr (Barriers)
      if (i >= InFlight && t128 == 0) sm90::mbar_arrive(&empty[(i - InFlight) % Stages]);
  }
  sm90::wgmma_wait<0>();
  sm90::fence_regs(d);
  publish(d, t0, sink + blockIdx.x * kConsumers + tid, cycles);
}

template <int N, int Stages, int InFlight, bool Barriers>
double clocks_per_kblock(int sms, int repeats) {
  DeviceBuffer sink(std::size_t(sms) * kConsumers * sizeof(float));
  // One warm-up launch; the kernel's threads atomicMax their cycles, so each launch starts at 0.
  const auto cycles = clock_runs<1>(
      [&](long long* counter) {
        OVERLAP_CUDA_CHECK(cudaMemset(counter, 0, sizeof(long long)));
        chain<N, Stages, InFlight, Barriers><<<sms, kThreads>>>(sink.as<float>(), counter);
      },
      1, repeats);
  return median_of(cycles[0]) / kKBlocks;
}

template <int N>
void rows(int sms, int repeats) {
  const double alone = clocks_per_kblock<N, 4, 1, false>(sms, repeats);
  const auto row = [&](int stages, int in_flight, bool barriers, double clocks) {
    std::printf("%d,%d,%d,%d,%.0f,%.3f\n", N, stages, in_flight, int(barriers), clocks, clocks / alone);
  };
  row(4, 1, false, alone);
  // Every ring depth the dualgemm kernels use, one group in flight as they keep: a depth that is
  // not a power of two takes the stage and phase by division.
  row(3, 1, true, clocks_per_kblock<N, 3, 1, true>(sms, repeats));
  row(4, 1, true, clocks_per_kblock<N, 4, 1, true>(sms, repeats));
  row(5, 1, true, clocks_per_kblock<N, 5, 1, true>(sms, repeats));
  row(6, 1, true, clocks_per_kblock<N, 6, 1, true>(sms, repeats));
  row(7, 1, true, clocks_per_kblock<N, 7, 1, true>(sms, repeats));
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const int repeats = overlap::gpu::repeats_arg(argc, argv, 5, "tma_consumer_chain");
  if (repeats == 0) return 2;
  const int sms = overlap::gpu::current_sm_count();
  std::printf("# consumer_chain: e4m3 wgmma m64nNk32, 4 a k-block, two consumer warpgroups an SM (%d SMs), %d k-blocks\n",
              sms, kKBlocks);
  std::printf("n,stages,groups_in_flight,barriers,clocks_per_kblock,against_wgmma_alone\n");
  rows<64>(sms, repeats);
  rows<96>(sms, repeats);
  rows<128>(sms, repeats);
  rows<192>(sms, repeats);
  rows<256>(sms, repeats);
  return 0;
}
