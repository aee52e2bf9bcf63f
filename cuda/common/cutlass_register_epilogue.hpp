#pragma once
// What our CUTLASS 3.x sm90 GEMMs with their own collective epilogue (projchain's activations,
// linrnn's scan) share. Both epilogues take a tile's fp32 accumulators in registers and store
// by themselves (the interface of cutlass/epilogue/collective/default_epilogue.hpp, wrapped by
// detail::Sm90TmaWarpSpecializedAdapter for the warp-specialized kernels), so the kernel's C and
// D are nominal, they need no workspace, and their arguments are their params. A derived
// epilogue adds SharedStorage, can_implement, its constructor and operator().
#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/thread/linear_combination.h>
#include <cutlass/gemm/gemm.h>

#include <cstdint>

namespace overlap::cuda::cutlass_sm90 {

// ((2,2,V), MMA_M, MMA_N) -> ((2, MMA_M), (2, V, MMA_N)): rows x columns of one thread's
// accumulators (the sm90 wgmma fragment: pairs of adjacent columns 8 apart, rows r and r+8).
template <class Layout>
CUTE_HOST_DEVICE constexpr auto accumulator_rows_cols(Layout l) {
  using namespace cute;
  static_assert(decltype(rank<0>(l))::value == 3, "expects an sm90 wgmma accumulator layout");
  static_assert(decltype(size<0, 0>(l))::value == 2 && decltype(size<0, 1>(l))::value == 2);
  return make_layout(make_layout(get<0, 1>(l), get<1>(l)), make_layout(get<0, 0>(l), get<0, 2>(l), get<2>(l)));
}

// The types and host-side calls the kernel and GemmUniversalAdapter ask of any collective
// epilogue. C and D are not used as such; their strides only have to be rank 3 row-major.
template <class Args>
struct RegisterEpilogueInterface {
  using EpilogueSchedule = cutlass::gemm::EpilogueDefault;
  using DispatchPolicy = EpilogueSchedule;
  using ElementC = cutlass::bfloat16_t;
  using ElementD = cutlass::bfloat16_t;
  using ElementOutput = cutlass::bfloat16_t;
  using ElementAccumulator = float;
  using ElementCompute = float;
  using StrideC = cute::Stride<int64_t, cute::_1, int64_t>;
  using StrideD = StrideC;
  using ThreadEpilogueOp = cutlass::epilogue::thread::LinearCombination<ElementD, 1, float, float>;
  using GmemTiledCopyC = void;
  using GmemTiledCopyD = void;

  using Arguments = Args;
  using Params = Args;

  template <class ProblemShape>
  static constexpr Params to_underlying_arguments(ProblemShape const&, Arguments const& args, void*) {
    return args;
  }
  template <class ProblemShape>
  static size_t get_workspace_size(ProblemShape const&, Arguments const&) {
    return 0;
  }
  template <class ProblemShape>
  static cutlass::Status initialize_workspace(ProblemShape const&, Arguments const&, void*, cudaStream_t,
                                              cutlass::CudaHostAdapter* = nullptr) {
    return cutlass::Status::kSuccess;
  }
  CUTLASS_DEVICE bool is_source_needed() { return false; }
};

// The stride of a K-major operand (A or B) whose rows are `k` elements apart: the kernel's
// stride type must have K contiguous (the row stride comes first, the batch stride is unused).
template <class Stride>
Stride k_major_stride(int k) {
  using namespace cute;
  static_assert(is_same_v<remove_cvref_t<decltype(get<1>(Stride{}))>, _1>, "the operand must be K-major");
  Stride s{};
  get<0>(s) = k;
  return s;
}

}  // namespace overlap::cuda::cutlass_sm90
