#include "sim/tile_loop.hpp"

#include <algorithm>
#include <climits>
#include <string>

#include "core/error.hpp"

namespace overlap::sim {
namespace {

enum Barrier { kFull = 0, kEmpty = 1, kCarry = 2, kHandoffFull = 3, kHandoffEmpty = 4 };

void append(std::vector<Step>& to, const std::vector<Step>& from) { to.insert(to.end(), from.begin(), from.end()); }

// The loads of the tile at `offset`, each arriving on full[tile] when its data has landed.
void append_loads(std::vector<Step>& to, const std::vector<Step>& loads, int offset) {
  for (const Step& s : loads) to.push_back(issued(s, kFull, offset));
}

void append_stores(std::vector<Step>& to, const TileLoop& loop) {
  for (Step s : loop.stores) {
    s.kind = loop.async_stores ? StepKind::Issue : StepKind::Run;
    to.push_back(std::move(s));
  }
}

// Step `s` on the last tile of each output tile's k-loop only.
Step at_output_tile_end(Step s, int run_length) {
  s.every = run_length;
  s.phase = run_length - 1;
  return s;
}

// Compute, then the carried part in tile order (a chain across consumers that alternate).
void append_tile_work(std::vector<Step>& to, const TileLoop& loop, bool chain_carry) {
  append(to, loop.compute);
  append(to, loop.output);
  if (loop.carried.empty()) return;
  if (chain_carry) to.push_back(wait(kCarry, -1, "wait carried state"));
  append(to, loop.carried);
  if (chain_carry) to.push_back(arrive(kCarry, 0));
}

}  // namespace

void build_tile_loop(KernelSpec& k, const TileLoop& loop, const LoopSchedule& sch) {
  OVERLAP_REQUIRE(sch.stages >= 1, "kernel '{}': stages must be at least 1", k.name);
  OVERLAP_REQUIRE(!loop.loads.empty(), "kernel '{}': a tile loop needs at least one load", k.name);
  OVERLAP_REQUIRE(sch.epilogue_warpgroups == 0 || sch.kind == LoopSchedule::Kind::WarpSpecialized,
                  "kernel '{}': an epilogue role needs the warp-specialized schedule", k.name);
  OVERLAP_REQUIRE(!sch.release_after_next_tile || sch.stages > 1,
                  "kernel '{}': holding a stage until the next tile is in needs two stages or more", k.name);
  OVERLAP_REQUIRE(loop.prefetches.empty() || sch.kind == LoopSchedule::Kind::WarpSpecialized,
                  "kernel '{}': L2 prefetches are issued by a producer role (the warp-specialized schedule)", k.name);
  OVERLAP_REQUIRE(loop.handoff.empty() || sch.epilogue_warpgroups > 0,
                  "kernel '{}': hand-off steps need an epilogue role (epilogue_warpgroups > 0)", k.name);
  // A tile's full barrier counts the loads that run for it (loads may be limited to a range of
  // tiles, e.g. the ring's first fill, by from/to): the same number for every tile.
  const auto loads_for = [&](int tile) {
    return int(std::count_if(loop.loads.begin(), loop.loads.end(),
                             [&](const Step& s) { return tile >= s.from && tile < s.to; }));
  };
  const int arrivals = loads_for(0);
  for (const Step& s : loop.loads)
    for (int tile : {s.from, s.to})
      if (tile > 0 && tile < INT_MAX)
        OVERLAP_REQUIRE(loads_for(tile) == arrivals, "kernel '{}': tile {} has {} loads, tile 0 has {}", k.name, tile,
                        loads_for(tile), arrivals);
  k.tiles = loop.tiles;
  k.roles.clear();
  k.barriers = {{"full", arrivals}, {"empty", 1}, {"carry", 1}, {"handoff full", 1}, {"handoff empty", 1}};
  static_assert(kHandoffEmpty + 1 == kTileLoopBarriers);
  k.barriers.insert(k.barriers.end(), loop.own_barriers.begin(), loop.own_barriers.end());

  if (sch.kind == LoopSchedule::Kind::Prefetch) {
    Role r;
    r.name = sch.stages == 1 ? "warps" : "warps (prefetching)";
    r.warps = sch.compute_warps;
    r.run_length = sch.run_length;
    r.prologue = loop.prologue;
    // Fill stages-1 slots ahead; each iteration refills the slot freed by the previous tile.
    for (int j = 0; j + 1 < sch.stages; ++j) append_loads(r.prologue, loop.loads, j);
    if (!sch.refill_after_wait) append_loads(r.body, loop.loads, sch.stages - 1);
    r.body.push_back(wait(kFull, 0, "wait tile"));
    if (sch.refill_after_wait) append_loads(r.body, loop.loads, sch.stages - 1);
    append_tile_work(r.body, loop, false);
    append_stores(r.body, loop);
    r.epilogue = loop.epilogue;
    k.roles.push_back(std::move(r));
    return;
  }

  Role producer;
  producer.name = "producer";
  producer.warps = sch.producer_warps;
  if (sch.paired_loads) {
    OVERLAP_REQUIRE(sch.stages > 1, "kernel '{}': paired loads need two stages or more", k.name);
    Step next = wait(kEmpty, -sch.stages + 1, "wait the next stage free too (paired loads)");
    next.every = 2;
    next.phase = ((1 - sch.stages) % 2 + 2) % 2;  // the step's index is the tile's minus stages - 1: even tiles
    producer.body.push_back(next);
  }
  producer.body.push_back(wait(kEmpty, -sch.stages, "wait free stage"));
  append_loads(producer.body, loop.loads, 0);
  append(producer.body, loop.prefetches);
  k.roles.push_back(std::move(producer));

  const bool handoff = sch.epilogue_warpgroups > 0;
  OVERLAP_REQUIRE(!handoff || (!sch.consumers_alternate && loop.carried.empty()),
                  "kernel '{}': an epilogue role goes with one cooperative consumer role", k.name);
  const int groups = sch.consumers_alternate ? sch.consumer_warpgroups : 1;
  for (int g = 0; g < groups; ++g) {
    Role c;
    c.name = groups == 1 ? "consumers" : "consumer" + std::to_string(g);
    c.warps = sch.consumers_alternate ? 4 : 4 * sch.consumer_warpgroups;
    c.first_block = g;
    c.block_stride = groups;
    c.run_length = sch.run_length;
    if (g == 0) c.prologue = loop.prologue;
    c.body.push_back(wait(kFull, 0, "wait tile"));
    // Stage n is freed once tile n+1 is in (release_after_next_tile; a wait past the last
    // tile passes).
    const auto hold_until_next = [&](std::vector<Step>& body) {
      if (sch.release_after_next_tile && groups == 1) body.push_back(wait(kFull, 1, "wait next tile (MMA group in flight)"));
    };
    if (handoff) {
      append(c.body, loop.compute);
      hold_until_next(c.body);
      c.body.push_back(arrive(kEmpty, 0));
      // The previous output tile's buffer must be free (offset: one k-loop back).
      c.body.push_back(at_output_tile_end(wait(kHandoffEmpty, -sch.run_length, "wait hand-off buffer"), sch.run_length));
      for (const Step& s : loop.handoff) c.body.push_back(at_output_tile_end(s, sch.run_length));
      c.body.push_back(at_output_tile_end(arrive(kHandoffFull, 0), sch.run_length));
    } else {
      append_tile_work(c.body, loop, groups > 1);
      hold_until_next(c.body);
      c.body.push_back(arrive(kEmpty, 0));
      append_stores(c.body, loop);
    }
    if (g == 0) {
      if (groups > 1 && !loop.carried.empty()) c.epilogue.push_back(wait(kCarry, -1, "wait last tile"));
      append(c.epilogue, loop.epilogue);
    }
    k.roles.push_back(std::move(c));
  }
  if (handoff) {
    Role e;
    e.name = "epilogue";
    e.warps = 4 * sch.epilogue_warpgroups;
    e.run_length = sch.run_length;
    e.body.push_back(at_output_tile_end(wait(kHandoffFull, 0, "wait hand-off"), sch.run_length));
    append(e.body, loop.output);
    append_stores(e.body, loop);
    e.body.push_back(at_output_tile_end(arrive(kHandoffEmpty, 0), sch.run_length));
    k.roles.push_back(std::move(e));
  }
}

}  // namespace overlap::sim
