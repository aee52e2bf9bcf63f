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
  // CTAs per cluster (1: none). ClusterFused's lie along N (one head across the cluster);
  // EpilogueFused's along M: both row tiles read the same weight tile, loaded once and
  // multicast to both by TMA.
  int cluster_size;
};

// Order of the persistent scheduler's tiles: raster 'n' (along N first), 'm', or 'h' (CUTLASS's
// heuristic); swizzle 1, 2, 4 or 8 (groups of tiles that share operands in L2). Measured on an
// H100 (docs/results/projchain_h100.md, d=2048, 33 tiles across the 8208 columns): up to N=4096
// the heuristic is fastest; from N=8192 on, along N beat the heuristic (3.32 -> 2.26 ms at the
// reference shape with swizzle 4). Swizzle stays 1: CUTLASS rounds BOTH tile counts up to a
// multiple of swizzle x cluster, so swizzle 4 turned the 33 column tiles into 36 and the kernel
// computed 9% more tiles than the problem has (Nsight Compute counted 9216 tiles instead of
// 8448 at the reference shape); swizzle 8 (40 tiles) was slower still. Along N with swizzle 1
// the CTAs in flight cover 4 row tiles x all 33 column tiles. Swizzle 1 was measured only
// together with two epilogue changes (round 3: 25% faster at N = 8192 and 16384, 12% at the
// reference shape), not alone.
struct FusedTileOrder {
  char raster;
  int swizzle;
};
constexpr FusedTileOrder fused_tile_order(long long rows) {
  return rows >= 8192 ? FusedTileOrder{'n', 1} : FusedTileOrder{'h', 1};
}

constexpr GemmTiling gemm_tiling_for(Variant v, int compute_capability) {
  if (compute_capability >= 90) {
    // 128x256 tiles (two consumer warpgroups of 64x256, CUTLASS's sm90 cooperative default):
    // half the L2 traffic per FLOP of 128x128. ClusterFused uses half-head tiles (N = 64) so
    // one head spans a cluster of dk/64 CTAs.
    if (v == Variant::ClusterFused) return {128, 64, 64, 6, 8, true, true, true, 232, 2};
    // EpilogueFused is our CUTLASS kernel (cuda/projchain/projchain_fused_gemm.cu), the
    // cooperative persistent schedule (both consumer warpgroups on one tile; the epilogue does
    // not overlap the next tile's MMAs). Its epilogue stores from registers (no shared-memory
    // staging, no TMA store), so the shared memory that staging would take holds a 4th stage.
    // Measured on an H100 (docs/results/projchain_h100.md, one run, three compiled kernels):
    // 2x1 clusters were 2-6% faster than no cluster at N >= 8192 (1% at N = 2048; at the
    // reference shape within run-to-run noise in a later run); CUTLASS's ping-pong schedule with
    // 64x256 tiles per warpgroup (each warpgroup's epilogue under the other's MMAs, 2x1
    // clusters) was 10-14% slower than the no-cluster kernel at N >= 8192.
    if (v == Variant::EpilogueFused) return {128, 256, 64, 4, 8, true, true, false, 232, 2};
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
