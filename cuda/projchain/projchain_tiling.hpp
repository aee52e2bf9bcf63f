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
    // Session 4 tried the hand-off GEMM (cuda/common/sm90_handoff_gemm.cuh: the MMA warpgroups
    // stage activated bf16 into shared memory, warps 1..3 of the producer warpgroup store it under
    // the next tile's MMAs). Its 66 KB hand-off tile leaves room for 3 stages only; measured 0.6-1.6%
    // slower than this kernel at the reference shape and 3.4-3.8% slower at N = 2048 in five runs
    // (docs/results/projchain_h100.md, History): not kept.
    if (v == Variant::EpilogueFused) return {128, 256, 64, 4, 8, true, true, false, 232, 2};
    return {128, 256, 64, 3, 8, true, true, true, 232, 1};
  }
  if (compute_capability >= 80) return {128, 128, 32, 3, 8, false, false, false, 232, 1};
  return {128, 128, 32, 2, 8, false, false, false, 232, 1};
}

// Order of EpilogueFused's persistent tiles (cuda/projchain/projchain_strip_scheduler.cuh): the
// column tiles are cut into strips of `fused_strip_n` tiles, and the CTAs walk down the rows
// inside a strip before the next strip, so the strip's slice of the weight stays in L2 while x
// streams through once per strip. 1 is CUTLASS's AlongM raster; the whole column tile count is
// its AlongN raster (CUTLASS's swizzle is not used: it pads both tile counts to a multiple of
// the swizzle, 33 -> 36 column tiles at swizzle 4).
// Measured on an H100 at d=2048, H=16, dk=128 (33 column tiles, 1 MiB of weight each;
// docs/results/projchain_h100.md: strips 1, 3, 6, 8, 11, 16, 33 in one call with Nsight Compute,
// and 1, 8, 33 beside the chosen order in the final run):
//  - N = 32768: strips of 11 read 0.73 GB from DRAM (cuBLAS's wide GEMM: 0.81 GB) at an 85% L2
//    hit rate; AlongN (33) read 2.5 GB at 62%, AlongM (1) 4.5 GB at 43%. Nsight Compute: 2.47 M
//    cycles for strips of 3 to 16 alike, 2.62 M for AlongN, 2.94 M for AlongM. Final run: 1579 us
//    (strips of 8: 1587, AlongN: 1693, AlongM: 1860).
//  - N = 8192 and 16384: strips of 6 to 16 within 3% of each other; the final run's strips of
//    11 were 8% faster than AlongN and 5-18% faster than AlongM.
//  - N = 2048 and 4096 (2 to 4 waves): AlongM as fast as any strip and 6-9% faster than AlongN,
//    so strips start at N = 8192, the smallest N measured where they win.
// The rule: the widest even split of the column tiles whose weight slice stays within 12 MiB,
// about a quarter of the 50 MB L2 (11 tiles at d = 2048). Other d are extrapolated from d = 2048.
constexpr long long kFusedStripWeightBytes = 12LL << 20;
constexpr int fused_strip_n(long long rows, long long d, long long columns) {
  if (rows < 8192) return 1;
  const long long tile_n = gemm_tiling_for(Variant::EpilogueFused, 90).tile_n;
  const long long tiles_n = (columns + tile_n - 1) / tile_n;
  const long long per_tile = tile_n * d * 2;  // bf16 weight bytes of one column tile
  const long long most = kFusedStripWeightBytes / per_tile < 1 ? 1 : kFusedStripWeightBytes / per_tile;
  const long long strips = (tiles_n + most - 1) / most;
  return static_cast<int>((tiles_n + strips - 1) / strips);
}
static_assert(fused_strip_n(32768, 2048, 8208) == 11 && fused_strip_n(4096, 2048, 8208) == 1,
              "the measured choice at the reference shape and below N = 8192");

// The standalone activation kernels of Unfused / WideGemm: one CTA per row block; the L2
// norm needs a whole head per warp.
struct ActivationTiling {
  int threads;
  int rows_per_cta;
};
constexpr ActivationTiling activation_tiling() { return {256, 16}; }

}  // namespace overlap::projchain
