// chunk_fused: one CUTLASS 4.2 sm90 GEMM, x [B*T, d] · w_packed^T, whose collective
// epilogue (linrnn_wgmma_epilogue.cuh) runs the scan and writes y; the projection never leaves
// the SM. Mainloop: CollectiveBuilder with KernelTmaWarpSpecializedCooperative (persistent, one
// TMA producer warp, two consumer warpgroups sharing a 128 x 192 tile), clusters along M that
// share each weight tile through TMA multicast; tile, stages and cluster from
// chunk_fused_tiling() (linrnn_tiling.hpp, also what the simulator reads). Both operands
// are K-major (x row-major, the packed weight [3 dv', d]): wgmma's native "TN" order.
// The scheduler is pinned to raster AlongN, swizzle 1 (cluster units in the order
// (m / 2) * channel blocks + n: the channel blocks of a pair of M tiles run side by side and
// share their x rows in L2), and the grid to the
// clusters that can be resident at once: the look-back's waits rely on both (see the epilogue
// header). Raster AlongM (each channel block's tiles in time order) read x from HBM once per
// channel block: 1.15 GB of DRAM traffic and 626 us at B=8, T=4096, d=dv=1024 (H100, Nsight
// Compute), against 288 us for the cuBLAS GEMM.
// All CUTLASS templates live in this one file: they take a minute or more to compile.
#include <cuda_runtime.h>

#include <cute/tensor.hpp>
#include <cutlass/cluster_launch.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/collective/detail.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/gemm/kernel/gemm_universal.hpp>

#include "linrnn/linrnn_launch.hpp"
#include "linrnn/linrnn_tiling.hpp"
#include "linrnn/linrnn_wgmma_epilogue.cuh"

namespace overlap::cuda::linrnn_launch {
namespace {

constexpr linrnn::ChunkFusedTiling kTiling = linrnn::chunk_fused_tiling();
static_assert(kTiling.tile_m == linrnn_wgmma::kTileRows && kTiling.block_dv == linrnn_kernel::kChannels &&
                  32 * kTiling.consumer_warps == linrnn_wgmma::kEpilogueThreads,
              "linrnn_tiling.hpp and the scan epilogue disagree");
constexpr int kAlignment = 8;  // 16 bytes: TMA's stride unit

std::size_t m_tiles_of(const Problem& p) {
  return (static_cast<std::size_t>(p.B) * p.T + kTiling.tile_m - 1) / kTiling.tile_m;
}
int channel_blocks_of(const Problem& p) { return (p.dv + kTiling.block_dv - 1) / kTiling.block_dv; }

struct WgmmaGemm {
  using TileShape = cute::Shape<cute::Int<kTiling.tile_m>, cute::Int<3 * kTiling.block_dv>, cute::Int<kTiling.tile_k>>;
  using ClusterShape = cute::Shape<cute::Int<kTiling.cluster_m>, cute::_1, cute::_1>;
  using Element = cutlass::bfloat16_t;
  using Epilogue = cutlass::epilogue::collective::detail::Sm90TmaWarpSpecializedAdapter<linrnn_wgmma::LinrnnScanEpilogue>;
  using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Element, cutlass::layout::RowMajor, kAlignment, Element,
      cutlass::layout::ColumnMajor, kAlignment, float, TileShape, ClusterShape,
      cutlass::gemm::collective::StageCount<kTiling.stages>,
      cutlass::gemm::KernelTmaWarpSpecializedCooperative>::CollectiveOp;
  using Kernel = cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, Mainloop, Epilogue>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
  static_assert(Kernel::MaxThreadsPerBlock == kTiling.threads(), "linrnn_tiling.hpp's thread count disagrees");

  // Clusters that fit on the device at once (cached per device and thread once known; a failed
  // query is not cached, so the next call asks again). Every CTA of the persistent grid must be
  // resident: a tile spins on its predecessors, which may belong to any CTA.
  static cutlass::KernelHardwareInfo hardware() {
    static thread_local int device = -1, sm_count = 0, clusters = 0;
    int current = 0;
    if (cudaGetDevice(&current) != cudaSuccess) current = -1;
    if (current >= 0 && current != device) {
      int found = 0;
      const int smem = static_cast<int>(sizeof(typename Kernel::SharedStorage));
      if (cudaFuncSetAttribute(cutlass::device_kernel<Kernel>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem) ==
          cudaSuccess) {
        const dim3 cluster(kTiling.cluster_m, 1, 1);
        auto config = cutlass::ClusterLauncher::make_cluster_launch_config(cluster, cluster, dim3(Kernel::MaxThreadsPerBlock, 1, 1), smem);
        if (cudaOccupancyMaxActiveClusters(&found, cutlass::device_kernel<Kernel>, &config.launch_config) != cudaSuccess)
          found = 0;
      }
      (void)cudaGetLastError();
      if (found > 0) {
        device = current;
        sm_count = cutlass::KernelHardwareInfo::query_device_multiprocessor_count(current);
        clusters = found;
      }
    }
    if (current != device) return {};  // no answer for this device: max_active_clusters 0, refused
    cutlass::KernelHardwareInfo hw;
    hw.device_id = device;
    hw.sm_count = sm_count;
    hw.max_active_clusters = clusters;
    return hw;
  }

