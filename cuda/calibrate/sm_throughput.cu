// Per-SM throughput microbenchmarks behind `overlap calibrate`: one CTA on one SM runs many
// independent instructions of one kind between two clock64 reads (after a warm-up pass), so
// the rate is in SM clocks and does not depend on the clock the GPU picked:
//   fma_lanes_per_clk   - 1024 threads, 8 independent FFMA chains each;
//   sfu_lanes_per_clk   - 1024 threads, 8 independent MUFU.EX2 chains each;
//   smem_bytes_per_clk  - 1024 threads, independent conflict-free 16-byte volatile shared loads;
//   mma_sync_fraction   - warp-level mma.sync m16n8k16 (8 warps, 4 independent accumulators
//                         each) against wgmma m64n128k16 with both operands in shared memory
//                         (two warpgroups), both bf16 with fp32 accumulation, in FLOPs per
//                         clock; the wgmma m64n64k16 rates (operands in shared memory, or A in
//                         registers) are reported beside it, since small-N wgmma reads more
//                         operand bytes per FLOP; and shared loads beside a wgmma stream, to
//                         tell whether the two share the shared-memory pipe;
//   lds_latency_beside_wgmma_cycles - a dependent shared-load chain while wgmma streams
//                         shared-memory operands on the same SM.
// Operands are random (hash of the index), never zeros; results are written out so nothing
// is dropped.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "calibrate/clock_runs.hpp"
#include "calibrate/sm_throughput.hpp"
#include "common/sm90_ptx.cuh"
#include "runtime/device_buffer.hpp"

namespace overlap::gpu {
namespace {

namespace sm90 = overlap::cuda::sm90;

constexpr int kThreads = 1024;
constexpr int kIters = 256;
constexpr int kUnroll = 16;

__device__ __forceinline__ std::uint32_t hash(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  return x ^ (x >> 16);
}
// Two random bf16 in [-1, 1) as one 32-bit register.
__device__ __forceinline__ std::uint32_t random_bf16x2(std::uint32_t i) {
  const std::uint32_t h = hash(i);
  auto one = [](std::uint32_t bits) {
    const float f = float(int(bits & 0xFFFF) - 32768) / 32768.f;
    return std::uint32_t(__float_as_uint(f) >> 16);
  };
  return one(h) | (one(h >> 16) << 16);
}

enum class Op { Ffma, Mufu, Lds };

// Clock64 between two CTA barriers around `body`, read by thread 0 of the second pass (the
// first warms the instruction cache and shared memory).
template <Op O>
__global__ void __launch_bounds__(kThreads, 1) pipe_rate(float seed, float* sink, long long* cycles) {
  __shared__ __align__(16) std::uint32_t buf[2 * kThreads * 4];  // 32 KiB
  for (int i = threadIdx.x; i < 2 * kThreads * 4; i += kThreads) buf[i] = hash(i);
  float x[8];
  std::uint32_t acc[4] = {0, 0, 0, 0};
#pragma unroll
  for (int j = 0; j < 8; ++j) x[j] = seed + 1e-3f * float(threadIdx.x * 8 + j);
  const float a = 0.999f + seed * 1e-6f, b = 1e-3f * seed;
  const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(buf)) + threadIdx.x * 16;
  long long t0 = 0;
  for (int pass = 0; pass < 2; ++pass) {
    __syncthreads();
    t0 = clock64();
    for (int i = 0; i < kIters; ++i) {
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if constexpr (O == Op::Ffma) {
#pragma unroll
          for (int j = 0; j < 8; ++j) asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(x[j]) : "f"(a), "f"(b));
        } else if constexpr (O == Op::Mufu) {
#pragma unroll
          for (int j = 0; j < 8; ++j) asm volatile("ex2.approx.ftz.f32 %0, %0;" : "+f"(x[j]));
        } else {
          // Volatile loads at distinct addresses (ptxas merges identical loads, also across an
          // unrolled loop's copies); a
          // warp's 32 lanes read 512 contiguous bytes: no bank conflicts.
          std::uint32_t v[4];
          asm volatile("ld.volatile.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                       : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3])
                       : "r"(base + u * 1024));
#pragma unroll
          for (int j = 0; j < 4; ++j) acc[j] += v[j];
        }
      }
    }
    __syncthreads();
  }
  const long long t1 = clock64();
  float s = 0.f;
#pragma unroll
  for (int j = 0; j < 8; ++j) s += x[j];
  sink[threadIdx.x] = s + float(acc[0] ^ acc[1] ^ acc[2] ^ acc[3]);
  if (threadIdx.x == 0) *cycles = t1 - t0;
}

