#pragma once
// Tiling of every projchain kernel variant: the ONE definition both the CUDA kernels
// (cuda/projchain/) and the simulator's models (sim/models/projchain_model.cpp) are built from.
// Plain C++17, includable from host code and from .cu files.
namespace overlap::projchain {

enum class Variant {
  Unfused,        // 5 GEMMs + 3 activation kernels (8 launches)
  WideGemm,       // 1 GEMM on [Wq|Wk|Wv|Wg|Wa], then 3 activation kernels on the slices
  EpilogueFused,  // 1 GEMM, every activation (and the per-head L2 norm) in its epilogue
  ClusterFused,   // 1 GEMM with half-head tiles; clusters exchange L2-norm partials via DSMEM
};

struct GemmTiling {
  int tile_m, tile_n, tile_k;  // tile_k in bf16 elements
  int stages;
  int consumer_warps;     // 4 per warpgroup
  bool warp_specialized;  // sm_90: TMA producer warp + consumer warpgroups
  bool persistent;        // one CTA per SM slot, looping over output tiles
  bool tma_store;         // epilogue through shared memory + TMA store (sm_90)
  int max_regs_per_thread;
  int cluster_n;          // CTAs per cluster along N (1: no cluster)
};

constexpr GemmTiling gemm_tiling_for(Variant v, int compute_capability) {
  if (compute_capability >= 90) {
    // 128x256 tiles (two consumer warpgroups of 64x256, CUTLASS's sm90 cooperative default):
    // half the L2 traffic per FLOP of 128x128. ClusterFused uses half-head tiles (N = 64) so
    // one head spans a cluster of dk/64 CTAs.
    if (v == Variant::ClusterFused) return {128, 64, 64, 6, 8, true, true, true, 232, 2};
    // EpilogueFused is our CUTLASS kernel (cuda/projchain/projchain_fused_gemm.cu): its epilogue
    // stores from registers (no shared-memory staging, no TMA store), so the shared memory that
    // staging would take holds a 4th stage of 48 KB (measured on an H100: 3% faster than 3
    // stages at the reference shape). The other variants model cuBLAS's kernels.
    if (v == Variant::EpilogueFused) return {128, 256, 64, 4, 8, true, true, false, 232, 1};
    return {128, 256, 64, 3, 8, true, true, true, 232, 1};
  }
  if (compute_capability >= 80) return {128, 128, 32, 3, 8, false, false, false, 232, 1};
  return {128, 128, 32, 2, 8, false, false, false, 232, 1};
}

// The standalone activation kernels of Unfused / WideGemm: one CTA per row block; the L2
// norm needs a whole head per warp.
struct ActivationTiling {
  int threads;
  int rows_per_cta;
};
constexpr ActivationTiling activation_tiling() { return {256, 16}; }

}  // namespace overlap::projchain
