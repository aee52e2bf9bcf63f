#pragma once
// A persistent Hopper GEMM whose epilogue runs in a warpgroup of its own, under the next tile's
// MMAs. CUTLASS's cooperative schedule runs the epilogue in the two MMA warpgroups, so a heavy
// epilogue (linrnn's scan: about 160 us of 400 at B=8, T=4096, d=dv=1024) adds to the
// mainloop; its ping-pong schedule hides the epilogue but gives each warpgroup its own tile,
// which at 64 rows ran the linrnn mainloop 1.46x slower (docs/results/linrnn_h100.md, table
// S3-4). Here the two MMA warpgroups share a cooperative-sized tile, copy their accumulators to
// a shared-memory tile and go on with the next tile; a fourth warpgroup turns that tile into
// the output.
//
// Warpgroups (512 threads):
//   0  TMA producer: one warp runs the CUTLASS collective mainloop's load (multicast within the
//      cluster); the other three idle.
//   1,2 MMA: the collective's mma on 64 rows each, then Epilogue::stage writes the accumulators
//      into the hand-off tile (linrnn: fp32, row-major, rows padded by 8 floats so that the
//      fragment stores are free of bank conflicts: stage_fp32).
//   3  epilogue: Epilogue::tile(...) on each handed-off tile, in place if it likes.
// The hand-off is one buffer guarded by a full/empty mbarrier pair (cutlass::PipelineAsync<1>):
// the MMA warpgroups wait for it only when the epilogue of the previous tile is still running
// at the end of the next mainloop, so the epilogue costs nothing while it is shorter than a
// mainloop tile (plus the copy into shared memory, about 0.4 us per 128 x 192 tile).
//
// The tile order is static: every role walks the same sequence (TileOrder), cluster units
// strided over the resident clusters; both CTAs of a cluster work on one unit (the same N tile,
// so the B operand is multicast) with M tiles 2j and 2j + 1.
//
// Registers: 512 threads x 128 registers are the whole register file. ptxas reports 128 per
// thread; with the setmaxnreg split below (producer 40, MMA 168, epilogue 136) the kernel has
// 0 spills, without it 12 bytes. The launch's cap still bounds the wgmma code: a 640-thread
// build (two epilogue warpgroups, cap 96) did not compile ("insufficient registers"), whatever
// setmaxnreg said.
//
// The Epilogue type provides:
//   struct Params; struct SharedStorage;
//   struct HandoffStorage                                  the shared tile the MMA warpgroups fill
//   static __device__ void stage(Params const&, HandoffStorage&, Acc const& acc,
//                                RowsCols const& rows_cols, int m, int n)
//       run by the 256 MMA threads: write this thread's accumulators of output tile (m, n)
//       (rows x columns views, accumulator_rows_cols; rows_cols holds each one's (row, col)
//       in the tile) into the hand-off tile, e.g. with stage_fp32 below
//   __device__ void begin(Params const&, SharedStorage&, int thread)        once, before any tile
//   __device__ void tile(Params const&, SharedStorage&, HandoffStorage&, int m, int n, int thread)
//       one tile, thread 0..127; the buffer goes back to the MMA warpgroups when it returns
//   __device__ void end(Params const&, SharedStorage&, int thread)           after the last tile
#include <cuda_runtime.h>

#include <algorithm>

#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/arch/reg_reconfig.h>
#include <cutlass/cluster_launch.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/pipeline/pipeline.hpp>

#include "common/cutlass_register_epilogue.hpp"