// ---- tensor cores ---------------------------------------------------------------------------
enum class Mma { WgmmaSs128, WgmmaSs64, WgmmaRs64, MmaSync };
constexpr int kMmaThreads = 256;  // two warpgroups / eight warps
constexpr int kMmaIters = 512;    // batches of 16 instructions per warpgroup or warp

// One batch of 16 wgmmas into d (k steps 0-3 of the tiles in turn), committed and waited for.
template <Mma M, int N>
__device__ __forceinline__ void wgmma_batch(float (&d)[N], std::uint64_t da, std::uint64_t db,
                                            const std::uint32_t (&ra)[4]) {
  sm90::wgmma_fence();
#pragma unroll
  for (int u = 0; u < 16; ++u) {
    const std::uint64_t step = 2 * (u & 3);  // 32 bytes along K per k16, in 16-byte units
    if constexpr (M == Mma::WgmmaSs128) {
      sm90::wgmma_m64n128k16_ss(reinterpret_cast<float(&)[64]>(d), da + step, db + step);
    } else if constexpr (M == Mma::WgmmaSs64) {
      sm90::wgmma_m64n64k16_ss<0, 0>(reinterpret_cast<float(&)[32]>(d), da + step, db + step, 1);
    } else {
      sm90::wgmma_m64n64k16_rs<0>(reinterpret_cast<float(&)[32]>(d), ra, db + step, 1);
    }
  }
  sm90::wgmma_commit();
  sm90::wgmma_wait<0>();
  sm90::fence_regs(d);
}

template <Mma M>
__global__ void __launch_bounds__(kMmaThreads, 1) mma_rate(float* sink, long long* cycles) {
  // A: 64 x 64 bf16, B: 128 x 64 bf16, K-major, 128-byte swizzle (the values are random, so
  // the swizzle only has to be a valid layout, not match a logical matrix).
  __shared__ __align__(1024) std::uint32_t tiles[(64 + 128) * 64 / 2];
  for (int i = threadIdx.x; i < (64 + 128) * 32; i += kMmaThreads) tiles[i] = random_bf16x2(i);
  sm90::fence_proxy_async();
  const std::uint64_t da = sm90::sw128_desc(tiles), db = sm90::sw128_desc(tiles + 64 * 32);
  const int lane = threadIdx.x & 31;
  std::uint32_t ra[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) ra[j] = random_bf16x2(7919u * threadIdx.x + j);
  float d[64];
#pragma unroll
  for (int j = 0; j < 64; ++j) d[j] = 0.f;
  long long t0 = 0;
  for (int pass = 0; pass < 2; ++pass) {
    __syncthreads();
    t0 = clock64();
    for (int i = 0; i < kMmaIters; ++i) {
      if constexpr (M == Mma::MmaSync) {
        // Four independent accumulators (d[0..15]), each fed four times per batch.
#pragma unroll
        for (int u = 0; u < 16; ++u) {
          float* c = d + 4 * (u & 3);
          asm volatile(
              "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
              "{%0,%1,%2,%3};\n"
              : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
              : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(ra[u & 3]), "r"(ra[(u + 1) & 3]));
        }
      } else {
        wgmma_batch<M>(d, da, db, ra);
      }
    }
    __syncthreads();
  }
  const long long t1 = clock64();
  float s = 0.f;
#pragma unroll
  for (int j = 0; j < 64; ++j) s += d[j];
  sink[threadIdx.x] = s + float(lane);
  if (threadIdx.x == 0) *cycles = t1 - t0;
}

// Whether wgmma's shared-memory operand reads and ordinary shared loads share one pipe: two
// warpgroups stream wgmma m64n64k16 with A and B in shared memory (128 B of operands per clock
// at the full tensor rate) while two more stream conflict-free 16-byte loads, each role timing
// its own loop. Either role can be switched off to time the other alone.
constexpr int kMixThreads = 512;
constexpr int kMixMmaBatches = 512;   // x 16 wgmmas per warpgroup
constexpr int kMixLdsIters = 1024;    // x 16 loads per thread: about as long as the wgmmas alone
constexpr int kMixChainSteps = 4096;  // dependent loads of one warp: shorter than the wgmmas

// The shared-load role: none, a stream of independent loads (two warpgroups), or one warp's
// chain of dependent loads (each result the next address), whose latency it measures.
enum class Lds { None, Stream, Chain };

