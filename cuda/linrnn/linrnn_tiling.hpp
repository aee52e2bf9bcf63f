#pragma once
// Tiling of every linrnn kernel variant: the ONE definition both the CUDA kernels
// (cuda/linrnn/) and the simulator's models (sim/models/linrnn_model.cpp) are built from.
// Plain C++17, includable from host code and from .cu files.
namespace overlap::linrnn {

enum class Variant {
  ThreeKernel,  // GEMM -> scan kernel -> gate kernel; u, a, z and h round-trip through HBM
  SemiFused,    // library GEMM, then one kernel doing scan + gate
  FullFused,    // one kernel, per timestep a vector-matrix product on FMA pipes, then the scan
  ChunkFused,   // one kernel: per chunk a tensor-core GEMM, then the scan over the chunk
};

// The projection GEMM x[B*T, d] @ W[d, 3*dv] of ThreeKernel / SemiFused (what cuBLAS picks
// for this skinny shape is close to this; the model uses it for both).
struct ProjectionGemm {
  int tile_m, tile_n, tile_k;  // tile_k in elements (bf16)
  int stages;
  int warps;              // compute warps (4 per warpgroup on sm_90)
  bool warp_specialized;  // sm_90: TMA producer warp + consumer warpgroups
  int max_regs_per_thread;
};
constexpr ProjectionGemm projection_gemm_for(int compute_capability) {
  if (compute_capability >= 90) return {128, 128, 64, 4, 8, true, 232};
  if (compute_capability >= 80) return {128, 128, 32, 3, 8, false, 232};
  return {128, 128, 32, 2, 8, false, 232};
}

// The scan kernels (ThreeKernel's scan, SemiFused's scan+gate) and ChunkFused's scan phase share
// one chunk-parallel design: a CTA owns one (batch row, chunk of `chunk_t` timesteps, block of
// `channels_per_cta` channels) tile, never all of T. The chunk is loaded whole into shared
// memory as (a, b = (1-a) u) pairs; each of the `segments` thread groups composes a contiguous
// run of chunk_t/segments steps in registers (one thread per channel and segment), the
// segment aggregates compose into the chunk's (A, B), and the chunks' carries combine through
// a decoupled look-back (CUB's single-pass scan: publish the aggregate, then the inclusive h,
// each value in one 64-bit word with its flag; tile order from an atomic counter so every
// predecessor is already running).
// A second pass over the chunk applies the carry-in and writes y (or h).
struct ScanTiling {
  int channels_per_cta;  // = 64: one thread per channel publishes and looks back
  int threads;
  int chunk_t;           // timesteps per tile
  int segments;          // threads / channels_per_cta: serial runs of chunk_t/segments steps
  int stages;            // 1: each tile loads its chunk once (parallelism comes from the tiles)
  int max_regs_per_thread;
};
constexpr ScanTiling scan_tiling() { return {64, 256, 64, 4, 1, 64}; }

// ThreeKernel's gate kernel y = h * silu(z): a plain elementwise kernel.
struct ElementwiseTiling {
  int threads;
  int elements_per_thread;
};
constexpr ElementwiseTiling elementwise_tiling() { return {256, 8}; }

// FullFused: a CTA owns `channels` state channels (3*channels columns of W) of one batch row.
struct FullFusedTiling {
  int channels;
  int threads;                // split the d-long dot products
  int max_regs_per_thread;
  int w_resident_max_bytes;  // W slice kept in shared memory when it fits, else re-read from L2
};
constexpr FullFusedTiling full_fused_tiling() { return {32, 128, 128, 96 * 1024}; }

// ChunkFused: one Hopper GEMM (CUTLASS 4.2 sm90 KernelTmaWarpSpecializedCooperative: persistent,
// one TMA producer warp, two consumer warpgroups sharing a tile; clusters of `cluster_m` tiles
// along M share each weight tile by TMA multicast) whose epilogue is the scan
// (cuda/linrnn/linrnn_wgmma_epilogue.cuh). A tile is `tile_m` consecutive rows of the flattened
// [B*T] timesteps x one block of `block_dv` channels as [u | a | z] (N = 3 * block_dv), read from
// the weight packed once by linrnn_pack_weight (K-major, [u|a|z] per channel block). The scan
// runs in registers (shuffles over each warp's 16 rows), through shared memory across the 8
// warps, and across tiles by the look-back (predecessor: the previous M tile, same channels).
// Measured on the H100 (docs/results/linrnn_h100.md, session 3): this replaced round 2's
// mma.sync kernel (a CTA per 64-step chunk, W gathered by cp.async) at every benchmark shape,
// 15.8 / 25.9 / 401 us against 18.0 / 35.5 / 1082 us at B=4 / B=16 x T=2048 x d=256 x dv=64 and
// B=8 x T=4096 x d=dv=1024, so that kernel was deleted. A "pingpong" schedule (each warpgroup
// its own tile, epilogue under the other's mainloop) lost both ways: with 128 rows per
// warpgroup (192 accumulators per thread) ptxas spilled 2 KB per thread and it ran 682 us at the
// large shape; with 64 rows per warpgroup (96 accumulators, no spills, 6 stages) its mainloop
// alone (empty epilogue) ran 347 us against 238 us for this cooperative one, and with the scan
// 462 us against 398 us (same device call, docs/results/linrnn_h100.md table S3-4); 128 x 96
// per warpgroup (32 channels, two m64 accumulator chains, 7 stages) ran 487 us. Ordering M
// tiles with batch rows interleaved (a tile's predecessor a wave earlier) did not help this
// kernel either (411 us against 398 us), so the scheduler keeps its plain order.
struct ChunkFusedTiling {
  int tile_m;          // timesteps (rows of the flattened B*T) per tile
  int block_dv;        // channels per tile (GEMM N = 3 * block_dv)
  int tile_k;          // d-slice per TMA stage
  int stages;          // TMA ring depth
  int cluster_m;       // CTAs per cluster along M (weight tile multicast)
  int consumer_warps;  // two warpgroups, 64 rows of the tile each
  constexpr int threads() const { return 32 * consumer_warps + 128; }  // + the producer warpgroup
  constexpr int stage_bytes() const { return (tile_m + 3 * block_dv) * tile_k * 2; }
};
constexpr ChunkFusedTiling chunk_fused_tiling() { return {128, 64, 64, 5, 2, 8}; }

}  // namespace overlap::linrnn