namespace overlap::cuda::handoff_gemm {

constexpr int kEpilogueThreads = 128;  // warpgroup 3
constexpr int kThreads = 3 * 128 + kEpilogueThreads;
// The epilogue warpgroup's named barrier, as cutlass::arch::NamedBarrier counts it (it adds
// CUTLASS's 8 reserved ids: hardware barrier 9; the mainloop collective uses none).
constexpr int kEpilogueBarrier = 1;

// Persistent static order: cluster c handles units c, c + clusters, ...; unit u is
// (m pair u / n_tiles, n tile u % n_tiles) ("raster along N": the N tiles of an M pair run side
// by side and share their A rows in L2).
struct RasterAlongN {
  int m_pairs = 0;  // ceil(M tiles / 2)
  int n_tiles = 0;
  CUTLASS_HOST_DEVICE int units() const { return m_pairs * n_tiles; }
  CUTLASS_DEVICE void tile(int unit, int rank, int& m, int& n) const {
    m = 2 * (unit / n_tiles) + rank;
    n = unit % n_tiles;
  }
};

// The plain hand-off: the fp32 accumulators row-major into buf[row * kStride + col]. `acc` and
// `rows_cols` are one thread's accumulators and their (row, col) in the tile as rows x columns
// (accumulator_rows_cols); columns j, j + 1 are adjacent. kStride = 8 (mod 32) floats puts the
// 8 rows of a warp's float2 stores on distinct banks in each half-warp phase.
template <int kStride, class Acc, class RowsCols>
CUTLASS_DEVICE void stage_fp32(float* buf, Acc const& acc, RowsCols const& rows_cols) {
  using namespace cute;
  static_assert(kStride % 32 == 8);
  CUTLASS_PRAGMA_UNROLL
  for (int i = 0; i < size<0>(acc); ++i)
    CUTLASS_PRAGMA_UNROLL
    for (int j = 0; j < size<1>(acc); j += 2) {
      const int row = get<0>(rows_cols(i, j)), col = get<1>(rows_cols(i, j));
      *reinterpret_cast<float2*>(&buf[row * kStride + col]) = make_float2(acc(i, j), acc(i, j + 1));
    }
}

template <class Mainloop, class Epilogue, class TileOrder = RasterAlongN>
struct Kernel {
  using TileShape = typename Mainloop::TileShape;
  using ClusterShape = typename Mainloop::DispatchPolicy::ClusterShape;
  using TiledMma = typename Mainloop::TiledMma;
  static constexpr int kTileM = cute::size<0>(TileShape{});
  static constexpr int kTileN = cute::size<1>(TileShape{});
  static constexpr int kClusterM = cute::size<0>(ClusterShape{});
  static_assert(kClusterM == 2 && cute::size<1>(ClusterShape{}) == 1, "clusters of two CTAs along M");
  static_assert(cute::size(TiledMma{}) == 256, "two MMA warpgroups share the tile");
  static_assert(kTileN % 8 == 0);
  // Registers per thread after setmaxnreg (multiples of 8): 128 * (40 + 136) + 256 * 168 = 65536.
  static constexpr int kProducerRegs = 40, kMmaRegs = 168, kEpilogueRegs = 136;
  static_assert(128 * kProducerRegs + 256 * kMmaRegs + kEpilogueThreads * kEpilogueRegs <= 65536);

  using MainloopPipeline = typename Mainloop::MainloopPipeline;
  using HandoffPipeline = cutlass::PipelineAsync<1>;

  struct SharedStorage {
    alignas(1024) typename Mainloop::TensorStorage mainloop;  // 128-byte swizzled TMA tiles
    alignas(16) typename Epilogue::HandoffStorage handoff;
    alignas(16) typename Epilogue::SharedStorage epilogue;
    alignas(16) typename Mainloop::PipelineStorage mainloop_pipe;
    alignas(16) typename HandoffPipeline::SharedStorage handoff_pipe;
  };
  static constexpr int kSharedBytes = static_cast<int>(sizeof(SharedStorage));
  // sm_90's opt-in limit per block (227 KB), less the 1 KB the kernel's alignment adds statically.
  static_assert(kSharedBytes <= 227 * 1024 - 1024, "the stages, hand-off tile and epilogue storage do not fit");

  struct Params {
    typename Mainloop::Params mainloop;
    typename Epilogue::Params epilogue;
    TileOrder order;
    int M, N, K;
  };