template <bool DoMma, Lds L>
__global__ void __launch_bounds__(kMixThreads, 1) wgmma_beside_lds(float* sink, long long* cycles) {
  __shared__ __align__(1024) std::uint32_t tiles[(64 + 64) * 32];
  __shared__ __align__(16) std::uint32_t buf[20 * 1024 / 4];
  for (int i = threadIdx.x; i < (64 + 64) * 32; i += kMixThreads) tiles[i] = random_bf16x2(i);
  for (int i = threadIdx.x; i < 20 * 1024 / 4; i += kMixThreads) buf[i] = hash(i);
  sm90::fence_proxy_async();
  __syncthreads();
  const long long t0 = clock64();
  float s = 0.f;
  if (threadIdx.x < 256) {
    if constexpr (DoMma) {
      const std::uint64_t da = sm90::sw128_desc(tiles), db = sm90::sw128_desc(tiles + 64 * 32);
      const std::uint32_t unused[4] = {0, 0, 0, 0};  // A comes from shared memory
      float d[32];
#pragma unroll
      for (int j = 0; j < 32; ++j) d[j] = 0.f;
      for (int i = 0; i < kMixMmaBatches; ++i) wgmma_batch<Mma::WgmmaSs64>(d, da, db, unused);
#pragma unroll
      for (int j = 0; j < 32; ++j) s += d[j];
    }
  } else if constexpr (L == Lds::Chain) {
    if (threadIdx.x < 288) {
      // buf[i] holds its own byte address, so each load's result is the next load's address.
      unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(buf + (threadIdx.x - 256)));
      buf[threadIdx.x - 256] = a;
      __syncwarp();
      const long long c0 = clock64();
      for (int i = 0; i < kMixChainSteps; i += 16) {
#pragma unroll
        for (int u = 0; u < 16; ++u) asm volatile("ld.volatile.shared.u32 %0, [%0];" : "+r"(a));
      }
      const long long c1 = clock64();
      s = float(a);
      if (threadIdx.x == 256) cycles[2] = c1 - c0;
    }
  } else if constexpr (L == Lds::Stream) {
    const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(buf)) + (threadIdx.x - 256) * 16;
    std::uint32_t acc = 0;
    for (int i = 0; i < kMixLdsIters; ++i) {
#pragma unroll
      for (int u = 0; u < 16; ++u) {
        std::uint32_t v[4];
        asm volatile("ld.volatile.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3])
                     : "r"(base + u * 1024));
        acc += v[0] + v[1] + v[2] + v[3];
      }
    }
    s = float(acc);
  }
  const long long t1 = clock64();
  sink[threadIdx.x] = s;
  if (threadIdx.x == 0) cycles[0] = t1 - t0;
  if (threadIdx.x == 256) cycles[1] = t1 - t0;
}

// Median cycles of the timed pass over `repeats` launches (the kernels warm up in a first pass).
template <typename Launch>
double median_cycles(const Launch& launch, int repeats) {
  return median_of(clock_runs<1>(launch, 0, repeats)[0]);
}

template <Op O>
double per_clock(int repeats, double per_thread) {
  DeviceBuffer sink(kThreads * sizeof(float));
  const double c = median_cycles([&](long long* cyc) { pipe_rate<O><<<1, kThreads>>>(0.5f, sink.as<float>(), cyc); },
                                 repeats);
  return kThreads * per_thread / c;
}

// FLOPs per SM clock.
template <Mma M>
double mma_flops_per_clock(int repeats) {
  DeviceBuffer sink(kMmaThreads * sizeof(float));
  const double c = median_cycles([&](long long* cyc) { mma_rate<M><<<1, kMmaThreads>>>(sink.as<float>(), cyc); },
                                 repeats);
  const double per_instr = M == Mma::MmaSync ? 2.0 * 16 * 8 * 16 : 2.0 * 64 * (M == Mma::WgmmaSs128 ? 128 : 64) * 16;
  const double issuers = M == Mma::MmaSync ? kMmaThreads / 32 : kMmaThreads / 128;
  return issuers * kMmaIters * 16.0 * per_instr / c;
}

