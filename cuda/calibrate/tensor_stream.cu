// One CTA of two warpgroups on every SM, each warpgroup issuing batches of wgmma m64n256 (k16
// bf16 / k32 fp8) with A and B in shared memory (random values, 128-byte swizzle), a commit and
// a wait per batch of 8, for about 100 us (the length of the kernels overlap validate times).
// Device events give the wall time of the whole grid (the clock the GPU holds under that load
// included); clock64 gives the cycles, so the clock is reported beside the rate.
#include "calibrate/tensor_stream.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <utility>

#include <cute/arch/mma_sm90_gmma.hpp>
#include <fmt/format.h>

#include "calibrate/clock_runs.hpp"
#include "calibrate/median_time.hpp"
#include "common/sm90_ptx.cuh"
#include "runtime/device_buffer.hpp"

namespace overlap::gpu {
namespace {

namespace sm90 = overlap::cuda::sm90;
namespace gmma = cute::SM90::GMMA;

constexpr int kThreads = 256;
constexpr int kBatch = 8;  // wgmmas per commit / wait

template <bool Fp8>
using Atom = std::conditional_t<Fp8, gmma::MMA_64x256x32_F32E4M3E4M3_SS_TN<>,
                                gmma::MMA_64x256x16_F32BF16BF16_SS<gmma::Major::K, gmma::Major::K>>;

template <bool Fp8, std::size_t... I>
__device__ __forceinline__ void mma(std::uint64_t a, std::uint64_t b, float (&d)[128], std::index_sequence<I...>) {
  Atom<Fp8>::fma(a, b, d[I]..., gmma::ScaleOut::One);
}

__device__ __forceinline__ std::uint32_t random_word(std::uint32_t i) {
  i ^= i >> 16;
  i *= 0x7feb352du;
  i ^= i >> 15;
  // Finite values below 1 in either format (bf16 pairs, e4m3 quads): exponent bits capped.
  return i & 0xB7B7B7B7u;
}

template <bool Fp8>
__global__ void __launch_bounds__(kThreads, 1) tensor_stream(int batches, float* sink, long long* cycles) {
  // A: 64 rows, B: 256 rows, 128 bytes of K each, K-major, 128-byte swizzle.
  __shared__ __align__(1024) std::uint32_t tiles[(64 + 256) * 32];
  for (int i = threadIdx.x; i < (64 + 256) * 32; i += kThreads) tiles[i] = random_word(i + 1);
  sm90::fence_proxy_async();
  __syncthreads();
  const std::uint64_t da = sm90::sw128_desc(tiles), db = sm90::sw128_desc(tiles + 64 * 32);
  float d[128];
#pragma unroll
  for (int j = 0; j < 128; ++j) d[j] = 0.f;
  const long long t0 = clock64();
  for (int i = 0; i < batches; ++i) {
    sm90::wgmma_fence();
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const std::uint64_t step = 2 * (u & 3);  // 32 bytes along K per wgmma, in 16-byte units
      mma<Fp8>(da + step, db + step, d, std::make_index_sequence<128>{});
    }
    sm90::wgmma_commit();
    sm90::wgmma_wait<0>();
    sm90::fence_regs(d);
  }
  const long long t1 = clock64();
  float s = 0.f;
#pragma unroll
  for (int j = 0; j < 128; ++j) s += d[j];
  sink[blockIdx.x * kThreads + threadIdx.x] = s;
  if (threadIdx.x == 0) atomicMax(reinterpret_cast<unsigned long long*>(cycles), static_cast<unsigned long long>(t1 - t0));
}

struct Stream {
  double tflops, flops_per_clk, clock_MHz, us;
};

template <bool Fp8>
Stream measure(int sms, int repeats) {
  constexpr double kFlopsPerMma = 2.0 * 64 * 256 * (Fp8 ? 32 : 16);
  // About 100 us at the datasheet's rate (4096 bf16 / 8192 fp8 FLOPs an SM a clock at 1.98 GHz).
  const int batches = int(100e-6 * 1.98e9 * (Fp8 ? 8192.0 : 4096.0) / (2 * kBatch * kFlopsPerMma));
  DeviceBuffer sink(std::size_t(sms) * kThreads * sizeof(float)), cycles(sizeof(long long));
  auto launch = [&](cudaStream_t s) {
    tensor_stream<Fp8><<<sms, kThreads, 0, s>>>(batches, sink.as<float>(), cycles.as<long long>());
  };
  const auto [us, c] = median_us_and_cycles(launch, cycles, repeats);
  const double flops = double(sms) * 2 * batches * kBatch * kFlopsPerMma;
  return {flops / (us * 1e6), flops / sms / double(c), double(c) / us, us};
}

}  // namespace

std::vector<MeasuredField> measure_tensor_stream(int repeats, int compute_capability) {
  if (compute_capability != 90) return {};  // wgmma: sm_90a only
  int sms = 0;
  OVERLAP_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::vector<MeasuredField> out;
  for (const bool fp8 : {false, true}) {
    const Stream s = fp8 ? measure<true>(sms, repeats) : measure<false>(sms, repeats);
    out.push_back({fp8 ? "tensor_fp8_stream_TFLOPs" : "tensor_bf16_stream_TFLOPs", s.tflops,
                   fmt::format("measured by overlap calibrate (cuda/calibrate/tensor_stream.cu): {} CTAs, one an SM, "
                               "two warpgroups each streaming wgmma m64n256{} with A and B in shared memory (8 a "
                               "commit and wait), {:.0f} us a launch, FLOPs over the median event time of {} "
                               "launches; {:.0f} FLOPs an SM a clock (clock64), so the SMs ran at {:.0f} MHz",
                               sms, fp8 ? "k32 e4m3" : "k16 bf16", s.us, repeats, s.flops_per_clk, s.clock_MHz)});
  }
  return out;
}

}  // namespace overlap::gpu
