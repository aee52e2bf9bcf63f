// epilogue_fused: one CUTLASS 3.x sm90 GEMM, x [M,d] · w_packed [d,ldw], with every activation
// applied in registers by ProjchainEpilogue before the bf16 store (projchain_fused_epilogue.cuh).
//
// Mainloop: CollectiveBuilder with KernelTmaWarpSpecializedCooperative, i.e. a persistent
// kernel, one TMA producer warp and two consumer warpgroups sharing a 128x256 tile (64x256
// each). Tile, stages and cluster come from gemm_tiling_for(EpilogueFused, 90), the definition
// the simulator's model reads. Both operands are row-major as the tensors are stored: x is
// K-major, the packed weight N-major (wgmma reads bf16 B transposed from shared memory).
// All CUTLASS templates live in this one file: they take minutes to compile.
#include <cuda_runtime.h>

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/collective/detail.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/gemm/kernel/gemm_universal.hpp>

#include "projchain/projchain_fused_epilogue.cuh"
#include "projchain/projchain_launch.hpp"
#include "projchain/projchain_tiling.hpp"

namespace overlap::cuda::projchain_launch {
namespace {

using namespace cute;

constexpr projchain::GemmTiling kTiling = projchain::gemm_tiling_for(projchain::Variant::EpilogueFused, 90);
static_assert(kTiling.warp_specialized && kTiling.persistent && kTiling.consumer_warps == 8 && kTiling.cluster_n == 1,
              "the CUTLASS instantiation below is the cooperative persistent kernel without clusters");
static_assert(!kTiling.tma_store, "ProjchainEpilogue stores from registers (projchain_fused_epilogue.cuh)");

using TileShape = Shape<Int<kTiling.tile_m>, Int<kTiling.tile_n>, Int<kTiling.tile_k>>;
using ClusterShape = Shape<_1, _1, _1>;
using Element = cutlass::bfloat16_t;
constexpr int kAlignment = 8;  // 16 bytes: TMA's stride unit
constexpr int kMaxHeadsPerTile = kTiling.tile_n / 64;  // dk >= 64

using Epilogue = cutlass::epilogue::collective::detail::Sm90TmaWarpSpecializedAdapter<
    projchain_fused::ProjchainEpilogue<kMaxHeadsPerTile>>;

// kKMajorB: the weight packed transposed, [ldw, d] (K contiguous: the "TN" GEMM, wgmma's native
// operand order); otherwise as stored, [d, ldw] (N contiguous, read transposed from shared memory).
template <bool kKMajorB>
struct FusedGemm {
  using LayoutB = cute::conditional_t<kKMajorB, cutlass::layout::ColumnMajor, cutlass::layout::RowMajor>;
  using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Element, cutlass::layout::RowMajor, kAlignment, Element,
      LayoutB, kAlignment, float, TileShape, ClusterShape, cutlass::gemm::collective::StageCount<kTiling.stages>,
      cutlass::gemm::KernelTmaWarpSpecializedCooperative>::CollectiveOp;
  using Kernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, Mainloop, Epilogue>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;