// wgmma_beside_lds<DoMma, L>, medians: wgmma FLOPs per SM clock, shared-load bytes per clock
// (Stream) and cycles per dependent load (Chain).
struct MixRates {
  double mma_flops = 0, lds_bytes = 0, chain_cycles = 0;
};
template <bool DoMma, Lds L>
MixRates mix_rates(int repeats) {
  DeviceBuffer sink(kMixThreads * sizeof(float));
  // The first launch is a warm-up.
  const auto runs =
      clock_runs<3>([&](long long* c) { wgmma_beside_lds<DoMma, L><<<1, kMixThreads>>>(sink.as<float>(), c); }, 1, repeats);
  // Median of the per-launch rates (work / cycles).
  auto median_rate = [](double work, std::vector<double> cycles) {
    for (double& c : cycles) c = work / c;
    return median_of(std::move(cycles));
  };
  MixRates r;
  if (DoMma) r.mma_flops = median_rate(2.0 * kMixMmaBatches * 16 * (2.0 * 64 * 64 * 16), runs[0]);
  if (L == Lds::Stream) r.lds_bytes = median_rate(256.0 * kMixLdsIters * 16 * 16, runs[1]);
  if (L == Lds::Chain) r.chain_cycles = median_of(runs[2]) / kMixChainSteps;
  return r;
}

}  // namespace

std::vector<MeasuredField> measure_sm_throughput(int repeats, int compute_capability) {
  const std::string how =
      "measured by overlap calibrate: one CTA of 1024 threads, {}, clock64 cycles of the second of two passes, "
      "median of {}";
  std::vector<MeasuredField> out = {
      {"fma_lanes_per_clk", per_clock<Op::Ffma>(repeats, 8.0 * kIters * kUnroll),
       fmt::format(fmt::runtime(how), "8 independent fma.rn.f32 chains per thread", repeats)},
      {"sfu_lanes_per_clk", per_clock<Op::Mufu>(repeats, 8.0 * kIters * kUnroll),
       fmt::format(fmt::runtime(how), "8 independent ex2.approx.ftz.f32 chains per thread", repeats)},
      {"smem_bytes_per_clk", per_clock<Op::Lds>(repeats, 16.0 * kIters * kUnroll),
       fmt::format(fmt::runtime(how), "independent conflict-free ld.volatile.shared.v4.u32", repeats)},
  };
  if (compute_capability == 90) {  // wgmma: sm_90a only
    const double ss128 = mma_flops_per_clock<Mma::WgmmaSs128>(repeats);
    const double ss64 = mma_flops_per_clock<Mma::WgmmaSs64>(repeats);
    const double rs64 = mma_flops_per_clock<Mma::WgmmaRs64>(repeats);
    const double sync = mma_flops_per_clock<Mma::MmaSync>(repeats);
    out.push_back({"mma_sync_fraction", sync / ss128,
                   fmt::format("measured by overlap calibrate: one CTA of 8 warps, bf16 FLOPs per SM clock of mma.sync "
                               "m16n8k16 ({:.0f}) over wgmma m64n128k16 with A and B in shared memory, two warpgroups "
                               "({:.0f}); wgmma m64n64k16 reaches {:.0f} (A, B in shared memory) and {:.0f} (A in "
                               "registers); median of {}",
                               sync, ss128, ss64, rs64, repeats)});
    const MixRates mma_alone = mix_rates<true, Lds::None>(repeats);
    const MixRates lds_alone = mix_rates<false, Lds::Stream>(repeats);
    const MixRates both = mix_rates<true, Lds::Stream>(repeats);
    const MixRates chain_alone = mix_rates<false, Lds::Chain>(repeats);
    const MixRates chain_beside = mix_rates<true, Lds::Chain>(repeats);
    MeasuredField& smem = *std::find_if(out.begin(), out.end(), [](const MeasuredField& f) {
      return f.field == "smem_bytes_per_clk";
    });
    smem.method += fmt::format(
        "; beside two warpgroups streaming wgmma m64n64k16 (A, B in shared memory) on the same SM, two "
        "warpgroups of such loads reach {:.1f} B/clk and the wgmmas {:.0f} FLOP/clk (alone: {:.1f} B/clk, "
        "{:.0f} FLOP/clk)",
        both.lds_bytes, both.mma_flops, lds_alone.lds_bytes, mma_alone.mma_flops);
    out.push_back({"lds_latency_beside_wgmma_cycles", chain_beside.chain_cycles,
                   fmt::format("measured by overlap calibrate: one warp's chain of {} dependent ld.volatile.shared.u32 "
                               "while two warpgroups of the same CTA stream wgmma m64n64k16 with A and B in shared "
                               "memory, cycles per load, median of {} ({:.1f} without the wgmmas)",
                               kMixChainSteps, repeats, chain_alone.chain_cycles)});
  }
  return out;
}

}  // namespace overlap::gpu
