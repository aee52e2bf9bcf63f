// Each kernel runs one warp (two for the mbarrier) through a chain of kSteps instructions where
// each one needs the previous one's result, between two clock64 reads; cycles per step is the
// latency. The chains are unrolled by 16 so loop overhead does not count; the values depend on
// runtime inputs so the compiler cannot fold them, and are written out so it cannot drop them.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include <fmt/format.h>

#include "calibrate/clock_runs.hpp"
#include "calibrate/sm_latency.hpp"
#include "runtime/device_buffer.hpp"

namespace overlap::gpu {
namespace {

constexpr int kSteps = 4096;
constexpr int kUnroll = 16;

enum class Chain { Ffma, Mufu, Lds, Shfl, Hmma };

template <Chain C>
__global__ void dependent_chain(float seed, float* sink, long long* cycles) {
  __shared__ unsigned ring[32];
  // ring[i] holds its own byte address: each LDS's result is the next LDS's address.
  ring[threadIdx.x] = static_cast<unsigned>(__cvta_generic_to_shared(&ring[threadIdx.x]));
  __syncwarp();
  float x = seed + threadIdx.x;
  unsigned a = ring[threadIdx.x];
  // mma.sync operands from the runtime seed (bf16 pairs); the accumulator carries the chain.
  const unsigned op = __float_as_uint(x) & 0x3f803f80u;
  float d[4] = {x, x, x, x};
  const unsigned src = (threadIdx.x + 1) & 31;
  const long long t0 = clock64();
  for (int i = 0; i < kSteps; i += kUnroll) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if constexpr (C == Chain::Ffma) asm volatile("fma.rn.f32 %0, %0, %0, %0;" : "+f"(x));
      if constexpr (C == Chain::Mufu) asm volatile("ex2.approx.ftz.f32 %0, %0;" : "+f"(x));
      if constexpr (C == Chain::Lds) asm volatile("ld.shared.u32 %0, [%0];" : "+r"(a));
      // The source lane is a runtime register (a constant lane let ptxas fold the chain).
      if constexpr (C == Chain::Shfl) asm volatile("shfl.sync.idx.b32 %0, %0, %1, 31, -1;" : "+r"(a) : "r"(src));
      if constexpr (C == Chain::Hmma)
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%4,%4,%4}, {%4,%4}, "
            "{%0,%1,%2,%3};"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(op));
    }
  }
  const long long t1 = clock64();
  sink[threadIdx.x] = x + static_cast<float>(a) + d[0] + d[1] + d[2] + d[3];
  if (threadIdx.x == 0) *cycles = t1 - t0;
}

__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
  asm volatile(
      "{\n .reg .pred p;\n"
      "W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      " @!p bra W;\n}\n" ::"r"(bar), "r"(parity) : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

// Two warps pass a token back and forth through two mbarriers (one arrival each): a round trip
// is two hand-offs, each an arrive by one warp seen by the other's try_wait.
__global__ void mbarrier_pingpong(int rounds, long long* cycles) {
  __shared__ __align__(8) unsigned long long bars[2];
  const unsigned b0 = static_cast<unsigned>(__cvta_generic_to_shared(&bars[0]));
  const unsigned b1 = static_cast<unsigned>(__cvta_generic_to_shared(&bars[1]));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b0));
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b1));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const long long t0 = clock64();
  for (int r = 0; r < rounds; ++r) {
    if (warp == 0) {
      if (lane == 0) mbar_arrive(b0);
      mbar_wait(b1, r & 1);
    } else {
      mbar_wait(b0, r & 1);
      if (lane == 0) mbar_arrive(b1);
    }
  }
  const long long t1 = clock64();
  if (threadIdx.x == 0) *cycles = t1 - t0;
}

// `threads` threads (whole warps) through kSteps barriers (bar.sync 1) with nothing between:
// cycles per barrier where every warp arrives at once, the least a barrier costs a chain.
__global__ void named_barriers(long long* cycles) {
  const long long t0 = clock64();
  for (int i = 0; i < kSteps; i += kUnroll) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) asm volatile("bar.sync 1, %0;" ::"r"(blockDim.x) : "memory");
  }
  const long long t1 = clock64();
  if (threadIdx.x == 0) *cycles = t1 - t0;
}

