// gla pingpong_fused: cuda/gla/gla_pingpong_fused.cuh as the model sees it. The roles, their
// hand-offs and the ring depth are the kernel's; the work each role does per chunk is the
// kernel's compiled instruction mix (sim/models/generated/gla_pingpong_fused_sass.hpp, counted
// from its SASS by tools/sass_mix.py and checked against a fresh compile by a CPU test) and the
// GEMM shapes of its tiling (gla_tiling.hpp).
//
// Per chunk n (C = 64 steps, one CTA per (b, h, v-block) of block_v columns):
//   gating    wait full[n]; exp2 on the SFU, shared-memory traffic and the instruction stream's
//             issue slots on their pipes, beside the in-order pass of the role's two warps per
//             scheduler through the chunk's SASS, side by side on one issue slot and one SFU
//             quarter, with the profile's latencies (the `cycles` of the table), its shared
//             loads slowed while the wgmmas stream their operands (`cycles_loaded`, for the
//             wgmmas' share of the chunk) -> prepared[n]
//   state     wait prepared[n]; wgmma K x C x block_v; scale S -> empty[n]; wait s_free[n] (the
//             output has read S_n); S_{n+1} as bf16 to shared memory -> s_ready[n+1]
//   output    wait prepared[n]; wgmma q~ k~^T; mask; wait s_ready[n]; wgmma q~ S_n -> s_free[n];
//             wgmma A v -> empty[n]; wait empty[n] (the state too); TMA loads of chunk
//             n + stages -> full[n + stages]; o to shared memory, TMA store
// A role issues at most one instruction per scheduler per clock: its instruction count is
// charged to the FMA/ALU pipes as 32 lanes per instruction (the issue slots). Each mbarrier wait
// on another role adds the profile's sync latency.
//
// Few heads: each walk is split along T into segments (gla::PingpongFusedSegments, the
// launcher's rule, or a launch form's `segments`); a later segment walks the chunks before its
// own state-only (gating: the keys only, region gating.*@prefix; state: the same update; output:
// releases the stage; no q loaded). The model runs the last segment, whose state-only prefix is
// the longest (the split balances the segments by the kernel's ratio of a state-only to a full
// chunk); the kernel's HBM bytes are counted over all its CTAs (below).
//
// The kernel takes the anchored path in a chunk whose gates decay a channel by more than 2^-96;
// the model charges the single-anchor path, which the usual gates (logsigmoid/16: about 2^-5 per
// chunk) always take.
#include "sim/models/gla_pingpong_fused_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <tuple>

#include "cuda/gla/gla_tiling.hpp"
#include "sim/models/generated/gla_pingpong_fused_sass.hpp"
#include "sim/sass_mix.hpp"