  // with_hardware: fill in the SM count (needs a GPU); can_implement only looks at sizes.
  static typename Gemm::Arguments make_arguments(const FusedProblem& p, bool with_hardware = true) {
    const int M = static_cast<int>(p.M), N = static_cast<int>(p.ldw), K = static_cast<int>(p.d);
    // Strides of the stored tensors: x [M, d] (row stride d); A is (M,K,L) with K contiguous;
    // B is (N,K,L): N contiguous (row stride ldw) or K contiguous (row stride d); L = 1.
    typename Kernel::StrideA stride_a{};
    static_assert(is_same_v<remove_cvref_t<decltype(get<1>(stride_a))>, _1>, "x must be K-major");
    get<0>(stride_a) = K;
    typename Kernel::StrideB stride_b{};
    if constexpr (kKMajorB) {
      static_assert(is_same_v<remove_cvref_t<decltype(get<1>(stride_b))>, _1>);
      get<0>(stride_b) = K;
    } else {
      static_assert(is_same_v<remove_cvref_t<decltype(get<0>(stride_b))>, _1>);
      get<1>(stride_b) = N;
    }
    typename Epilogue::Arguments epi;
    epi.q = static_cast<__nv_bfloat16*>(p.q);
    epi.k = static_cast<__nv_bfloat16*>(p.k);
    epi.v = static_cast<__nv_bfloat16*>(p.v);
    epi.g = static_cast<__nv_bfloat16*>(p.g);
    epi.alpha = static_cast<__nv_bfloat16*>(p.alpha);
    epi.rows = p.M;
    epi.H = p.H;
    epi.dk = p.dk;
    epi.fast_path = p.fast_epilogue;
    while ((2 << epi.dk_log2) <= p.dk) ++epi.dk_log2;
    cutlass::KernelHardwareInfo hw;
    if (with_hardware) {
      // Cached: querying the device on every call would cost more than a small GEMM.
      static thread_local int device = -1, sm_count = 0;
      int current = 0;
      if (cudaGetDevice(&current) == cudaSuccess && current != device) {
        device = current;
        sm_count = cutlass::KernelHardwareInfo::query_device_multiprocessor_count(current);
      }
      hw.device_id = device;
      hw.sm_count = sm_count;
    }
    typename Gemm::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm,
                                  {M, N, K, 1},
                                  {static_cast<const Element*>(p.x), stride_a,
                                   static_cast<const Element*>(p.w_packed), stride_b},
                                  epi,
                                  hw};
    using Raster = cutlass::gemm::kernel::detail::RasterOrderOptions;
    args.scheduler.raster_order =
        p.raster == 'n' ? Raster::AlongN : p.raster == 'm' ? Raster::AlongM : Raster::Heuristic;
    args.scheduler.max_swizzle_size = p.swizzle;
    return args;
  }

  static const char* check(const FusedProblem& p) {
    return Gemm::can_implement(make_arguments(p, false)) == cutlass::Status::kSuccess
               ? nullptr
               : "fused GEMM: CUTLASS can_implement refused the problem";
  }
  static std::size_t workspace_bytes(const FusedProblem& p) { return Gemm::get_workspace_size(make_arguments(p)); }
  static const char* run(const FusedProblem& p, void* workspace, CUstream_st* stream) {
    Gemm gemm;
    cutlass::Status s = gemm.initialize(make_arguments(p), workspace, stream);
    if (s != cutlass::Status::kSuccess) return cutlassGetStatusString(s);
    s = gemm.run(stream);
    if (s != cutlass::Status::kSuccess) return cutlassGetStatusString(s);
    const cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
  }
};

}  // namespace

const char* fused_gemm_check(const FusedProblem& p) {
  if (p.M < 1 || p.d < 1 || p.ldw < 1) return "fused GEMM: sizes must be positive";
  if (p.M > 0x7fffffff || p.d > 0x7fffffff || p.ldw > 0x7fffffff) return "fused GEMM: a size exceeds 32 bits";
  if (p.d % kAlignment != 0 || p.ldw % kAlignment != 0)
    return "fused GEMM: d and the packed weight's stride must be multiples of 8 elements (TMA)";
  if (p.dk != 64 && p.dk != 128) return "fused GEMM: dk must be 64 or 128 (whole heads in the 256-wide tile)";
  if (p.swizzle != 1 && p.swizzle != 2 && p.swizzle != 4 && p.swizzle != 8) return "fused GEMM: swizzle must be 1, 2, 4 or 8";
  return p.k_major_weight ? FusedGemm<true>::check(p) : FusedGemm<false>::check(p);
}

std::size_t fused_gemm_workspace_bytes(const FusedProblem& p) {
  return p.k_major_weight ? FusedGemm<true>::workspace_bytes(p) : FusedGemm<false>::workspace_bytes(p);
}

const char* fused_gemm(const FusedProblem& p, void* workspace, CUstream_st* stream) {
  if (const char* why = fused_gemm_check(p)) return why;
  return p.k_major_weight ? FusedGemm<true>::run(p, workspace, stream) : FusedGemm<false>::run(p, workspace, stream);
}

}  // namespace overlap::cuda::projchain_launch
