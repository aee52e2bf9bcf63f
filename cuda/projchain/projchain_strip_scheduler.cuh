#pragma once
// The fused GEMM's tile order: column strips. The output's column tiles are cut into strips of
// `strip_n` tiles; the persistent CTAs walk down the rows inside one strip before moving to the
// next. At the reference shape (N = 32768, d = 2048) the packed weight is 33.6 MB and x 134 MB:
// walking along N over all 33 column tiles (CUTLASS's AlongN) makes every wave of 132 CTAs read
// the whole weight, which does not stay in the usable L2, while a strip keeps its slice of the
// weight (strip_n MB) resident and reads x once per strip. CUTLASS's own swizzle does the same
// for power-of-two strips only and pads the tile counts to a multiple of the swizzle (33 -> 36
// column tiles, computed for nothing); here the last strip is simply narrower.
// strip_n = 1 is CUTLASS's AlongM raster, strip_n >= the column tile count its AlongN raster.
//
// Everything except the tile index mapping is PersistentTileSchedulerSm90's (static persistent
// schedule: CTA i takes tiles i, i + grid, ...). The clusters lie along M, so a cluster's CTAs
// take consecutive row tiles of the same column tile (they share the weight tile by multicast).
#include <cutlass/fast_math.h>
#include <cutlass/gemm/kernel/tile_scheduler.hpp>

namespace overlap::cuda::projchain_fused {

struct StripSchedulerTag {};

class StripScheduler : public cutlass::gemm::kernel::detail::PersistentTileSchedulerSm90 {
  using Base = cutlass::gemm::kernel::detail::PersistentTileSchedulerSm90;

 public:
  struct Arguments : Base::Arguments {
    int strip_n = 1;  // column tiles per strip (>= 1)
  };
  // The mapping's divisors, fixed per launch. The consumer warps map a tile index between two
  // tiles, while the tensor cores wait: with 64-bit divisions there (about 100 instructions per
  // tile, stalled on conversion and reciprocal latencies, Nsight Compute) the kernel was 1.1%
  // slower at N = 8192 and 32768 (docs/results/projchain_h100.md). FastDivmod divides by a
  // multiply-high. Tile indices fit in 32 bits (fused_gemm_check refuses more tiles).
  struct Params : Base::Params {
    cutlass::FastDivmod cluster_ctas_;    // CTAs per cluster (along M)
    cutlass::FastDivmod strip_clusters_;  // clusters in one strip: cluster rows x strip width
    cutlass::FastDivmod strip_width_;     // column tiles of a full strip
    cutlass::FastDivmod last_width_;      // column tiles of the last strip (narrower or equal)
    int last_first_n_ = 0;                // the last strip's first column tile
  };

  template <class ProblemShapeMNKL, class TileShape, class ClusterShape>
  static Params to_underlying_arguments(ProblemShapeMNKL problem_shape_mnkl, TileShape tile_shape,
                                        ClusterShape cluster_shape, cutlass::KernelHardwareInfo const& hw_info,
                                        Arguments const& args, void* workspace = nullptr,
                                        const uint32_t epilogue_subtile = 1, uint32_t ktile_start_alignment = 1u) {
    static_assert(cute::size<1>(ClusterShape{}) == 1, "StripScheduler: clusters must lie along M");
    // Swizzle 1 and AlongN: no padded tiles, and the launch grid whose linear index is read below.
    typename Base::Arguments base_args;
    base_args.max_swizzle_size = 1;
    base_args.raster_order = Base::RasterOrderOptions::AlongN;
    Params p;
    static_cast<Base::Params&>(p) = Base::to_underlying_arguments(
        problem_shape_mnkl, tile_shape, cluster_shape, hw_info, base_args, workspace, epilogue_subtile,
        ktile_start_alignment);
    // Positive sizes only (fused_gemm_check refuses the others), so no divisor below is 0.
    const int strip_n = args.strip_n < 1 ? 1 : args.strip_n;
    const int tiles_n = static_cast<int>(p.problem_tiles_n_);
    const int width = strip_n < tiles_n ? strip_n : tiles_n;
    p.last_first_n_ = (tiles_n - 1) / width * width;
    p.cluster_ctas_ = cutlass::FastDivmod(static_cast<int>(p.cluster_shape_m_));
    p.strip_clusters_ = cutlass::FastDivmod(static_cast<int>(p.problem_tiles_m_) * width);
    p.strip_width_ = cutlass::FastDivmod(width);
    p.last_width_ = cutlass::FastDivmod(tiles_n - p.last_first_n_);
    return p;
  }

