// chunk_fused: x [B*T, d] · w_packed^T on the hand-off GEMM (common/sm90_handoff_gemm.cuh), whose
// epilogue warpgroup (linrnn_scan_warpgroup.cuh) runs the scan and writes y under the next
// tile's MMAs; the projection never leaves the SM. Mainloop: CUTLASS 4.2's sm90 TMA/wgmma
// collective (two MMA warpgroups sharing a 128 x 192 tile, 2x1 clusters that multicast each
// weight tile); tile, stages and cluster from chunk_fused_tiling() (linrnn_tiling.hpp, also
// what the simulator reads). Both operands are K-major (x row-major, the packed weight
// [3 dv', d]): wgmma's native "TN" order. The tile order is raster along N (the channel blocks
// of a pair of M tiles run side by side and share their x rows in L2); each channel block's
// tiles in time order instead read x from HBM once per channel block (1.15 GB of DRAM traffic
// at B=8, T=4096, d=dv=1024, session 3's CUTLASS kernel, Nsight Compute).
// All CUTLASS templates live in this one file: they take a minute to compile.
#include <cuda_runtime.h>

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/gemm/collective/collective_builder.hpp>

#include "common/sm90_handoff_gemm.cuh"
#include "linrnn/linrnn_launch.hpp"
#include "linrnn/linrnn_scan_warpgroup.cuh"
#include "linrnn/linrnn_tiling.hpp"

namespace overlap::cuda::linrnn_launch {
namespace {

constexpr linrnn::ChunkFusedTiling kTiling = linrnn::chunk_fused_tiling();
static_assert(kTiling.tile_m == linrnn_kernel::ScanWarpgroup::kTileRows && kTiling.block_dv == linrnn_kernel::kChannels,
              "linrnn_tiling.hpp and the scan warpgroup disagree");
static_assert(kTiling.threads() == handoff_gemm::kThreads && 32 * kTiling.epilogue_warps == handoff_gemm::kEpilogueThreads,
              "linrnn_tiling.hpp's warps disagree with the hand-off GEMM's");
constexpr int kAlignment = 8;  // 16 bytes: TMA's stride unit

using TileShape = cute::Shape<cute::Int<kTiling.tile_m>, cute::Int<3 * kTiling.block_dv>, cute::Int<kTiling.tile_k>>;
using ClusterShape = cute::Shape<cute::Int<kTiling.cluster_m>, cute::_1, cute::_1>;
using Element = cutlass::bfloat16_t;
using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Element, cutlass::layout::RowMajor, kAlignment, Element,
    cutlass::layout::ColumnMajor, kAlignment, float, TileShape, ClusterShape,
    cutlass::gemm::collective::StageCount<kTiling.stages>,
    cutlass::gemm::KernelTmaWarpSpecializedCooperative>::CollectiveOp;
using Kernel = handoff_gemm::Kernel<Mainloop, linrnn_kernel::ScanWarpgroup>;
static_assert(sizeof(linrnn_kernel::ScanWarpgroup::HandoffStorage) == kTiling.handoff_bytes(),
              "linrnn_tiling.hpp's hand-off tile (what the simulator reads) disagrees with the kernel's");

int m_tiles_of(const Problem& p) { return (p.B * p.T + kTiling.tile_m - 1) / kTiling.tile_m; }
int channel_blocks_of(const Problem& p) { return (p.dv + kTiling.block_dv - 1) / kTiling.block_dv; }

}  // namespace

std::size_t packed_weight_bytes(const Problem& p) {
  return static_cast<std::size_t>(channel_blocks_of(p)) * 3 * kTiling.block_dv * p.d * 2;
}

std::size_t chunk_fused_lookback_bytes(const Problem& p) {
  return linrnn_kernel::lookback_layout(static_cast<std::size_t>(m_tiles_of(p)) * channel_blocks_of(p)).bytes;
}

const char* chunk_fused_check(const Problem& p) {
  if (p.d % kAlignment != 0) return "chunk_fused: d must be a multiple of 8 (TMA's 16-byte strides)";
  if (p.dv % 2 != 0) return "chunk_fused: dv must be even (bf16 pairs)";
  // Row indices (and B*T + a tile of cluster padding) and h0 / hT indices are 32-bit inside
  // the kernel.
  if (static_cast<long long>(p.B) * p.T + 2 * kTiling.tile_m > (1LL << 31) - 1) return "chunk_fused: B*T too large";
  if (static_cast<long long>(p.B) * p.dv > (1LL << 31) - 1) return "chunk_fused: B*dv too large";
  return nullptr;
}

const char* chunk_fused(const Problem& p, const void* w_packed, void* lookback, CUstream_st* stream) {
  if (const char* why = chunk_fused_check(p)) return why;
  const int M = p.B * p.T, N = channel_blocks_of(p) * 3 * kTiling.block_dv, K = p.d;
  typename Kernel::Params params{};
  params.mainloop = Mainloop::to_underlying_arguments(
      cute::make_shape(M, N, K, 1),
      typename Mainloop::Arguments{static_cast<const Element*>(p.x),
                                   cutlass_sm90::k_major_stride<typename Mainloop::StrideA>(K),
                                   static_cast<const Element*>(w_packed),
                                   cutlass_sm90::k_major_stride<typename Mainloop::StrideB>(K)},
      nullptr);
  auto& e = params.epilogue;
  e.y = static_cast<linrnn_kernel::bf16*>(p.y);
  e.h0 = p.h0;
  e.hT = p.hT;
  e.rows = M;
  e.T = p.T;
  e.dv = p.dv;
  e.channel_blocks = channel_blocks_of(p);
  e.m_tiles = m_tiles_of(p);
  e.lb = linrnn_kernel::lookback_view(lookback, static_cast<std::size_t>(e.m_tiles) * e.channel_blocks);
  params.order = {(e.m_tiles + kTiling.cluster_m - 1) / kTiling.cluster_m, e.channel_blocks};
  params.M = M, params.N = N, params.K = K;
  return handoff_gemm::launch<Kernel>(params, stream);  // linrnn_forward prefixes the variant
}

}  // namespace overlap::cuda::linrnn_launch
