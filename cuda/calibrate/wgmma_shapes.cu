// An experiment, not a calibration: the wgmma stream's rate by the instruction's N and by how a
// kernel's k-loop issues it. calibrate's tensor stream (tensor_stream.cu) times m64n256 in
// batches of 8 with every batch waited for; the dualgemm kernels issue a k-block (4 k-steps of
// 32 bytes of K) of m64nN at a time, N = 2 x the warpgroup's columns (64 to 256), and keep one
// k-block in flight (commit, then wait until one group is left). Does N, or the grouping, change
// the rate the tensor pipe reaches?
//
//   tma_wgmma_shapes [repeats]
//
// Every SM runs one CTA of two warpgroups streaming wgmma with A (64 rows) and B (N rows) in
// shared memory (128 bytes of K, 128-byte swizzle, random finite values), about 100 us a launch.
// Prints one CSV row per case: format, N, wgmmas a group, groups left in flight at each wait,
// TFLOP/s (device events, median), FLOPs an SM a clock (clock64), and that against the
// calibration's pattern (m64n256, 8 a group, none in flight) of the same format.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <utility>

#include <cute/arch/mma_sm90_gmma.hpp>

#include "calibrate/median_time.hpp"
#include "common/sm90_ptx.cuh"
#include "runtime/cuda_check.hpp"
#include "runtime/device_buffer.hpp"

namespace {

namespace sm90 = overlap::cuda::sm90;
namespace gmma = cute::SM90::GMMA;
using overlap::gpu::DeviceBuffer;

constexpr int kThreads = 256;

template <bool Fp8, int N>
struct AtomOf;
#define OVERLAP_WGMMA_ATOM(n)                                                                  \
  template <>                                                                                  \
  struct AtomOf<false, n> {                                                                    \
    using type = gmma::MMA_64x##n##x16_F32BF16BF16_SS<gmma::Major::K, gmma::Major::K>;         \
  };                                                                                           \
  template <>                                                                                  \
  struct AtomOf<true, n> {                                                                     \
    using type = gmma::MMA_64x##n##x32_F32E4M3E4M3_SS_TN<>;                                    \
  };
OVERLAP_WGMMA_ATOM(64)
OVERLAP_WGMMA_ATOM(96)
OVERLAP_WGMMA_ATOM(128)
OVERLAP_WGMMA_ATOM(192)
OVERLAP_WGMMA_ATOM(256)
#undef OVERLAP_WGMMA_ATOM

template <bool Fp8, int N, std::size_t... I>
__device__ __forceinline__ void mma(std::uint64_t a, std::uint64_t b, float (&d)[N / 2], std::index_sequence<I...>) {
  AtomOf<Fp8, N>::type::fma(a, b, d[I]..., gmma::ScaleOut::One);
}

__device__ __forceinline__ std::uint32_t random_word(std::uint32_t i) {
  i ^= i >> 16;
  i *= 0x7feb352du;
  i ^= i >> 15;
  return i & 0xB7B7B7B7u;  // finite values below 1 in either format
}

template <bool Fp8, int N, int Group, int InFlight>
__global__ void __launch_bounds__(kThreads, 1) stream(int groups, float* sink, long long* cycles) {
  __shared__ __align__(1024) std::uint32_t tiles[(64 + 256) * 32];
  for (int i = threadIdx.x; i < (64 + N) * 32; i += kThreads) tiles[i] = random_word(i + 1);
  sm90::fence_proxy_async();
  __syncthreads();
  const std::uint64_t da = sm90::sw128_desc(tiles), db = sm90::sw128_desc(tiles + 64 * 32);
  float d[N / 2];
#pragma unroll
  for (int j = 0; j < N / 2; ++j) d[j] = 0.f;
  const long long t0 = clock64();
  for (int i = 0; i < groups; ++i) {
    sm90::wgmma_fence();
#pragma unroll
    for (int u = 0; u < Group; ++u) {
      const std::uint64_t step = 2 * (u & 3);  // 32 bytes along K per wgmma, in 16-byte units
      mma<Fp8, N>(da + step, db + step, d, std::make_index_sequence<N / 2>{});
    }
    sm90::wgmma_commit();
    sm90::wgmma_wait<InFlight>();
    sm90::fence_regs(d);
  }
  sm90::wgmma_wait<0>();
  sm90::fence_regs(d);
  const long long t1 = clock64();
  float s = 0.f;
#pragma unroll
  for (int j = 0; j < N / 2; ++j) s += d[j];
  sink[blockIdx.x * kThreads + threadIdx.x] = s;
  if (threadIdx.x == 0) atomicMax(reinterpret_cast<unsigned long long*>(cycles), static_cast<unsigned long long>(t1 - t0));
}

struct Rate {
  double tflops, flops_per_clk;
};

template <bool Fp8, int N, int Group, int InFlight>
Rate measure(int sms, int repeats) {
  const double flops_per_mma = 2.0 * 64 * N * (Fp8 ? 32 : 16);
  // About 100 us at the datasheet's rate (4096 bf16 / 8192 fp8 FLOPs an SM a clock, 1.98 GHz).
  const int groups = int(100e-6 * 1.98e9 * (Fp8 ? 8192.0 : 4096.0) / (2 * Group * flops_per_mma));
  DeviceBuffer sink(std::size_t(sms) * kThreads * sizeof(float)), cycles(sizeof(long long));
  auto launch = [&](cudaStream_t s) {
    stream<Fp8, N, Group, InFlight><<<sms, kThreads, 0, s>>>(groups, sink.as<float>(), cycles.as<long long>());
  };
  const auto [us, c] = overlap::gpu::median_us_and_cycles(launch, cycles, repeats);
  const double flops = double(sms) * 2 * groups * Group * flops_per_mma;
  return {flops / (us * 1e6), flops / sms / double(c)};
}

template <bool Fp8, int N, int Group, int InFlight>
void row(int sms, int repeats, double base) {
  const Rate r = measure<Fp8, N, Group, InFlight>(sms, repeats);
  std::printf("%s,%d,%d,%d,%.1f,%.0f,%.3f\n", Fp8 ? "fp8" : "bf16", N, Group, InFlight, r.tflops, r.flops_per_clk,
              base > 0 ? r.tflops / base : 1.0);
}

template <bool Fp8>
void format_rows(int sms, int repeats) {
  const double base = measure<Fp8, 256, 8, 0>(sms, repeats).tflops;
  row<Fp8, 256, 8, 0>(sms, repeats, base);
  row<Fp8, 256, 4, 0>(sms, repeats, base);
  row<Fp8, 256, 4, 1>(sms, repeats, base);
  row<Fp8, 192, 4, 1>(sms, repeats, base);
  row<Fp8, 128, 4, 1>(sms, repeats, base);
  row<Fp8, 96, 4, 1>(sms, repeats, base);
  row<Fp8, 64, 4, 1>(sms, repeats, base);
  row<Fp8, 128, 8, 0>(sms, repeats, base);
  row<Fp8, 64, 8, 0>(sms, repeats, base);
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 10;
  int sms = 0;
  OVERLAP_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::printf("# wgmma_shapes: one CTA of two warpgroups an SM (%d SMs), A and B in shared memory\n", sms);
  std::printf("format,n,wgmmas_a_group,groups_in_flight,TFLOPs,flops_per_sm_clk,against_calibration\n");
  format_rows<false>(sms, repeats);
  format_rows<true>(sms, repeats);
  return 0;
}
