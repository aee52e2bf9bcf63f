#pragma once
// wgmma m64 x N x k16 (bf16 operands, fp32 accumulators, N in {64, 128}) through CuTe's
// instruction wrappers, called with raw shared-memory descriptors (common/sm90_ptx.cuh's sw128_desc)
// and plain accumulator arrays, so a kernel reads as "D += A B" with its operand majors.
#include <cstddef>
#include <cstdint>
#include <utility>

#include <cute/arch/mma_sm90_gmma.hpp>

namespace overlap::cuda::sm90 {

namespace gmma = cute::SM90::GMMA;
using Major = gmma::Major;

template <int N>
struct Bf16Gmma;
template <>
struct Bf16Gmma<64> {
  template <Major A, Major B>
  using SS = gmma::MMA_64x64x16_F32BF16BF16_SS<A, B>;
  template <Major B>
  using RS = gmma::MMA_64x64x16_F32BF16BF16_RS<Major::K, B>;
};
template <>
struct Bf16Gmma<128> {
  template <Major A, Major B>
  using SS = gmma::MMA_64x128x16_F32BF16BF16_SS<A, B>;
  template <Major B>
  using RS = gmma::MMA_64x128x16_F32BF16BF16_RS<Major::K, B>;
};

namespace detail {
template <class Op, int Regs, std::size_t... I>
__device__ __forceinline__ void ss(std::uint64_t a, std::uint64_t b, float (&d)[Regs], gmma::ScaleOut s,
                                   std::index_sequence<I...>) {
  Op::fma(a, b, d[I]..., s);
}
template <class Op, int Regs, std::size_t... I>
__device__ __forceinline__ void rs(const std::uint32_t (&a)[4], std::uint64_t b, float (&d)[Regs], gmma::ScaleOut s,
                                   std::index_sequence<I...>) {
  Op::fma(a[0], a[1], a[2], a[3], b, d[I]..., s);
}
}  // namespace detail

// D (64 x N, N/2 floats per thread) = A B (+ D when accumulate), A and B in shared memory.
template <Major A, Major B, int N>
__device__ __forceinline__ void wgmma_ss(std::uint64_t a, std::uint64_t b, float (&d)[N / 2], bool accumulate) {
  detail::ss<typename Bf16Gmma<N>::template SS<A, B>, N / 2>(
      a, b, d, accumulate ? gmma::ScaleOut::One : gmma::ScaleOut::Zero, std::make_index_sequence<N / 2>{});
}

// D (64 x N) = A B (+ D), A (64 x 16, K-major) from registers in the accumulator layout of an
// m64n16 tile converted to bf16 pairs, B in shared memory.
template <Major B, int N>
__device__ __forceinline__ void wgmma_rs(const std::uint32_t (&a)[4], std::uint64_t b, float (&d)[N / 2],
                                         bool accumulate) {
  detail::rs<typename Bf16Gmma<N>::template RS<B>, N / 2>(
      a, b, d, accumulate ? gmma::ScaleOut::One : gmma::ScaleOut::Zero, std::make_index_sequence<N / 2>{});
}

}  // namespace overlap::cuda::sm90
