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

// ChunkFused: a CTA owns one (batch row, chunk of `chunk_t` timesteps, `block_dv` channels)
// tile, like the scan kernels, and first computes that tile's projection on tensor cores
// (mma.sync m16n8k16, bf16 in, fp32 accumulate): the x chunk [chunk_t, d] times the W columns
// of its channels gathered as [u | a | z] (N = 3 * block_dv), streamed through a cp.async ring
// of `stages` d-slices of `tile_k`. The warps split the tile warps_m x (warps / warps_m) so
// that each thread's accumulators hold u, a_pre and z of the same (timestep, channel); the
// epilogue turns them into (a, b, silu(z)) in shared memory (aliasing the ring) and runs the
// scan tiling above. No weight re-layout: the gather happens in the cp.async addresses.
struct ChunkFusedTiling {
  int chunk_t;   // GEMM M: timesteps per tile
  int block_dv;  // channels per tile (GEMM N = 3 * block_dv)
  int tile_k;    // d-slice per ring stage
  int stages;
  int warps;
  int warps_m;   // warps along the timesteps; warps / warps_m along the channels
  int max_regs_per_thread;
  int segments;  // scan segments (threads / block_dv)
  constexpr int threads() const { return 32 * warps; }
  // Shared memory: the ring, reused by the scan's (a, b, silu z) fp32 arrays (rows padded to
  // block_dv + 4 floats), plus the segment aggregates and the carry-in.
  constexpr int ring_bytes() const { return stages * (chunk_t * tile_k + tile_k * 3 * block_dv) * 2; }
  constexpr int scan_bytes() const { return 3 * chunk_t * (block_dv + 4) * 4; }
  constexpr int smem_bytes() const {
    return (ring_bytes() > scan_bytes() ? ring_bytes() : scan_bytes()) + (2 * segments + 1) * block_dv * 4 + 16;
  }
};
// One chunk length at every shape: 64 timesteps. Measured end to end on the H100 (round-2 first
// device run, docs/results/linrnn_h100.md) at B=4 / B=16 x T=2048 x d=256 x dv=64 and at
// B=8 x T=4096 x d=1024 x dv=1024, 64 was the fastest at all three (16.6 / 34.8 / 1062.0 us;
// 32 steps: 17.2 / 49.2 / 1559.2 us; 128 steps: 26.4 / 37.5 / 1093.5 us; at the large shape
// the 3% margin over 128 is within run-to-run spread), so the other lengths were deleted
// rather than chosen by shape.
constexpr ChunkFusedTiling chunk_fused_tiling() { return {64, 64, 64, 3, 8, 2, 128, 4}; }

}  // namespace overlap::linrnn
