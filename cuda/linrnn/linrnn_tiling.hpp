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

// The scan kernels (ThreeKernel's scan, SemiFused's scan+gate): a CTA owns `channels_per_cta`
// channels of one batch row and walks T in chunks that are loaded whole (double-buffered).
// All `threads` do the chunk's elementwise math (sigmoid, silu) in parallel over timesteps;
// one warp (a lane per channel) then walks the dependent chain in registers.
struct ScanTiling {
  int channels_per_cta;  // = 32: one warp lane per channel for the chain
  int threads;
  int chunk_t;           // timesteps loaded per stage
  int stages;
  int max_regs_per_thread;
};
constexpr ScanTiling scan_tiling() { return {32, 128, 64, 2, 64}; }

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

// ChunkFused: a CTA owns `block_dv` channels of one batch row and walks T in chunks.
struct ChunkFusedTiling {
  int chunk_t;   // rows of the per-chunk GEMM (64 = one wgmma M)
  int block_dv;  // channels per CTA (GEMM N = 3 * block_dv)
  int tile_k;    // d-slice per load
  int stages;
  int warps;
  int max_regs_per_thread;
  int w_resident_max_bytes;  // W slice resident if at most this AND the layout fits the GPU's
                             // shared memory; else x and W stream in tile_k slices
};
constexpr ChunkFusedTiling chunk_fused_tiling() { return {64, 32, 64, 2, 4, 168, 96 * 1024}; }

}  // namespace overlap::linrnn
