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
#include <utility>
#include <cstdint>
#include <vector>

#include <fmt/format.h>

#include "calibrate/sm_throughput.hpp"
#include "gla/gla_sm90.cuh"
#include "runtime/cuda_check.hpp"
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
// D(64x128, fp32) += A(64x16, smem) * B(16x128, smem), both K-major.
__device__ __forceinline__ void wgmma_m64n128k16_ss(float (&d)[64], std::uint64_t a, std::uint64_t b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
      "%64, %65, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(a), "l"(b));
}
enum class Mma { WgmmaSs128, WgmmaSs64, WgmmaRs64, MmaSync };
constexpr int kMmaThreads = 256;  // two warpgroups / eight warps
constexpr int kMmaIters = 512;    // batches of 16 instructions per warpgroup or warp

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
        sm90::wgmma_fence();
#pragma unroll
        for (int u = 0; u < 16; ++u) {
          const std::uint64_t step = 2 * (u & 3);  // 32 bytes along K per k16, in 16-byte units
          if constexpr (M == Mma::WgmmaSs128) {
            wgmma_m64n128k16_ss(d, da + step, db + step);
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
      float d[32];
#pragma unroll
      for (int j = 0; j < 32; ++j) d[j] = 0.f;
      for (int i = 0; i < kMixMmaBatches; ++i) {
        sm90::wgmma_fence();
#pragma unroll
        for (int u = 0; u < 16; ++u) sm90::wgmma_m64n64k16_ss<0, 0>(d, da + 2 * (u & 3), db + 2 * (u & 3), 1);
        sm90::wgmma_commit();
        sm90::wgmma_wait<0>();
        sm90::fence_regs(d);
      }
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

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median over `repeats` launches of the cycles one launch's timed pass took.
template <typename Launch>
double median_cycles(const Launch& launch, int repeats) {
  DeviceBuffer cycles(sizeof(long long));
  std::vector<double> all;
  for (int rep = 0; rep < repeats; ++rep) {
    launch(cycles.as<long long>());
    OVERLAP_CUDA_CHECK(cudaGetLastError());
    OVERLAP_CUDA_CHECK(cudaDeviceSynchronize());
    long long c = 0;
    cycles.download(&c, sizeof(c));
    all.push_back(static_cast<double>(c));
  }
  return median_of(all);
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
  DeviceBuffer sink(kMixThreads * sizeof(float)), cycles(3 * sizeof(long long));
  std::vector<double> mma, lds, chain;
  for (int rep = 0; rep < repeats + 1; ++rep) {  // the first is a warm-up
    wgmma_beside_lds<DoMma, L><<<1, kMixThreads>>>(sink.as<float>(), cycles.as<long long>());
    OVERLAP_CUDA_CHECK(cudaGetLastError());
    OVERLAP_CUDA_CHECK(cudaDeviceSynchronize());
    long long c[3] = {1, 1, 1};
    cycles.download(c, sizeof(c));
    if (rep == 0) continue;
    mma.push_back(2.0 * kMixMmaBatches * 16 * (2.0 * 64 * 64 * 16) / double(c[0]));
    lds.push_back(256.0 * kMixLdsIters * 16 * 16 / double(c[1]));
    chain.push_back(double(c[2]) / kMixChainSteps);
  }
  MixRates r;
  if (DoMma) r.mma_flops = median_of(mma);
  if (L == Lds::Stream) r.lds_bytes = median_of(lds);
  if (L == Lds::Chain) r.chain_cycles = median_of(chain);
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
