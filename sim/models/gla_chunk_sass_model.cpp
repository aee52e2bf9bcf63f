// Phases of one chunk, as the kernel's __syncthreads cut it (8 warps: output warp w and state
// warp w + 4 share scheduler w % 4):
//   wait for the chunk, gate cumsum (all warps)         all.wait + all.cumsum
//   keys decayed to the chunk's end (fused, states)     all.decay_keys.loop x passes
//   output warps' first half || diagonal blocks         first.out / first.state (side by side)
//     (states pass: the state warps store S_n)          state.save
//   output warps' A V || state update                   second.out / second.state, all.mid
//     (outputs pass: A V alone; states pass: the update alone)
//   next chunk's cp.async issue (all warps)             all.load
// A phase's exp2, shared-memory bytes, issue slots and mma.sync flops run on the SM's pipes
// beside the in-order chain of its slowest scheduler (tools/sass_timing.py: the two warps a
// scheduler holds share its issue slot, SFU quarter and shared-memory port; the chunk's code,
// 58-94 KiB, issues at the measured fetch-limited rate); the phase ends when all are done.
// Static counts are warp 3's and warp 7's, the busiest scheduler's (output warp w builds 2w
// off-diagonal tiles), so x4 schedulers is what takes as long as that scheduler.
#include "sim/models/gla_chunk_sass_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <span>
#include <string>

#include "sim/models/generated/gla_chunk_sass.hpp"
#include "sim/sass_mix.hpp"
#include "sim/tile_loop.hpp"

namespace overlap::sim::gla_chunk {
namespace {

constexpr int kThreads = 256;
constexpr double kSchedulers = 4;

}  // namespace

std::optional<Phases> sass_chunk_phases(const HardwareProfile& hw, int K, int stages, Pass pass, int chunk) {
  const std::span<const SassRegionMix> table(generated::kGlaChunkSass);
  const std::string part = fmt::format("gla_chunk_kernelILi{}ELi{}ELNS1_4PassE{}E", K, stages, int(pass));
  if (!has_sass_region(table, part, "all.cumsum")) return std::nullopt;
  const auto region = [&](const char* r) { return sass_counts(table, part, {r}); };
  Phases p;
  // `c`: counts per warp of `warps` warps (the SM's); `chain`: the slowest scheduler's cycles.
  const auto add = [&](std::vector<Step>& to, const SassCounts& c, double warps, double chain, const std::string& what) {
    const std::vector<Step> steps = sass_mma_phase(c, warps, chain * hw.cycle_ns(), what, p.barriers, kTileLoopBarriers);
    to.insert(to.end(), steps.begin(), steps.end());
  };
  SassCounts first = region("all.wait");
  first += region("all.cumsum");
  add(p.compute, first, 2 * kSchedulers, region("all.wait").cycles + region("all.cumsum").cycles, "gate cumsum");
  if (pass != Pass::Outputs) {
    // A rolled loop: per pass of its body; the passes from the exp2 a thread does (two a pair).
    const SassCounts body = region("all.decay_keys.loop");
    const double passes = 2.0 * chunk * K / 2 / kThreads / std::max(1.0, body.mufu);
    add(p.compute, body.times(passes), 2 * kSchedulers, body.cycles * passes, "decay keys");
  }
  if (pass == Pass::States) {
    add(p.compute, region("state.save"), kSchedulers, region("state.save").cycles, "store S_n");
  } else {
    SassCounts c = region("out.first");
    c += region("state.diagonal");
    add(p.compute, c, kSchedulers, std::max(region("first.out").cycles, region("first.state").cycles),
        "intra-chunk A, q S_n || diagonal blocks");
  }
  const double mid = region("all.mid").cycles;
  if (pass == Pass::Fused) {
    SassCounts c = region("out.second");
    c += region("state.update");
    add(p.carried, c, kSchedulers, mid + std::max(region("second.out").cycles, region("second.state").cycles),
        "A v || state update");
  } else if (pass == Pass::States) {
    add(p.carried, region("state.update"), kSchedulers, mid + region("state.update").cycles, "state update");
  } else {
    add(p.carried, region("out.second"), kSchedulers, mid + region("out.second").cycles, "A v");
  }
  add(p.carried, region("all.load"), 2 * kSchedulers, region("all.load").cycles, "next chunk's cp.async");
  return p;
}

}  // namespace overlap::sim::gla_chunk
