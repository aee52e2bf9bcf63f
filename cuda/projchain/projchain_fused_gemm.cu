// epilogue_fused: one CUTLASS 3.x sm90 GEMM, x [M,d] · w_packed^T, with every activation
// applied in registers by ProjchainEpilogue before the bf16 store (projchain_fused_epilogue.cuh).
//
// Mainloop: CollectiveBuilder with KernelTmaWarpSpecializedCooperative, i.e. a persistent
// kernel, one TMA producer warp and two consumer warpgroups sharing a 128x256 tile (64x256
// each), clusters of 2 CTAs along M that share each weight tile through TMA multicast. Tile,
// stages and cluster come from gemm_tiling_for(EpilogueFused, 90), the definition the
// simulator's model reads. x is K-major (row-major [M, d]); the packed weight is stored
// transposed, [ldw, d], so B is K-major too (the "TN" GEMM, wgmma's native operand order; 3%
// faster than reading [d, ldw] transposed from shared memory, measured on an H100).
// Tile order: our StripScheduler (projchain_strip_scheduler.cuh) in place of CUTLASS's persistent
// scheduler, strips of projchain::fused_strip_n column tiles.
// All CUTLASS templates live in this one file: they take a minute or more to compile.
#include <cuda_runtime.h>

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/collective/detail.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/gemm/kernel/gemm_universal.hpp>

#include "projchain/projchain_fused_epilogue.cuh"
#include "projchain/projchain_launch.hpp"
#include "projchain/projchain_strip_scheduler.cuh"
#include "projchain/projchain_tiling.hpp"

namespace overlap::cuda::projchain_launch {
namespace {

constexpr projchain::GemmTiling kTiling = projchain::gemm_tiling_for(projchain::Variant::EpilogueFused, 90);
static_assert(kTiling.warp_specialized && kTiling.persistent && kTiling.consumer_warps == 8 &&
                  kTiling.tile_m == 128 && kTiling.tile_n == 256,
              "the CUTLASS instantiation below is the cooperative persistent kernel, two warpgroups of 64x256");
static_assert(!kTiling.tma_store, "ProjchainEpilogue stores from registers (projchain_fused_epilogue.cuh)");
constexpr int kAlignment = 8;  // 16 bytes: TMA's stride unit

struct FusedGemm {
  using TileShape = cute::Shape<cute::Int<kTiling.tile_m>, cute::Int<kTiling.tile_n>, cute::Int<kTiling.tile_k>>;
  using ClusterShape = cute::Shape<cute::Int<kTiling.cluster_size>, cute::_1, cute::_1>;  // along M
  using Element = cutlass::bfloat16_t;
  using Epilogue = cutlass::epilogue::collective::detail::Sm90TmaWarpSpecializedAdapter<
      projchain_fused::ProjchainEpilogue<kTiling.tile_n / 64>>;  // dk >= 64: at most tile_n/64 heads
  using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Element, cutlass::layout::RowMajor, kAlignment, Element,
      cutlass::layout::ColumnMajor, kAlignment, float, TileShape, ClusterShape,
      cutlass::gemm::collective::StageCount<kTiling.stages>,
      cutlass::gemm::KernelTmaWarpSpecializedCooperative>::CollectiveOp;
  using Kernel = cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, Mainloop, Epilogue,
                                                      projchain_fused::StripSchedulerTag>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;

  // with_hardware: fill in the SM count (needs a GPU); can_implement only looks at sizes.
  static typename Gemm::Arguments make_arguments(const FusedProblem& p, bool with_hardware = true) {
    using namespace cute;
    const int M = static_cast<int>(p.M), N = static_cast<int>(p.ldw), K = static_cast<int>(p.d);
    // Strides of the stored tensors: A = x is (M,K,L), B = w_packed is (N,K,L), both with K
    // contiguous and a row stride of d; L = 1.
    const auto stride_a = cutlass_sm90::k_major_stride<typename Kernel::StrideA>(K);
    const auto stride_b = cutlass_sm90::k_major_stride<typename Kernel::StrideB>(K);
    typename Epilogue::Arguments epi;
    epi.q = static_cast<__nv_bfloat16*>(p.q);
    epi.k = static_cast<__nv_bfloat16*>(p.k);
    epi.v = static_cast<__nv_bfloat16*>(p.v);
    epi.g = static_cast<__nv_bfloat16*>(p.g);
    epi.alpha = static_cast<__nv_bfloat16*>(p.alpha);
    epi.rows = p.M;
    epi.H = p.H;
    epi.dk = p.dk;
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
    args.scheduler.strip_n = p.strip_n;
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
  if (p.strip_n < 1) return "fused GEMM: the tile order's strip width must be at least 1 column tile";
  // The tile order's index is 32-bit; CUTLASS rounds the row tiles up to whole clusters.
  const std::int64_t row_tiles = (p.M + kTiling.tile_m - 1) / kTiling.tile_m;
  const std::int64_t tiles = (row_tiles + kTiling.cluster_size - 1) / kTiling.cluster_size * kTiling.cluster_size *
                             ((p.ldw + kTiling.tile_n - 1) / kTiling.tile_n);
  if (tiles > 0x7fffffff) return "fused GEMM: more than 2^31 - 1 output tiles (the tile order's index is 32-bit)";
  return FusedGemm::check(p);
}

std::size_t fused_gemm_workspace_bytes(const FusedProblem& p) { return FusedGemm::workspace_bytes(p); }

const char* fused_gemm(const FusedProblem& p, void* workspace, CUstream_st* stream) {
  if (const char* why = fused_gemm_check(p)) return why;
  return FusedGemm::run(p, workspace, stream);
}

}  // namespace overlap::cuda::projchain_launch