  CUTLASS_DEVICE void operator()(Params const& params, char* smem_buf) {
    using namespace cute;
    SharedStorage& smem = *reinterpret_cast<SharedStorage*>(smem_buf);
    const int thread = int(threadIdx.x);
    const int warp = cutlass::canonical_warp_idx_sync();
    const int warpgroup = warp / 4;
    const uint32_t rank = block_rank_in_cluster();

    if (warp == 0 && elect_one_sync()) Mainloop::prefetch_tma_descriptors(params.mainloop);

    typename MainloopPipeline::Params load_params;
    if (warpgroup == 0 && warp == 0) load_params.role = MainloopPipeline::ThreadCategory::Producer;
    if (warpgroup == 1 || warpgroup == 2) load_params.role = MainloopPipeline::ThreadCategory::Consumer;
    load_params.is_leader = thread % 128 == 0;
    load_params.num_consumers = 256;
    load_params.transaction_bytes = params.mainloop.tma_transaction_bytes;
    MainloopPipeline load_pipe(smem.mainloop_pipe, load_params, ClusterShape{});

    typename HandoffPipeline::Params handoff_params;
    if (warpgroup == 1 || warpgroup == 2) handoff_params.role = HandoffPipeline::ThreadCategory::Producer;
    if (warpgroup == 3) handoff_params.role = HandoffPipeline::ThreadCategory::Consumer;
    handoff_params.producer_arv_count = 256;
    handoff_params.consumer_arv_count = kEpilogueThreads;
    handoff_params.initializing_warp = 1;
    HandoffPipeline handoff_pipe(smem.handoff_pipe, handoff_params);

    // Barrier initialisation must be visible to the peer CTA (its multicasts arrive here).
    cute::cluster_arrive_relaxed();
    cute::cluster_wait();

    auto problem = make_shape(params.M, params.N, params.K, 1);
    Mainloop mainloop;
    auto load_inputs = mainloop.load_init(problem, params.mainloop);
    Tensor gA_mkl = get<0>(load_inputs);
    const int k_tiles = int(size<3>(gA_mkl));
    const int clusters = int(gridDim.x) / kClusterM;
    const int cluster = int(blockIdx.x) / kClusterM;
    const int units = params.order.units();

    if (warpgroup == 0) {
      cutlass::arch::warpgroup_reg_dealloc<kProducerRegs>();
      if (warp == 0) {
        auto state = cutlass::make_producer_start_state<MainloopPipeline>();
        for (int unit = cluster; unit < units; unit += clusters) {
          int m, n;
          params.order.tile(unit, int(rank), m, n);
          auto k_iter = make_coord_iterator(shape<3>(gA_mkl));
          mainloop.load(params.mainloop, load_pipe, state, load_inputs, make_coord(m, n, _, 0), k_iter, k_tiles,
                        thread % 32, rank, smem.mainloop);
          state.advance(k_tiles);
        }
        mainloop.load_tail(load_pipe, state);
      }
    } else if (warpgroup == 1 || warpgroup == 2) {
      cutlass::arch::warpgroup_reg_alloc<kMmaRegs>();
      const int mma_thread = thread - 128;
      TiledMma tiled_mma;
      auto thr_mma = tiled_mma.get_thread_slice(mma_thread);
      Tensor coords = thr_mma.partition_C(make_identity_tensor(make_shape(Int<kTileM>{}, Int<kTileN>{})));
      Tensor rows_cols = make_tensor(coords.data(), cutlass_sm90::accumulator_rows_cols(coords.layout()));
      typename Mainloop::PipelineState load_state;
      auto handoff_state = cutlass::make_producer_start_state<HandoffPipeline>();
      for (int unit = cluster; unit < units; unit += clusters) {
        auto acc = partition_fragment_C(tiled_mma, take<0, 2>(TileShape{}));
        mainloop.mma(load_pipe, load_state, acc, k_tiles, mma_thread, smem.mainloop, params.mainloop);
        mainloop.mma_tail(load_pipe, load_state, k_tiles);
        load_state.advance(k_tiles);

        handoff_pipe.producer_acquire(handoff_state);
        int m, n;
        params.order.tile(unit, int(rank), m, n);
        Tensor a = make_tensor(acc.data(), cutlass_sm90::accumulator_rows_cols(acc.layout()));
        Epilogue::stage(params.epilogue, smem.handoff, a, rows_cols, m, n);
        handoff_pipe.producer_commit(handoff_state);
        ++handoff_state;
      }
    } else {
      cutlass::arch::warpgroup_reg_alloc<kEpilogueRegs>();
      const int epi_thread = thread - 384;
      Epilogue epilogue;
      epilogue.begin(params.epilogue, smem.epilogue, epi_thread);
      typename HandoffPipeline::PipelineState handoff_state;
      for (int unit = cluster; unit < units; unit += clusters) {
        int m, n;
        params.order.tile(unit, int(rank), m, n);
        handoff_pipe.consumer_wait(handoff_state);
        epilogue.tile(params.epilogue, smem.epilogue, smem.handoff, m, n, epi_thread);
        handoff_pipe.consumer_release(handoff_state);
        ++handoff_state;
      }
      epilogue.end(params.epilogue, smem.epilogue, epi_thread);
    }
    // No CTA leaves while its peer may still multicast into it or arrive on its barriers: the
    // producer's load_tail waited for every stage to be released by both CTAs' consumers.
    cute::cluster_arrive_relaxed();
    cute::cluster_wait();
  }
};

template <class K>
__global__ void __launch_bounds__(kThreads, 1) handoff_gemm_kernel(CUTLASS_GRID_CONSTANT typename K::Params const params) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(1024) char smem[];
  K{}(params, smem);
#endif
}

