#pragma once
// Every SM streaming wgmma from shared memory, nothing else: one CTA of two warpgroups an SM, each
// warpgroup issuing groups of `Group` wgmma m64nNk16 (bf16) / m64nNk32 (e4m3) with A (64 rows)
// and B (N rows) in shared memory (128 bytes of K, 128-byte swizzle, random finite values), a
// commit after each group and a wait until `InFlight` groups are left, for about 100 us (the
// length of the kernels overlap validate times). With `KAtoms` = 2 the tiles are laid out as the
// dualgemm kernels' two-atom stages (cuda/dualgemm/dualgemm_kernel.cuh, k_atoms): A as two
// 128-byte atoms of K one after the other, B with each atom's 8-row groups interleaved (2 KiB
// apart), each group's wgmmas walking both atoms. calibrate's tensor stream (tensor_stream.cu)
// times m64n256 in groups of 8 waited for; the wgmma_shapes experiment the other N and groupings.
#include <cuda_runtime.h>

#include <cstdint>
#include <utility>

#include <cute/arch/mma_sm90_gmma.hpp>

#include "calibrate/median_time.hpp"
#include "common/sm90_ptx.cuh"
#include "runtime/device_buffer.hpp"

namespace overlap::gpu {

namespace wgmma_stream_detail {

namespace gmma = cute::SM90::GMMA;

constexpr int kThreads = 256;

template <bool Fp8, int N>
struct AtomOf;
#define OVERLAP_WGMMA_ATOM(n)                                                          \
  template <>                                                                          \
  struct AtomOf<false, n> {                                                            \
    using type = gmma::MMA_64x##n##x16_F32BF16BF16_SS<gmma::Major::K, gmma::Major::K>; \
  };                                                                                   \
  template <>                                                                          \
  struct AtomOf<true, n> {                                                             \
    using type = gmma::MMA_64x##n##x32_F32E4M3E4M3_SS_TN<>;                            \
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
  // Finite values below 1 in either format (bf16 pairs, e4m3 quads): exponent bits capped.
  return i & 0xB7B7B7B7u;
}

// The stream's end: the accumulators' sum to `sink` (so the wgmmas are not dead code) and the
// loop's clock64 cycles since t0, the slowest CTA's, to `cycles`.
template <int R>
__device__ __forceinline__ void publish(const float (&d)[R], long long t0, float* sink, long long* cycles) {
  const long long t1 = clock64();
  float s = 0.f;
#pragma unroll
  for (int j = 0; j < R; ++j) s += d[j];
  *sink = s;
  if (threadIdx.x == 0) atomicMax(reinterpret_cast<unsigned long long*>(cycles), static_cast<unsigned long long>(t1 - t0));
}

template <bool Fp8, int N, int Group, int InFlight, int KAtoms = 1>
__global__ void __launch_bounds__(kThreads, 1) stream(int groups, float* sink, long long* cycles) {
  namespace sm90 = overlap::cuda::sm90;
  static_assert(KAtoms == 1 || KAtoms == 2);
  static_assert(Group % (4 * KAtoms) == 0, "a group walks every atom");
  constexpr int kWords = (64 + N) * 32 * KAtoms;  // 128 bytes of K a row an atom
  static_assert(kWords * 4 <= 48 * 1024, "static shared memory");
  __shared__ __align__(1024) std::uint32_t tiles[kWords];
  for (int i = threadIdx.x; i < kWords; i += kThreads) tiles[i] = random_word(i + 1);
  sm90::fence_proxy_async();
  __syncthreads();
  // Atom a of A at a x 8 KiB; of B at 1 KiB x a within groups KAtoms KiB apart.
  std::uint64_t da[KAtoms], db[KAtoms];
#pragma unroll
  for (int a = 0; a < KAtoms; ++a) {
    da[a] = sm90::sw128_desc(tiles + a * 64 * 32);
    db[a] = KAtoms == 1 ? sm90::sw128_desc(tiles + 64 * 32)
                        : sm90::sw128_desc(tiles + KAtoms * 64 * 32 + a * 8 * 32, 16, KAtoms * 1024);
  }
  float d[N / 2];
#pragma unroll
  for (int j = 0; j < N / 2; ++j) d[j] = 0.f;
  const long long t0 = clock64();
  for (int i = 0; i < groups; ++i) {
    sm90::wgmma_fence();
#pragma unroll
    for (int u = 0; u < Group; ++u) {
      const std::uint64_t step = 2 * (u & 3);  // 32 bytes along K per wgmma, in 16-byte units
      const int atom = u / 4 % KAtoms;
      mma<Fp8, N>(da[atom] + step, db[atom] + step, d, std::make_index_sequence<N / 2>{});
    }
    sm90::wgmma_commit();
    sm90::wgmma_wait<InFlight>();
    sm90::fence_regs(d);
  }
  if constexpr (InFlight > 0) {
    sm90::wgmma_wait<0>();
    sm90::fence_regs(d);
  }
  publish(d, t0, sink + blockIdx.x * kThreads + threadIdx.x, cycles);
}

}  // namespace wgmma_stream_detail

struct WgmmaStreamRate {
  double tflops, flops_per_clk, clock_MHz, us;  // FLOPs per SM clock from clock64; us a launch
};

// The stream on `sms` SMs: FLOPs over the median event time of `repeats` launches, and the
// slowest CTA's clock64 cycles of one more for the clock the SMs held.
template <bool Fp8, int N, int Group, int InFlight, int KAtoms = 1>
WgmmaStreamRate measure_wgmma_stream(int sms, int repeats) {
  using namespace wgmma_stream_detail;
  const double flops_per_mma = 2.0 * 64 * N * (Fp8 ? 32 : 16);
  // About 100 us at the datasheet's rate (4096 bf16 / 8192 fp8 FLOPs an SM a clock at 1.98 GHz).
  const int groups = int(100e-6 * 1.98e9 * (Fp8 ? 8192.0 : 4096.0) / (2 * Group * flops_per_mma));
  DeviceBuffer sink(std::size_t(sms) * kThreads * sizeof(float)), cycles(sizeof(long long));
  auto launch = [&](cudaStream_t s) {
    stream<Fp8, N, Group, InFlight, KAtoms><<<sms, kThreads, 0, s>>>(groups, sink.as<float>(), cycles.as<long long>());
  };
  const auto [us, c] = median_us_and_cycles(launch, cycles, repeats);
  const double flops = double(sms) * 2 * groups * Group * flops_per_mma;
  return {flops / (us * 1e6), flops / sms / double(c), double(c) / us, us};
}

}  // namespace overlap::gpu
