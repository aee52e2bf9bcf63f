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
// 80 registers: the cap __launch_bounds__(256, 3) sets (three CTAs an SM).
constexpr ScanTiling scan_tiling() { return {64, 256, 64, 4, 1, 80}; }

// The look-back (cuda/linrnn/linrnn_lookback.cuh) polls this many predecessors per L2 round trip.
constexpr int kLookbackWindow = 8;

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

// ChunkFused: one Hopper GEMM whose scan runs in a warpgroup of its own
// (cuda/common/sm90_handoff_gemm.cuh, cuda/linrnn/linrnn_scan_warpgroup.cuh): persistent, one TMA
// producer warp, two MMA warpgroups sharing a tile (CUTLASS 4.2's sm90 mainloop; clusters of
// `cluster_m` tiles along M share each weight tile by TMA multicast), which copy the tile's
// fp32 accumulators to shared memory and go on with the next tile, and an epilogue warpgroup
// that runs the scan meanwhile. A tile is `tile_m` consecutive rows of the flattened [B*T]
// timesteps x one block of `block_dv` channels as [u | a | z] (N = 3 * block_dv), read from the
// weight packed once by linrnn_pack_weight (K-major, [u|a|z] per channel block). The scan: each
// epilogue thread composes 32 rows of a channel pair serially, the four slices compose through
// shared memory, and tiles carry by the look-back (predecessor: the previous M tile, same
// channels). The 128 x 200 fp32 hand-off tile (100 KB) leaves room for three TMA stages.
// Measured on the H100 (docs/results/linrnn_h100.md): session 3's CUTLASS cooperative kernel
// with the scan in its epilogue (5 stages, not overlapped) ran 401 us at B=8, T=4096,
// d=dv=1024, of which the mainloop alone was 238 us; this one ran 298.7 us in session 4's
// benchmark (295-315 us in its timing rounds; mainloop and hand-off alone, epilogue empty:
// 267-282 us, where three stages against five cost most of the difference: two stages ran
// 379 us). Ping-pong schedules (each warpgroup its own tile) lost:
// 64 x 192 per warpgroup ran its mainloop alone in 347 us, 128 x 96 per warpgroup 487 us with
// the scan; so did batch rows interleaved in the tile order (328 against 325 us).
struct ChunkFusedTiling {
  int tile_m;          // timesteps (rows of the flattened B*T) per tile
  int block_dv;        // channels per tile (GEMM N = 3 * block_dv)
  int tile_k;          // d-slice per TMA stage
  int stages;          // TMA ring depth
  int cluster_m;       // CTAs per cluster along M (weight tile multicast)
  int consumer_warps;  // two MMA warpgroups, 64 rows of the tile each
  int epilogue_warps;  // the scan's warpgroup
  constexpr int threads() const { return 32 * (consumer_warps + epilogue_warps) + 128; }  // + the producer warpgroup
  constexpr int handoff_bytes() const { return tile_m * (3 * block_dv + 8) * 4; }  // fp32, rows padded by 8
};
constexpr ChunkFusedTiling chunk_fused_tiling() { return {128, 64, 64, 3, 2, 8, 4}; }

}  // namespace overlap::linrnn