  static typename Gemm::Arguments make_arguments(const Problem& p, const void* w_packed, void* lookback,
                                                 bool with_hardware) {
    using namespace cute;
    const int M = p.B * p.T, N = channel_blocks_of(p) * 3 * kTiling.block_dv, K = p.d;
    const auto stride_a = cutlass_sm90::k_major_stride<typename Kernel::StrideA>(K);
    const auto stride_b = cutlass_sm90::k_major_stride<typename Kernel::StrideB>(K);
    typename Epilogue::Arguments epi;
    epi.y = static_cast<linrnn_kernel::bf16*>(p.y);
    epi.h0 = p.h0;
    epi.hT = p.hT;
    epi.rows = M;
    epi.T = p.T;
    epi.dv = p.dv;
    epi.channel_blocks = channel_blocks_of(p);
    epi.m_tiles = static_cast<int>(m_tiles_of(p));
    if (lookback) {
      auto* base = static_cast<unsigned char*>(lookback);
      const auto layout = linrnn_kernel::lookback_layout(m_tiles_of(p) * channel_blocks_of(p));
      epi.lb = {reinterpret_cast<unsigned*>(base), reinterpret_cast<unsigned long long*>(base + layout.words)};
    }
    cutlass::KernelHardwareInfo hw;
    if (with_hardware) hw = hardware();
    typename Gemm::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm,
                                  {M, N, K, 1},
                                  {static_cast<const Element*>(p.x), stride_a, static_cast<const Element*>(w_packed),
                                   stride_b},
                                  epi,
                                  hw};
    args.scheduler.raster_order = cutlass::gemm::kernel::detail::RasterOrderOptions::AlongN;
    args.scheduler.max_swizzle_size = 1;
    return args;
  }
};

}  // namespace

std::size_t packed_weight_bytes(const Problem& p) {
  return static_cast<std::size_t>(channel_blocks_of(p)) * 3 * kTiling.block_dv * p.d * 2;
}

std::size_t chunk_fused_lookback_bytes(const Problem& p) {
  return linrnn_kernel::lookback_layout(m_tiles_of(p) * channel_blocks_of(p)).bytes;
}

const char* chunk_fused_check(const Problem& p) {
  if (p.d % kAlignment != 0) return "chunk_fused: d must be a multiple of 8 (TMA's 16-byte strides)";
  if (p.dv % 2 != 0) return "chunk_fused: dv must be even (bf16 pairs)";
  // Sizes only: stand-in pointers for the ones a host-side check does not have.
  alignas(256) static unsigned char stand_in[256];
  auto args = WgmmaGemm::make_arguments(p, stand_in, stand_in, false);
  args.epilogue.y = reinterpret_cast<linrnn_kernel::bf16*>(stand_in);
  return WgmmaGemm::Gemm::can_implement(args) == cutlass::Status::kSuccess
             ? nullptr
             : "chunk_fused: CUTLASS can_implement refused the problem";
}

const char* chunk_fused(const Problem& p, const void* w_packed, void* lookback, CUstream_st* stream) {
  if (const char* why = chunk_fused_check(p)) return why;
  const auto args = WgmmaGemm::make_arguments(p, w_packed, lookback, true);
  if (args.hw_info.max_active_clusters <= 0)
    return "chunk_fused: cudaOccupancyMaxActiveClusters found no resident cluster";
  if (WgmmaGemm::Gemm::get_workspace_size(args) != 0)
    return "chunk_fused: the CUTLASS kernel asks for a workspace (not expected of the persistent scheduler)";
  WgmmaGemm::Gemm gemm;
  cutlass::Status s = gemm.initialize(args, nullptr, stream);
  if (s != cutlass::Status::kSuccess) return cutlassGetStatusString(s);
  s = gemm.run(stream);
  if (s != cutlass::Status::kSuccess) return cutlassGetStatusString(s);
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

}  // namespace overlap::cuda::linrnn_launch
