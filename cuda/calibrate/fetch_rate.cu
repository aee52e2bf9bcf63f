#include "calibrate/fetch_rate.hpp"

#include <cuda_runtime.h>

#include <array>
#include <utility>
#include <string>

#include <fmt/format.h>

#include "calibrate/clock_runs.hpp"
#include "runtime/device_buffer.hpp"

namespace overlap::gpu {
namespace {

constexpr int kChains = 8;  // independent FFMA and integer chains a thread: no dependency stalls
constexpr int kPasses = 3;  // the first pass fetches the code; the two after it are timed

// One role's straight-line body of N instructions (16 bytes each), FFMA and SHF (FMA and ALU
// pipes) in turn so that two warps a scheduler can issue one a cycle. `Role` changes the code
// (the shift amounts), so two roles' warps on a scheduler run different instructions, as the
// output and state warps of a gla chunk do.
template <int N, int Role>
__device__ __forceinline__ void body(float (&x)[kChains], unsigned (&u)[kChains]) {
#pragma unroll
  for (int i = 0; i < N / 2; ++i) {
    asm volatile("fma.rn.f32 %0, %0, %0, %0;" : "+f"(x[i % kChains]));
    asm volatile("shf.l.wrap.b32 %0, %0, %0, %1;" : "+r"(u[i % kChains]) : "n"(Role * 7 + 3));
  }
}

// Warps w and w + 4 share scheduler w % 4; with 8 warps, warps 4-7 run the other role's body.
template <int N>
__global__ void fetch_body(float seed, float* sink, long long* cycles) {
  float x[kChains];
  unsigned u[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) x[c] = seed + float(c), u[c] = threadIdx.x + c;
  const int role = (threadIdx.x / 32) / 4;
  long long t0 = 0;
#pragma unroll 1
  for (int pass = 0; pass < kPasses; ++pass) {
    if (pass == 1) {
      __syncthreads();
      t0 = clock64();
    }
    if (role == 0) body<N, 0>(x, u);
    else body<N, 1>(x, u);
  }
  __syncthreads();
  const long long t1 = clock64();
  float s = 0;
#pragma unroll
  for (int c = 0; c < kChains; ++c) s += x[c] + float(u[c]);
  sink[blockIdx.x * blockDim.x + threadIdx.x] = s;
  if (threadIdx.x == 0 && blockIdx.x == 0) *cycles = t1 - t0;
}

// Instructions a scheduler issues per cycle with two warps of two roles on it, each role's body
// N instructions (2 N x 16 bytes of code a scheduler cycles through), every SM at once.
template <int N>
double issue_per_clk(int sms) {
  DeviceBuffer sink(std::size_t(sms) * 256 * sizeof(float));
  const auto runs = clock_runs<1>([&](long long* c) { fetch_body<N><<<sms, 256>>>(1.0f, sink.as<float>(), c); }, 1, 7);
  return 2.0 * N * (kPasses - 1) / median_of(runs[0]);
}

// A scheduler's code (both roles) in KiB, and the body of each role in instructions.
constexpr std::array<int, 10> kCodeKiB = {8, 16, 32, 40, 48, 64, 96, 128, 192, 256};
constexpr int body_instructions(int code_KiB) { return code_KiB * 1024 / 16 / 2; }

template <std::size_t... I>
std::array<double, kCodeKiB.size()> measure_sizes(int sms, std::index_sequence<I...>) {
  return {issue_per_clk<body_instructions(kCodeKiB[I])>(sms)...};
}

}  // namespace

std::vector<MeasuredField> measure_fetch_rate() {
  const int sms = overlap::gpu::current_sm_count();
  const auto rate = measure_sizes(sms, std::make_index_sequence<kCodeKiB.size()>{});
  std::string curve;
  for (std::size_t i = 0; i < rate.size(); ++i) curve += fmt::format("{}{} KiB: {:.2f}", i ? ", " : "", kCodeKiB[i], rate[i]);
  // Two plateaus and what lies past them: code that fits the nearest instruction cache issues at
  // the pipes' rate; past it, at the rate the next level feeds; past that, at the L2's.
  const auto plateau_end = [&](std::size_t from) {
    std::size_t last = from;
    while (last + 1 < rate.size() && rate[last + 1] >= 0.9 * rate[from]) ++last;
    return last;
  };
  const std::size_t l0 = plateau_end(0);
  const std::size_t l1 = l0 + 1 < rate.size() ? plateau_end(l0 + 1) : l0;
  const std::string how = fmt::format(
      "measured by overlap calibrate (cuda/calibrate/fetch_rate.cu): {} CTAs, one per SM, of 8 warps (two a "
      "scheduler, of two roles running different straight-line bodies of independent FFMA and SHF in turn), the "
      "second and third pass after a first that fetched the code, clock64, median of 7; instructions issued per "
      "scheduler per cycle by the code of a scheduler's two roles: {}",
      sms, curve);
  return {{"icache_near_KiB", double(kCodeKiB[l0]),
           fmt::format("{}; the largest code issued within 10% of the smallest's rate ({:.2f})", how, rate[0])},
          {"icache_far_KiB", double(kCodeKiB[l1]),
           fmt::format("{}; the largest code issued within 10% of the rate just past icache_near_KiB", how)},
          {"fetch_far_issue_per_clk", rate[std::min(l0 + 1, rate.size() - 1)],
           fmt::format("{}; the rate of the first size past icache_near_KiB ({} KiB)", how,
                       kCodeKiB[std::min(l0 + 1, rate.size() - 1)])},
          {"fetch_l2_issue_per_clk", rate.back(),
           fmt::format("{}; the rate of the largest code ({} KiB)", how, kCodeKiB.back())}};
}

}  // namespace overlap::gpu
