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
// The kernel takes the anchored path in a chunk whose gates decay a channel by more than 2^-96;
// the model charges the single-anchor path, which the usual gates (logsigmoid/16: about 2^-5 per
// chunk) always take.
#include "sim/models/gla_pingpong_fused_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cuda/gla/gla_tiling.hpp"
#include "sim/models/generated/gla_pingpong_fused_sass.hpp"
#include "sim/sass_mix.hpp"

namespace overlap::sim {
namespace {

enum Barrier { kFull, kPrepared, kEmpty, kSReady, kSFree, kGateSfu, kGateSmem, kGateIssue };

constexpr int kWarps = 4;  // state and output: one warpgroup each
constexpr double kLanes = 32.0 * kWarps;
constexpr int kGatingWarps = gla::PingpongFusedLayout::kGatingThreads / 32;

// The instantiation the launcher runs for (K, block_v), by its mangled template arguments.
SassCounts mix(int K, int block_v, std::initializer_list<std::string_view> regions) {
  const std::string part = fmt::format("gla_pingpong_fused_kernelILi{}ELi{}E", K, block_v);
  return sass_counts(generated::kGlaPingpongFusedSass, part, regions);
}

Step mbarrier_handoff(const HardwareProfile& hw) {
  return delay(hw.sync_latency_cycles * hw.cycle_ns(), "mbarrier hand-off");
}

}  // namespace

KernelSpec gla_pingpong_fused_kernel(const HardwareProfile& hw, const GlaPingpongFusedShape& d) {
  const gla::Tiling t = gla::tiling_for(gla::Schedule::Pingpong, gla::StateCarry::Fused, int(d.K), int(d.V),
                                        d.B * d.H, int(hw.sm_count));
  const gla::PingpongFusedLayout layout{int(d.K), t.block_v, t.stages};
  const double C = t.chunk, K = double(d.K), bv = t.block_v;
  const std::int64_t v_blocks = d.V / t.block_v;

  KernelSpec k;
  k.name = "gla_pingpong_fused";
  k.ctas = d.B * d.H * v_blocks;
  k.threads_per_cta = t.threads();
  // setmaxnreg hands the producer's registers to the other three: the whole register file.
  k.regs_per_cta = regs_for_warps(kGatingWarps, gla::PingpongFusedLayout::kGatingRegs) +
                   regs_for_warps(4, gla::PingpongFusedLayout::kStateRegs) +
                   regs_for_warps(4, gla::PingpongFusedLayout::kOutputRegs);
  k.smem_bytes = layout.bytes();
  k.tiles = int((d.T + t.chunk - 1) / t.chunk);
  k.barriers = {{"full", 4},   {"prepared", 1}, {"empty", 2},     {"S ready", 1},
                {"S free", 1}, {"gating exp2", 1}, {"gating smem", 1}, {"gating issue", 1}};

  // The TMA loads of the chunk at `offset` (issued by one output thread). q, k, g of a head are
  // read by each of its v_blocks CTAs, which run together: one HBM read.
  const double shared = 1.0 / double(v_blocks);
  auto loads_of_chunk = [&](int offset) {
    std::vector<Step> out;
    for (Step s : {load(C * K * 2, shared, CopyEngine::Tma, "load q"), load(C * K * 2, shared, CopyEngine::Tma, "load k"),
                   load(C * K * 4, shared, CopyEngine::Tma, "load g"), load(C * bv * 2, 1.0, CopyEngine::Tma, "load v")}) {
      s.kind = StepKind::Issue;
      s.barrier = kFull;
      s.offset = offset;
      out.push_back(std::move(s));
    }
    return out;
  };

  const SassCounts gating = mix(int(d.K), t.block_v, {"gating.chunk", "gating.fast"});
  const double gating_lanes = 32.0 * kGatingWarps;
  // While the state and output warpgroups' wgmmas stream their shared-memory operands, the gating
  // warps' shared loads are slower (lds_latency_beside_wgmma_cycles, measured): their chain takes
  // cycles_loaded instead of cycles for that share f of the chunk. f = tensor time per chunk /
  // chunk time, and where the gating sets the pace the chunk time is the chain itself:
  // c = c0 + (tensor / c) (c1 - c0), solved for c.
  const double tensor_flops = 2 * C * C * K + 2 * C * K * bv + 2 * C * C * bv + 2 * K * C * bv;
  const double tensor_cycles = tensor_flops / (hw.tensor_bf16_TFLOPs * 1e12 / hw.sm_count * hw.cycle_ns() * 1e-9);
  const double c0 = gating.cycles, slowdown = std::max(0.0, gating.cycles_loaded - gating.cycles);
  const double chain = 0.5 * (c0 + std::sqrt(c0 * c0 + 4.0 * tensor_cycles * slowdown));
  const double loaded_share = std::min(1.0, tensor_cycles / chain);
  Role gate;
  gate.name = "gating";
  gate.warps = kGatingWarps;
  // The pipes' share of the SM and one warp's in-order latency chain run side by side: the
  // chunk takes the longer of the two.
  gate.body = {wait(kFull, 0, "wait chunk"),
               issue(Unit::Sfu, gating.mufu * gating_lanes, kGateSfu, 0, "exp2"),
               issue(Unit::Smem, (gating.lds_bytes + gating.sts_bytes) * kGatingWarps, kGateSmem, 0, "operands in place"),
               issue(Unit::Fma, gating.issue * gating_lanes, kGateIssue, 0, "cumsum, q~ k~, q.k (issue)"),
               delay(chain * hw.cycle_ns(),
                     fmt::format("two warps' dependent chains on one scheduler (SASS, in order; shared loads "
                                 "slowed by the wgmmas {:.0f}% of the chunk)",
                                 100 * loaded_share)),
               wait(kGateSfu, 0, "exp2 done"),
               wait(kGateSmem, 0, "stores done"),
               wait(kGateIssue, 0, "issued"),
               arrive(kPrepared, 0)};

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
                wait(kSFree, 0, "wait S_n read"),
                mbarrier_handoff(hw),
                run(Unit::Fma, publish.issue * kLanes, "S to bf16 (issue)"),
                run(Unit::Smem, publish.sts_bytes * kWarps, "S_n+1 to shared memory"),
                arrive(kSReady, 1)};
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
  out.body = {wait(kPrepared, 0, "wait gated chunk"),
              mbarrier_handoff(hw),
              mma(2 * C * C * K, Precision::Bf16, TensorPath::Warpgroup, "q~ k~^T"),
              run(Unit::Fma, emit.issue * kLanes, "mask, GEMM issue"),
              wait(kSReady, 0, "wait S_n"),
              mbarrier_handoff(hw),
              mma(2 * C * K * bv, Precision::Bf16, TensorPath::Warpgroup, "q~ S_n"),
              arrive(kSFree, 0),
              mma(2 * C * C * bv, Precision::Bf16, TensorPath::Warpgroup, "A v"),
              arrive(kEmpty, 0),
              wait(kEmpty, 0, "stage free (state done)")};
  for (Step& s : loads_of_chunk(t.stages)) out.body.push_back(std::move(s));
  for (Step s : {run(Unit::Fma, staging.issue * kLanes, "o to bf16 (issue)"),
              run(Unit::Smem, staging.sts_bytes * kWarps, "o staging"), store_o})
    out.body.push_back(std::move(s));

  k.roles = {std::move(gate), std::move(state), std::move(out)};
  return k;
}

}  // namespace overlap::sim
