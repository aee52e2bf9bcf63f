#pragma once
// The one loop shape every variant here shares: per tile, load operands into a ring of
// shared-memory stages, compute on them, optionally do work that depends on the previous
// tile's result (a carried state), and store output. How that loop is scheduled onto warps is
// the hypothesis being modelled:
//   Prefetch (stages = 1: sequential load-then-compute; stages > 1: software pipelining by the
//   same warps, cp.async style), or WarpSpecialized (a producer warp fills the ring, consumer
//   warpgroups drain it, full/empty barriers between them; consumers either cooperate on every
//   tile or alternate tiles, pingpong style).
// build_tile_loop turns it into roles and barriers of a KernelSpec.
#include <vector>

#include "sim/kernel.hpp"

namespace overlap::sim {

struct TileLoop {
  int tiles = 1;
  std::vector<Step> loads;    // Copy steps of one tile (their kind/offset/barrier are set here)
  // WarpSpecialized: L2 prefetches the producer issues with each tile's loads (Issue steps that
  // arrive nowhere, with their own offsets: the tile they fetch for).
  std::vector<Step> prefetches;
  std::vector<Step> compute;  // work on this tile's data only
  std::vector<Step> carried;  // work that needs the previous tile's carried result
  std::vector<Step> output;   // per-output-tile work after the compute (epilogue math; every/phase)
  std::vector<Step> handoff;  // with an epilogue role: the consumers' copy of a finished tile to it
                              // (run once per output tile: the loop sets every/phase)
  std::vector<Step> stores;   // output writes of a tile (every/phase allowed)
  bool async_stores = false;  // TMA store / fire-and-forget: the role does not wait
  std::vector<Step> prologue, epilogue;  // per CTA, run by the (first) compute role
  // Barriers of the tile work's own (e.g. pipes a phase runs beside its warps' chain, waited for
  // at the phase's end); the steps name them from kTileLoopBarriers on.
  std::vector<BarrierSpec> own_barriers;
};

// The barriers build_tile_loop makes (full, empty, carry, hand-off full and empty) come first.
constexpr int kTileLoopBarriers = 5;

struct LoopSchedule {
  enum class Kind { Prefetch, WarpSpecialized } kind = Kind::Prefetch;
  int stages = 1;
  int compute_warps = 4;        // Prefetch: warps that load and compute
  int producer_warps = 1;       // WarpSpecialized
  int consumer_warpgroups = 1;  // WarpSpecialized
  bool consumers_alternate = false;  // pingpong: consumer g takes blocks g, g+G, ...
  int run_length = 1;                // tiles per block (a k-loop of one output tile)
  // WarpSpecialized: warpgroups of an epilogue role. Each output tile's `output` and `stores`
  // move to it; the consumers run `handoff` into a one-tile buffer and go on with the next
  // output tile (waiting only while the epilogue role still holds the buffer).
  int epilogue_warpgroups = 0;
  // WarpSpecialized, one consumer role: the consumers keep one MMA group in flight (CUTLASS's
  // sm90 mainloop, our dualgemm): they free stage n only after waiting for MMA n, which they do
  // after issuing tile n+1's MMAs, so stage n is held until tile n+1's data has arrived too,
  // and at most stages - 1 loads are in flight while they wait. Needs stages > 1.
  bool release_after_next_tile = false;
  // Prefetch: a tile's refill (the loads of tile + stages - 1) is issued once the tile's own data
  // has landed, not before waiting for it: a TMA kernel whose consumer issues the refills between
  // its wgmmas, the stage freed by the previous tile's.
  bool refill_after_wait = false;
  // WarpSpecialized: the producer loads tiles two at a time, waiting on an even tile for the
  // next tile's stage to be free as well (stages free in order), then loading both.
  bool paired_loads = false;
};

// Fills kernel.roles, kernel.barriers and kernel.tiles.
void build_tile_loop(KernelSpec& kernel, const TileLoop& loop, const LoopSchedule& schedule);

}  // namespace overlap::sim