// One warp: kSteps of (st.shared of a value the previous step changed [, fence.proxy.async]),
// the pattern of code that writes a wgmma or TMA operand and makes it visible to the async
// proxy. With and without the fence: the difference per step is the fence's cost to the chain.
template <bool kFence>
__global__ void proxy_fences(float seed, float* sink, long long* cycles) {
  __shared__ float buf[32];
  float x = seed + threadIdx.x;
  const long long t0 = clock64();
  for (int i = 0; i < kSteps; i += kUnroll) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      asm volatile("st.shared.f32 [%0], %1;" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(&buf[threadIdx.x]))),
                   "f"(x) : "memory");
      if constexpr (kFence) asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      asm volatile("add.f32 %0, %0, 0f3F800000;" : "+f"(x));
    }
  }
  const long long t1 = clock64();
  __syncwarp();
  sink[threadIdx.x] = buf[threadIdx.x] + x;
  if (threadIdx.x == 0) *cycles = t1 - t0;
}

double barrier_cycles(int threads) {
  const auto runs = clock_runs<1>([&](long long* c) { named_barriers<<<1, threads>>>(c); }, 1, 6);
  return median_of(runs[0]) / kSteps;
}

template <bool kFence>
double store_step_cycles() {
  DeviceBuffer sink(32 * sizeof(float));
  const auto runs = clock_runs<1>([&](long long* c) { proxy_fences<kFence><<<1, 32>>>(0.5f, sink.as<float>(), c); }, 1, 6);
  return median_of(runs[0]) / kSteps;
}

template <Chain C>
double chain_cycles() {
  DeviceBuffer sink(32 * sizeof(float));
  // The first launch is a warm-up (instruction cache).
  const auto runs = clock_runs<1>([&](long long* c) { dependent_chain<C><<<1, 32>>>(0.5f, sink.as<float>(), c); }, 1, 6);
  return median_of(runs[0]) / kSteps;
}

double handoff_cycles() {
  constexpr int rounds = 2048;
  const auto runs = clock_runs<1>([&](long long* c) { mbarrier_pingpong<<<1, 64>>>(rounds, c); }, 1, 6);
  return median_of(runs[0]) / (2.0 * rounds);
}

MeasuredField barrier_field() {
  const double warpgroup = barrier_cycles(128), cta = barrier_cycles(256);
  return {"bar_sync_latency_cycles", warpgroup,
          fmt::format("measured by overlap calibrate: the 4 warps of one warpgroup through a chain of {} bar.sync "
                      "(named barrier 1, 128 threads) with nothing between, clock64 cycles per barrier, median of 6 "
                      "(8 warps, 256 threads: {:.1f})",
                      kSteps, cta)};
}

MeasuredField fence_field() {
  const double with = store_step_cycles<true>(), without = store_step_cycles<false>();
  return {"fence_proxy_async_cycles", std::max(0.0, with - without),
          fmt::format("measured by overlap calibrate: one warp, {} steps of st.shared + fence.proxy.async.shared::cta "
                      "+ add.f32, cycles per step ({:.1f}) less the same steps without the fence ({:.1f}), median of 6",
                      kSteps, with, without)};
}

}  // namespace

std::vector<MeasuredField> measure_sm_latencies() {
  const std::string how = fmt::format(
      "measured by overlap calibrate: one warp, a chain of {} dependent {{}} between clock64 reads, cycles per "
      "step, median of 6", kSteps);
  return {
      {"fma_latency_cycles", chain_cycles<Chain::Ffma>(), fmt::format(fmt::runtime(how), "fma.rn.f32")},
      {"mufu_latency_cycles", chain_cycles<Chain::Mufu>(), fmt::format(fmt::runtime(how), "ex2.approx.ftz.f32 (MUFU.EX2)")},
      {"lds_latency_cycles", chain_cycles<Chain::Lds>(), fmt::format(fmt::runtime(how), "ld.shared.u32 (each result the next address)")},
      {"shfl_latency_cycles", chain_cycles<Chain::Shfl>(), fmt::format(fmt::runtime(how), "shfl.sync.idx.b32")},
      {"mma_sync_latency_cycles", chain_cycles<Chain::Hmma>(),
       fmt::format(fmt::runtime(how), "mma.sync m16n8k16 bf16 -> f32 (HMMA.16816.F32.BF16, each accumulating into the last)")},
      {"sync_latency_cycles", handoff_cycles(),
       "measured by overlap calibrate: two warps passing a token through two mbarriers (arrive, try_wait loop), "
       "2048 round trips, clock64 cycles per one-way hand-off, median of 6"},
      barrier_field(),
      fence_field(),
  };
}

}  // namespace overlap::gpu
