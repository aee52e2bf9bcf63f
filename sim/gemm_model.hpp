#pragma once
// A tiled GEMM kernel (C = epilogue(A B^T), optionally with two B operands sharing A) as a
// KernelSpec: the k-loop through the tile loop of tile_loop.hpp, an epilogue once per output
// tile, persistent or one CTA per tile. Shared by every GEMM-shaped kernel of every workload.
#include <cstdint>
#include <string>

#include "sim/kernel.hpp"
#include "sim/profile.hpp"

namespace overlap::sim {

struct GemmSpec {
  std::string name;
  std::int64_t batch = 1, M = 1, N = 1, K = 1;
  int b_operands = 1;  // 2: dual GEMM, B1 and B2 share the A tile
  double a_bytes_per_element = 2, b_bytes_per_element = 2, c_bytes_per_element = 2;
  Precision precision = Precision::Bf16;
  // Tiling (from the workload's *_tiling.hpp):
  int tile_m = 128, tile_n = 128, tile_k = 64, stages = 3, consumer_warps = 8;
  bool warp_specialized = false, persistent = false, tma_store = false;
  int max_regs_per_thread = 232;
  int cluster_size = 1;        // CTAs per cluster
  // CTAs of the cluster sharing each B tile (those along M) / each A tile (those along N) by
  // TMA multicast: that tile leaves L2 once for all of them.
  int b_multicast = 1, a_multicast = 1;
  // Warp-specialized, 2+ stages: the consumers free a stage as soon as its MMAs are done where
  // the next stage has not landed, after one named barrier per k-block that agrees on it
  // (dualgemm's eager_release), instead of once the next k-block is in.
  bool eager_release = false;
  // The producer loads two k-blocks back to back once two stages are free (dualgemm's
  // paired_loads): a stage waits for its neighbour before it is refilled.
  bool paired_loads = false;
  // Without warp specialization: the consumer thread that refills a stage does so between its own
  // wgmmas, after waiting for this k-block's data and the previous k-block's wgmmas (dualgemm's
  // non-specialized kernels), so one load fewer is in flight than a cp.async pipeline keeps.
  bool refill_after_wait = false;
  // B tiles prefetched into L2 this many k-blocks ahead by the producer (0: none): the B loads
  // into shared memory then hit L2, and the prefetches draw the HBM bytes.
  int l2_prefetch_k = 0;
  // The consumers' own time a k-block beyond the tensor unit's (e.g. ring bookkeeping between
  // one wgmma wait and the next wgmma), on their path after the MMA.
  double kblock_extra_ns = 0;
  int mma_n = 0;  // the N of the consumers' wgmma instructions (0: not known)
  // An epilogue warpgroup of its own (cuda/common/sm90_handoff_gemm.cuh): the consumers copy
  // each finished tile to shared memory (handoff_bytes_per_element) and go on; the epilogue
  // work and the stores run in that warpgroup, under the next tile's mainloop.
  bool epilogue_warpgroup = false;
  double handoff_bytes_per_element = 4;  // moved per output element
  std::int64_t handoff_tile_bytes = 0;    // the buffer's footprint (padding too); 0: tile x bytes moved
  double epilogue_smem_bytes_per_element = 0;  // the epilogue's own shared-memory traffic
  int epilogue_max_regs_per_thread = 136;
  // Epilogue work per output element (activations, conversion) and per output tile.
  double epilogue_fma_per_element = 1, epilogue_sfu_per_element = 0;
  double epilogue_sync_ns_per_tile = 0;  // e.g. a cluster exchange of partial norms
  // A global load the epilogue's first instruction waits for (e.g. fp8 scales loaded after the
  // k-loop): its latency, once a tile, on the consumers' path.
  double epilogue_load_ns_per_tile = 0;
  // How the epilogue writes C (kernel.hpp's StoreShape): our own kernels say; a library's is
  // unknown (Any).
  StoreShape c_store_shape = StoreShape::Any;
};

// Registers of a warp-specialized producer warp after setmaxnreg (CUTLASS / FA3 use 24-40).
inline constexpr int kProducerRegsPerThread = 40;

KernelSpec gemm_kernel(const HardwareProfile& hw, const GemmSpec& spec);

// Empty when the tiling can run on `hw` (precision, shared memory, registers), else why not.
std::string gemm_cannot_run(const HardwareProfile& hw, const GemmSpec& spec);

}  // namespace overlap::sim