// Host side: how many clusters of kernel K fit on the current device at once (cached per device
// and thread once known; a failed query is not cached; 0 when none fits). A kernel whose tiles
// wait on each other must not be launched with more.
template <class K>
int resident_clusters() {
  static thread_local int device = -1, clusters = 0;
  int current = 0;
  if (cudaGetDevice(&current) != cudaSuccess) return 0;
  if (current == device) return clusters;
  int found = 0;
  auto* fn = handoff_gemm_kernel<K>;
  if (cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, K::kSharedBytes) == cudaSuccess) {
    cudaLaunchConfig_t config{};
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = K::kClusterM;
    attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
    config.gridDim = dim3(K::kClusterM, 1, 1);
    config.blockDim = dim3(kThreads, 1, 1);
    config.dynamicSmemBytes = K::kSharedBytes;
    config.attrs = &attr;
    config.numAttrs = 1;
    if (cudaOccupancyMaxActiveClusters(&found, fn, &config) != cudaSuccess) found = 0;
  }
  (void)cudaGetLastError();
  if (found > 0) device = current, clusters = found;
  return found;
}

// Host side: enqueues kernel K on `stream` with min(resident clusters, units of the tile order)
// clusters. Returns null, or why it could not.
template <class K>
const char* launch(typename K::Params const& params, cudaStream_t stream) {
  const int resident = resident_clusters<K>();
  if (resident <= 0)
    return "no cluster of the kernel fits on this device (cudaFuncSetAttribute or cudaOccupancyMaxActiveClusters)";
  const int clusters = std::min(resident, params.order.units());
  if (clusters <= 0) return nullptr;  // nothing to do
  void* args[] = {const_cast<typename K::Params*>(&params)};
  const cutlass::Status s = cutlass::ClusterLauncher::launch(
      dim3(clusters * K::kClusterM, 1, 1), dim3(K::kClusterM, 1, 1), dim3(kThreads, 1, 1), K::kSharedBytes, stream,
      reinterpret_cast<const void*>(handoff_gemm_kernel<K>), args);
  if (s != cutlass::Status::kSuccess) return cutlassGetStatusString(s);
  const cudaError_t err = cudaGetLastError();
  return err == cudaSuccess ? nullptr : cudaGetErrorString(err);
}

}  // namespace overlap::cuda::handoff_gemm