namespace overlap::sim {
namespace {

enum Barrier { kFull, kPrepared, kEmpty, kSReady, kSFree, kGateSfu, kGateSmem, kGateIssue };

constexpr int kWarps = 4;  // state and output: one warpgroup each
constexpr double kLanes = 32.0 * kWarps;
constexpr int kGatingWarps = gla::PingpongFusedLayout::kGatingThreads / 32;

// The instantiation the launcher runs for (K, block_v), by its mangled template arguments: its
// stage count, and kSave false (the forward that saves no states for the backward).
SassCounts mix(int K, int block_v, std::initializer_list<std::string_view> regions) {
  const std::string part = fmt::format("gla_pingpong_fused_kernelILi{}ELi{}ELi{}ELb0E", K, block_v,
                                       gla::PingpongFusedLayout::max_stages(K, block_v));
  return sass_counts(generated::kGlaPingpongFusedSass, part, regions);
}

// The gating chain of `regions` (each region timed from its own start, so that the named
// barriers between them drain the pipeline as they do in the kernel), stretched by the other
// roles' warps on the same schedulers: the ratio of the role's steady-state time per chunk
// beside one state and one output warp to its time alone (the `beside` rows of the table).
SassCounts gating_mix(int K, int block_v, std::initializer_list<std::string_view> regions, const char* beside) {
  SassCounts g = mix(K, block_v, regions);
  const SassCounts with = mix(K, block_v, {beside});
  const std::string alone_row = fmt::format("{}.alone", beside);
  const SassCounts alone = mix(K, block_v, {alone_row});
  g.cycles *= with.cycles / alone.cycles;
  g.cycles_loaded *= with.cycles_loaded / alone.cycles_loaded;
  return g;
}

Step mbarrier_handoff(const HardwareProfile& hw) {
  return delay(hw.sync_latency_cycles * hw.cycle_ns(), "mbarrier hand-off");
}

// Steps run only for chunk indices in [from, to).
Step only(Step s, int from, int to) {
  s.from = from;
  s.to = to;
  return s;
}
std::vector<Step> only(std::vector<Step> steps, int from, int to) {
  for (Step& s : steps) s = only(std::move(s), from, to);
  return steps;
}

}  // namespace

KernelSpec gla_pingpong_fused_kernel(const HardwareProfile& hw, const GlaKernelShape& d) {
  const gla::Tiling t = gla::tiling_for(gla::Schedule::Pingpong, gla::StateCarry::Fused, int(d.K), int(d.V),
                                        d.B * d.H, int(hw.sm_count));
  const gla::PingpongFusedLayout layout{int(d.K), t.block_v, t.stages};
  const double C = t.chunk, K = double(d.K), bv = t.block_v;
  const std::int64_t v_blocks = d.V / t.block_v;
  const int chunks = int((d.T + t.chunk - 1) / t.chunk);
  using Segments = gla::PingpongFusedSegments;
  const std::int64_t walks = d.B * d.H * v_blocks;
  // The launcher's count, or a launch form's (at most the chunks), as cuda/gla/gla_pingpong_launch.cu.
  const int count = d.segments > 0 ? std::min(d.segments, chunks) : Segments::count_for(walks, int(hw.sm_count), chunks);
  const Segments split = Segments::split(chunks, count);
  const int P = split.bounds[split.count - 1];  // the simulated (last) segment's state-only chunks

  KernelSpec k;
  k.name = split.count > 1 ? fmt::format("gla_pingpong_fused ({} segments)", split.count) : "gla_pingpong_fused";
  k.ctas = walks * split.count;
  k.threads_per_cta = t.threads();
  // setmaxnreg hands the producer's registers to the other three: the whole register file.
  k.regs_per_cta = regs_for_warps(kGatingWarps, gla::PingpongFusedLayout::kGatingRegs) +
                   regs_for_warps(4, gla::PingpongFusedLayout::kStateRegs) +
                   regs_for_warps(4, gla::PingpongFusedLayout::kOutputRegs);
  k.smem_bytes = layout.bytes();
  k.tiles = chunks;
  k.barriers = {{"full", 4},   {"prepared", 1}, {"empty", 2},     {"S ready", 1},
                {"S free", 1}, {"gating exp2", 1}, {"gating smem", 1}, {"gating issue", 1}};

  // The TMA loads of the chunk at `offset` (issued by one output thread; no q for a state-only
  // chunk). q, k, g of a head are read by each of its v_blocks CTAs, which run together: one
  // HBM read. The segments after the first walk their state-only prefixes at one pace from the
  // same start, so they read a chunk at about the same time: one HBM read among them, the others
  // hit. Its owner reads it later, at its own (slower) pace: a second HBM read, unless the inputs
  // stay in L2 between the reads (HardwareProfile::stays_in_l2, the GEMMs' rule too). So a walk
  // reads the longest prefix (P chunks, the simulated CTA's) twice; the simulated CTA's prefix
  // loads are charged to HBM at 1/segments, the rest as L2 traffic, so that the kernel's HBM
  // bytes are the sum over its CTAs.
  const double shared = 1.0 / double(v_blocks);
  // A walk's chunk: q, k, g (shared by the head's v-blocks) and its v; a state-only chunk: no q.
  const double prefix = C * K * 2 / v_blocks + C * K * 4 / v_blocks + C * bv * 2;
  const double own = prefix + C * K * 2 / v_blocks;
  const double input_bytes = double(walks) * chunks * own;
  const bool inputs_stay_in_l2 = hw.stays_in_l2(input_bytes);
  const double prefix_share = P == 0 ? 1.0 : inputs_stay_in_l2 ? 0.0 : 1.0 / split.count;
  if (split.count > 1) {
    // The simulated segment is not typical of the CTAs: the kernel's bytes, counted over all of
    // them. Each walk reads every chunk once as its own and writes its o, and where the inputs do
    // not stay in L2 the longest prefix again.
    const double rereads = inputs_stay_in_l2 ? 0.0 : double(walks) * P * prefix;
    k.hbm_bytes = input_bytes + double(walks) * chunks * C * bv * 2 + rereads +
                  double(walks) * K * bv * 4 * ((d.h0 ? 1 : 0) + (d.hT ? 1 : 0));
  }
  auto loads_of_chunk = [&](int offset) {
    std::vector<Step> out;
    std::vector<Step> loads = {only(load(C * K * 2, shared, CopyEngine::Tma, "load q"), P, INT_MAX),
                               only(arrive(kFull, 0), 0, P)};  // no q: the full barrier counts four
    for (const auto& [bytes, hbm, label] : {std::tuple{C * K * 2, shared, "load k"},
                                            std::tuple{C * K * 4, shared, "load g"}, std::tuple{C * bv * 2, 1.0, "load v"}}) {
      loads.push_back(only(load(bytes, hbm * prefix_share, CopyEngine::Tma, label), 0, P));
      loads.push_back(only(load(bytes, hbm, CopyEngine::Tma, label), P, INT_MAX));
    }
    for (Step& s : loads) {
      if (s.kind == StepKind::Run) s.kind = StepKind::Issue;
      s.barrier = kFull;
      s.offset = offset;
      out.push_back(std::move(s));
    }
    return out;
  };

  const double flops_per_cycle = hw.bf16_flops_per_sm_clk();
  const double state_flops = 2 * K * C * bv;
  Role gate;
  gate.name = "gating";
  gate.warps = kGatingWarps;
  // One chunk's gating, for chunk indices [from, to): the pipes' share of the SM and one warp's
  // in-order latency chain run side by side; the chunk takes the longer of the two.
  auto gating_chunk = [&](const SassCounts& g, double tensor_flops, const char* what, int from, int to) {
    const double chain = loaded_chain(g, tensor_flops / flops_per_cycle);
    const double loaded_share = std::min(1.0, tensor_flops / flops_per_cycle / chain);
    std::vector<Step> steps = {wait(kFull, 0, "wait chunk")};
    for (Step& s : sass_pass(g, kGatingWarps, chain * hw.cycle_ns(), {kGateSfu, kGateSmem, kGateIssue}, what,
                             fmt::format("two warps' dependent chains on one scheduler (SASS, in order; shared loads "
                                         "slowed by the wgmmas {:.0f}% of the chunk)",
                                         100 * loaded_share)))
      steps.push_back(std::move(s));
    steps.push_back(arrive(kPrepared, 0));
    return only(std::move(steps), from, to);
  };
  // A state-only chunk: only the state update's wgmma streams beside it.
  gate.body = gating_chunk(gating_mix(int(d.K), t.block_v, {"gating.chunk@prefix", "gating.prefix@prefix"},
                                      "gating.state_only"),
                           state_flops,
                           "cumsum, k~", 0, P);
  const double tensor_flops = 2 * C * C * K + 2 * C * K * bv + 2 * C * C * bv + state_flops;
  for (Step& s : gating_chunk(gating_mix(int(d.K), t.block_v, {"gating.chunk", "gating.fast"}, "gating.full"),
                              tensor_flops,
                              "cumsum, q~ k~, q.k", P, INT_MAX))
    gate.body.push_back(std::move(s));

  const SassCounts scale = mix(int(d.K), t.block_v, {"state.scale"});
  const SassCounts update = mix(int(d.K), t.block_v, {"state.chunk"});
  const SassCounts publish = mix(int(d.K), t.block_v, {"state.store"});
  Role state;
  state.name = "state";
  state.warps = kWarps;
  state.prologue = {load(K * bv * 4, 1.0, CopyEngine::LdSt, "load h0"),
                    run(Unit::Smem, K * bv * 2, "S_0 to shared memory"), arrive(kSReady, 0)};
  if (!d.h0) state.prologue.erase(state.prologue.begin());
  state.body = {wait(kPrepared, 0, "wait gated chunk"),
                mbarrier_handoff(hw),
                mma(2 * K * C * bv, Precision::Bf16, TensorPath::Warpgroup, "S += k~^T v"),
                run(Unit::Fma, (scale.issue + update.issue) * kLanes, "decay S, issue"),
                arrive(kEmpty, 0),
                // S_{n+1} for the output's chunks only (n + 1 >= P); no wait before the first.
                only(wait(kSFree, 0, "wait S_n read"), P, INT_MAX),
                only(mbarrier_handoff(hw), P, INT_MAX)};
  for (Step s : {run(Unit::Fma, publish.issue * kLanes, "S to bf16 (issue)"),
                 run(Unit::Smem, publish.sts_bytes * kWarps, "S_n+1 to shared memory"), arrive(kSReady, 0)}) {
    s.offset = 1;  // S_{n+1}, none after the last chunk
    state.body.push_back(only(std::move(s), P, INT_MAX));
  }
  if (d.hT) state.epilogue.push_back(store(K * bv * 4, CopyEngine::LdSt, "store hT"));

  const SassCounts emit = mix(int(d.K), t.block_v, {"output.chunk", "output.fast"});
  const SassCounts staging = mix(int(d.K), t.block_v, {"output.store"});
  Role out;
  out.name = "output";
  out.warps = kWarps;
  Step store_o = store(C * bv * 2, CopyEngine::Tma, "store o");
  store_o.kind = StepKind::Issue;
  out.prologue = loads_of_chunk(0);
  for (int j = 1; j < t.stages; ++j) {
    const auto more = loads_of_chunk(j);
    out.prologue.insert(out.prologue.end(), more.begin(), more.end());
  }
  const SassCounts release = mix(int(d.K), t.block_v, {"output.prefix"});
  // A state-only chunk: wait for its load, release the stage.
  out.body = only(std::vector<Step>{wait(kFull, 0, "wait chunk"),
                                    run(Unit::Fma, release.issue * kLanes, "release (issue)"), arrive(kEmpty, 0)},
                  0, P);
  for (Step& s : only(std::vector<Step>{wait(kPrepared, 0, "wait gated chunk"),
                                        mbarrier_handoff(hw),
                                        mma(2 * C * C * K, Precision::Bf16, TensorPath::Warpgroup, "q~ k~^T"),
                                        run(Unit::Fma, emit.issue * kLanes, "mask, GEMM issue"),
                                        wait(kSReady, 0, "wait S_n"),
                                        mbarrier_handoff(hw),
                                        mma(2 * C * K * bv, Precision::Bf16, TensorPath::Warpgroup, "q~ S_n"),
                                        arrive(kSFree, 0),
                                        mma(2 * C * C * bv, Precision::Bf16, TensorPath::Warpgroup, "A v"),
                                        arrive(kEmpty, 0)},
                      P, INT_MAX))
    out.body.push_back(std::move(s));
  out.body.push_back(wait(kEmpty, 0, "stage free (state done)"));
  for (Step& s : loads_of_chunk(t.stages)) out.body.push_back(std::move(s));
  for (Step s : {run(Unit::Fma, staging.issue * kLanes, "o to bf16 (issue)"),
                 run(Unit::Smem, staging.sts_bytes * kWarps, "o staging"), store_o})
    out.body.push_back(only(std::move(s), P, INT_MAX));

  k.roles = {std::move(gate), std::move(state), std::move(out)};
  return k;
}

}  // namespace overlap::sim
