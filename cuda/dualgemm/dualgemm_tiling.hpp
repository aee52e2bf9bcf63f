#pragma once
// Tiling of every dualgemm kernel variant, C = silu(A B1^T) * (A B2^T): the ONE definition
// both the CUDA kernels (cuda/dualgemm/) and the simulator's models
// (sim/models/dualgemm_model.cpp) are built from. Each variant is one hypothesis of SPEC:
// tile size against SM count, pipeline stages, warp specialization, a TMA-store epilogue.
// Plain C++17, includable from host code and from .cu files.
#include <array>

namespace overlap::dualgemm {

// Operand encodings of A, B1, B2 (the shape key `fmt`: 0 bf16, 1 fp8 e4m3, 2 nvfp4).
enum class OperandFormat { Bf16 = 0, Fp8E4m3 = 1, Nvfp4 = 2 };

constexpr double operand_bytes_per_element(OperandFormat f) {
  // nvfp4: half a byte per value plus one e4m3 scale per 16 values.
  return f == OperandFormat::Bf16 ? 2.0 : f == OperandFormat::Fp8E4m3 ? 1.0 : 0.5 + 1.0 / 16.0;
}
// 128 bytes of K per row: one swizzle atom, the k-block of a one-atom stage.
constexpr int tile_k_for(OperandFormat f) {
  return f == OperandFormat::Bf16 ? 64 : f == OperandFormat::Fp8E4m3 ? 128 : 256;
}

struct Tiling {
  // The variant name: tile<M>x<N>_stages<S>_<ws|nows>[_tmastore][_c<CM>x<CN>][_eager][_pairs][_pf<K>][_k2][_p<P>][_es][_lean].
  const char* name;
  const char* hypothesis; // which SPEC question this variant answers
  int tile_m, tile_n;
  int stages;
  bool warp_specialized;  // a TMA producer warpgroup + 2 consumer warpgroups, persistent over
                          // tiles, vs the 2 warpgroups alone, one thread issuing TMA between its MMAs
  bool tma_store;         // epilogue staged in shared memory and written by TMA, asynchronously
  // A thread-block cluster of cluster_m x cluster_n CTAs (warp-specialized only): the CTAs
  // along M share each B tile, those along N each A tile, every CTA loading its slice of the
  // shared tile once and TMA multicasting it to the others, so each operand tile leaves L2
  // once per cluster instead of once per CTA.
  int cluster_m = 1, cluster_n = 1;
  // When a consumer warpgroup frees a stage (warp-specialized, 2+ stages). It keeps one stage's
  // wgmma group in flight, so stage k is known to be read once the wgmmas of k + 1 are issued and
  // the group of k has completed; that is when the kernels free it (CUTLASS's order), holding it
  // while k + 1's data is still on its way. Eager: where stage k + 1 has not landed, the
  // warpgroup first waits for k's group and frees k, so that the producer refills it during the
  // wait (one more stage in flight when loads are late).
  bool eager_release = false;
  // Loads issued two k-blocks at a time (warp-specialized): the producer waits until two stages
  // are free and loads both back to back, so that each row's two 128-byte pieces, adjacent in
  // memory, reach DRAM together. A B tile's rows are K bytes apart, so one k-block's box reads
  // a scattered 128 bytes of each; calibrate's walk of that pattern (tma_hbm_walk_bandwidth_GBps)
  // delivers more with two adjacent boxes a stage than with twice the stages of one.
  bool paired_loads = false;
  // L2 prefetch distance in k-blocks (warp-specialized; 0: none): with each k-block's loads the
  // producer asks L2 to fetch the B1/B2 boxes of the k-block this far ahead, so that more of the
  // operand is on its way from DRAM than the shared-memory ring holds, and the ring's loads hit L2.
  int prefetch_k = 0;
  // Swizzle atoms of K (128 bytes a row each) per stage, all of a stage's atoms of one operand in
  // one TMA box (warp-specialized 128-row tiles without a cluster): the hypothesis that a k-block
  // costs the SM's TMA by its boxes, so that two atoms a box (half the boxes, half as many stages)
  // walk faster. Measured slower (docs/results/dualgemm_h100.md): the shallower ring costs more
  // than the fewer boxes save.
  int k_atoms = 1;
  // Producer warps issuing the loads, k-block by k-block in turn (warp-specialized): the
  // hypothesis that one thread's issue loop (wait for the free stage, expect_tx, a TMA
  // instruction per box, each a dependent uniform-datapath chain) takes about as long as a
  // small tile's k-block, so that two threads issuing alternate stages keep more in flight.
  // The walk microbenchmark's producer took ~550 SM clocks a stage whatever the boxes' bytes
  // (cuda/calibrate/walk_geometry.cu, its `trace` set).
  int producers = 1;
  // When the consumers load their fp8 scales (per row of A, per column of B1 and B2) into
  // registers: before the tile's k-loop, while they wait for its first stage, rather than after
  // it, where the first use waits a load from DRAM (an L2 emptied before the call holds none of
  // them) in the tile's tail. Costs 2 + kWN / 2 registers a consumer thread.
  bool early_scales = false;
  // A tile's first load and last store, sooner (warp-specialized, one producer, no cluster): the
  // producer thread initialises the ring's barriers and issues its first fill before the
  // CTA-wide barrier rather than after it, and the TMA store's last wait is only for its reads
  // of shared memory (CUTLASS's), not for its writes to reach memory.
  bool lean_edges = false;