  static bool can_implement(Arguments const& args) { return args.strip_n >= 1; }

  // The kernel asks for the grid with the raster order CUTLASS resolved; it is AlongN here.
  template <class ProblemShapeMNKL, class BlockShape, class ClusterShape>
  static dim3 get_grid_shape(Params const& params, ProblemShapeMNKL problem_shape_mnk, BlockShape cta_shape,
                             ClusterShape cluster_shape, cutlass::KernelHardwareInfo hw_info,
                             Arguments const&) {
    typename Base::Arguments base_args;
    base_args.max_swizzle_size = 1;
    base_args.raster_order = Base::RasterOrderOptions::AlongN;
    return Base::get_grid_shape(params, problem_shape_mnk, cta_shape, cluster_shape, hw_info, base_args);
  }

  CUTLASS_HOST_DEVICE StripScheduler() {}

  CUTLASS_DEVICE explicit StripScheduler(Params const& params)
      : Base(params),
        cluster_ctas_(params.cluster_ctas_),
        strip_clusters_(params.strip_clusters_),
        strip_width_(params.strip_width_),
        last_width_(params.last_width_),
        last_first_n_(params.last_first_n_) {
#if defined(__CUDA_ARCH__)
    linear_idx_ = uint64_t(blockIdx.x) + uint64_t(blockIdx.y) * uint64_t(gridDim.x);  // AlongN grid
    grid_size_ = uint64_t(gridDim.x) * uint64_t(gridDim.y) * uint64_t(gridDim.z);
#endif
  }

  template <class ClusterShape>
  CUTLASS_DEVICE WorkTileInfo initial_work_tile_info(ClusterShape) {
    return get_current_work();
  }

  CUTLASS_DEVICE WorkTileInfo get_current_work() const { return work_for_linear_idx(linear_idx_); }

  CUTLASS_DEVICE void advance_to_next_work(uint32_t advance_count = 1) {
    linear_idx_ += grid_size_ * uint64_t(advance_count);
  }

  CUTLASS_DEVICE bool is_last_tile(WorkTileInfo&, uint32_t advance_count = 1) const {
    return !work_for_linear_idx(linear_idx_ + grid_size_ * uint64_t(advance_count)).is_valid();
  }

  CUTLASS_DEVICE auto fetch_next_work(WorkTileInfo) {
    advance_to_next_work();
    return cute::make_tuple(get_current_work(), true);
  }

  template <class TileSchedulerPipeline, class TileSchedulerPipelineState>
  CUTLASS_DEVICE auto fetch_next_work(WorkTileInfo work_tile_info, TileSchedulerPipeline&,
                                      TileSchedulerPipelineState) {
    return fetch_next_work(work_tile_info);
  }

 private:
  // Linear CTA index -> (row tile, column tile). Clusters are numbered strip by strip, and
  // inside a strip row of clusters by row of clusters, each row of clusters across the strip's
  // columns; the CTA's rank in its cluster picks the row tile inside the cluster.
  CUTLASS_DEVICE WorkTileInfo work_for_linear_idx(uint64_t linear_idx) const {
    const Base::Params& p = scheduler_params;
    if (linear_idx >= p.blocks_per_problem_) return WorkTileInfo::invalid_work_tile();
    const int cluster_id = cluster_ctas_.div(static_cast<int>(linear_idx));
    int strip, in_strip, row, col;
    strip_clusters_(strip, in_strip, cluster_id);
    const int first_n = strip * strip_width_.divisor;
    if (first_n == last_first_n_) last_width_(row, col, in_strip);
    else strip_width_(row, col, in_strip);
    return {row * cluster_ctas_.divisor + static_cast<int>(cute::block_id_in_cluster().x), first_n + col, 0, true};
  }

  uint64_t linear_idx_ = 0;
  uint64_t grid_size_ = 0;
  cutlass::FastDivmod cluster_ctas_, strip_clusters_, strip_width_, last_width_;
  int last_first_n_ = 0;
};

}  // namespace overlap::cuda::projchain_fused

namespace cutlass::gemm::kernel::detail {

template <class TileShape, class ClusterShape, uint32_t SchedulerPipelineStageCount>
struct TileSchedulerSelector<overlap::cuda::projchain_fused::StripSchedulerTag, arch::Sm90, TileShape, ClusterShape,
                             SchedulerPipelineStageCount> {
  using Scheduler = overlap::cuda::projchain_fused::StripScheduler;
};

}  // namespace cutlass::gemm::kernel::detail