  constexpr int cluster_size() const { return cluster_m * cluster_n; }

  static constexpr int consumer_warps() { return 8; }
  // The producer is a whole warpgroup (one thread issues the loads) so that setmaxnreg, which
  // acts per warpgroup, can move its registers to the consumers (CUTLASS's split).
  constexpr int threads() const { return 32 * (consumer_warps() + (warp_specialized ? 4 : 0)); }
  // Registers per consumer thread. One CTA per SM; each of the 4 SM sub-partitions holds 16384
  // registers for its share of the warps. Warp-specialized: setmaxnreg gives the producer
  // warps 40 and the consumers 232 (1 x 40 + 2 x 232 warps' worth fit a sub-partition). Not
  // warp-specialized: 2 consumer warps per sub-partition, at most 255 each.
  static constexpr int kProducerRegs = 40;
  constexpr int max_regs_per_thread() const { return warp_specialized ? 232 : 255; }
  // The consumer warpgroups split the tile: by rows when it has 128 (each 64 x tile_n), else by
  // columns (each 64 x tile_n/2). A warpgroup's wgmma is 64 x warpgroup_n.
  constexpr int warpgroup_n() const { return tile_m == 128 ? tile_n : tile_n / 2; }
  // Two fp32 accumulators (A B1^T and A B2^T) live in the consumer warps' registers.
  constexpr int accumulator_regs_per_thread() const { return 2 * tile_m * tile_n / (32 * consumer_warps()); }
  // Ring of A, B1, B2 stages, plus the C tile staged for a TMA store (fp16).
  constexpr long smem_bytes(OperandFormat f) const {
    const double per_row = k_atoms * tile_k_for(f) * operand_bytes_per_element(f);
    const long per_stage = long(per_row * (tile_m + 2 * tile_n));
    return per_stage * stages + (tma_store ? long(tile_m) * tile_n * 2 : 0);
  }
};

// Every variant, baseline first (tile128x128_stages4_ws). The stage sweep runs at 128x64 as
// well as 128x128: a 128x128 stage is 48 KiB, so 128x128 holds at most 4 in the 227 KiB of an
// sm_90 CTA, while 128x64 (32 KiB a stage) holds 6.
inline constexpr std::array<Tiling, 43> kTilings = {{
    {"tile128x128_stages4_ws", "baseline", 128, 128, 4, true, false},
    {"tile128x64_stages4_ws", "tile size vs SM count", 128, 64, 4, true, false},
    {"tile64x128_stages4_ws", "tile size vs SM count", 64, 128, 4, true, false},
    {"tile64x64_stages4_ws", "tile size vs SM count", 64, 64, 4, true, false},
    {"tile128x128_stages1_ws", "pipeline stages", 128, 128, 1, true, false},
    {"tile128x128_stages2_ws", "pipeline stages", 128, 128, 2, true, false},
    {"tile128x128_stages3_ws", "pipeline stages", 128, 128, 3, true, false},
    {"tile128x64_stages1_ws", "pipeline stages", 128, 64, 1, true, false},
    {"tile128x64_stages2_ws", "pipeline stages", 128, 64, 2, true, false},
    {"tile128x64_stages3_ws", "pipeline stages", 128, 64, 3, true, false},
    {"tile128x64_stages5_ws", "pipeline stages", 128, 64, 5, true, false},
    {"tile128x64_stages6_ws", "pipeline stages", 128, 64, 6, true, false},
    {"tile128x128_stages4_nows", "warp specialization", 128, 128, 4, false, false},
    {"tile128x64_stages4_nows", "warp specialization", 128, 64, 4, false, false},
    {"tile128x128_stages4_ws_tmastore", "TMA-store epilogue", 128, 128, 4, true, true},
    {"tile128x64_stages4_ws_tmastore", "TMA-store epilogue", 128, 64, 4, true, true},
    {"tile64x128_stages4_ws_tmastore", "TMA-store epilogue", 64, 128, 4, true, true},
    {"tile128x128_stages4_nows_tmastore", "TMA-store epilogue", 128, 128, 4, false, true},
    {"tile128x64_stages4_nows_tmastore", "TMA-store epilogue", 128, 64, 4, false, true},
    // Fits every GPU here (48 KiB of shared memory in bf16): the pre-Hopper reference point.
    {"tile64x64_stages2_nows", "small tiles (fits T4, A100)", 64, 64, 2, false, false},
    {"tile128x64_stages6_ws_c2x1", "cluster multicast", 128, 64, 6, true, false, 2, 1},
    {"tile128x64_stages6_ws_c1x2", "cluster multicast", 128, 64, 6, true, false, 1, 2},
    {"tile128x64_stages6_ws_c2x2", "cluster multicast", 128, 64, 6, true, false, 2, 2},
    {"tile128x128_stages4_ws_c2x1", "cluster multicast", 128, 128, 4, true, false, 2, 1},
    {"tile128x128_stages4_ws_c2x2", "cluster multicast", 128, 128, 4, true, false, 2, 2},
    {"tile128x64_stages6_ws_eager", "stage release", 128, 64, 6, true, false, 1, 1, true},
    {"tile128x64_stages4_ws_pairs", "paired loads", 128, 64, 4, true, false, 1, 1, false, true},
    {"tile128x64_stages6_ws_pairs", "paired loads", 128, 64, 6, true, false, 1, 1, false, true},
    {"tile128x64_stages6_ws_tmastore", "TMA-store epilogue", 128, 64, 6, true, true},
    {"tile128x64_stages6_ws_tmastore_pf8", "L2 prefetch", 128, 64, 6, true, true, 1, 1, false, false, 8},
    // 3072 columns in 32 tiles of 96: M = 512 fills 128 SMs where 128x128 fills 96 (a 64 x 192
    // wgmma covers both products of a warpgroup's 96 columns).
    {"tile128x96_stages5_ws", "tile size vs SM count", 128, 96, 5, true, false},
    // The 6-stage 128x64 kernel's 192 KiB of ring as 3 stages of two atoms: 3 boxes (A, B1, B2)
    // per two k-blocks instead of per one.
    {"tile128x64_stages3_ws_tmastore_k2", "boxes per k-block", 128, 64, 3, true, true, 1, 1, false, false, 0, 2},
    // Without the TMA store's 16 KiB of staging a seventh 32 KiB stage fits (224 KiB of ring).
    {"tile128x64_stages7_ws", "pipeline stages", 128, 64, 7, true, false},
    // 3072 columns in 64 tiles of 48: M = 256 fills 128 SMs where 128x64 fills 96, with 28 KiB a
    // k-block (7 stages); a 64 x 96 wgmma covers both products.
    {"tile128x48_stages7_ws", "tile size vs SM count", 128, 48, 7, true, false},
    // Two producer warps issuing alternate k-blocks' loads, at the tiles whose k-blocks are
    // shortest (128x48, 128x64) and whose stages have the most boxes (64x64: five).
    {"tile128x48_stages7_ws_p2", "producer issue", 128, 48, 7, true, false, 1, 1, false, false, 0, 1, 2},
    {"tile128x64_stages7_ws_p2", "producer issue", 128, 64, 7, true, false, 1, 1, false, false, 0, 1, 2},
    {"tile64x64_stages4_ws_p2", "producer issue", 64, 64, 4, true, false, 1, 1, false, false, 0, 1, 2},
    // The tail of a small-M tile: its scales loaded before the k-loop, its C stored by TMA (128x48:
    // one unswizzled 96-byte-row box a warpgroup; 7 stages and the 12 KiB staging fit).
    {"tile128x48_stages7_ws_es", "epilogue tail", 128, 48, 7, true, false, 1, 1, false, false, 0, 1, 1, true},
    {"tile128x48_stages7_ws_tmastore", "TMA-store epilogue", 128, 48, 7, true, true},
    {"tile128x48_stages7_ws_tmastore_es", "epilogue tail", 128, 48, 7, true, true, 1, 1, false, false, 0, 1, 1, true},
    {"tile128x64_stages7_ws_es", "epilogue tail", 128, 64, 7, true, false, 1, 1, false, false, 0, 1, 1, true},
    {"tile128x48_stages7_ws_tmastore_es_lean", "kernel edges", 128, 48, 7, true, true, 1, 1, false, false, 0, 1, 1, true,
     true},
    // The same edges at 128x64, whose 128 tiles fill the SMs at M = 256 and N = 4096 (6 stages and
    // the 16 KiB staging fit; a seventh would not).
    {"tile128x64_stages6_ws_tmastore_es_lean", "kernel edges", 128, 64, 6, true, true, 1, 1, false, false, 0, 1, 1, true,
     true},
}};

}  // namespace overlap::dualgemm
