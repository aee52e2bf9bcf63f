// gla pingpong_materialized: cuda/gla/gla_pingpong_kernel.cuh's two kernels as the model sees
// them. The roles, the ring and how it is shared are the kernels'; the work a consumer does per
// chunk is the kernel's compiled instruction mix (sim/models/generated/gla_pingpong_paired_sass.hpp,
// counted from its SASS by tools/sass_mix.py and checked against a fresh compile by a CPU test;
// gla_pingpong_paired_two_sass.hpp has the same counts, its chains timed with two warps a
// scheduler, as a paired CTA runs them).
//
// Paired form: a CTA takes one or two work units (gla::pingpong_units_per_cta: two where the
// units outnumber the SMs); consumer warpgroup c walks unit c's chunks with its own share of the
// ring (stages / units), so at K = 128 (two stages) a paired consumer has one stage and waits
// for each chunk's loads after releasing the last. A work unit is one (b, h, v-block) slice in
// the states kernel (every chunk, S in registers) and a slice's group of chunks_per_cta chunks
// in the outputs kernel (S_n loaded with each chunk).
//
// Per chunk, consumer c:   wait full_c[n]; [states: S_n to the stage, one TMA store, not waited for]
//                          its SASS: exp2 on the SFU, shared-memory bytes and issue slots on
//                          their pipes, beside one warp's in-order pass through the chunk's
//                          instructions (one warp a scheduler; shared loads slowed while the
//                          other consumer's wgmmas stream, for their share of the chunk; where
//                          the CTA pairs units, the two consumers' warps of a scheduler share
//                          its issue slot and SFU quarter)
//                          its wgmmas and mma.syncs, waited for in line -> empty_c[n]
//                          [outputs: o to global from registers, not waited for]
// Producer (one thread):   per chunk index, for each consumer in turn: wait empty_c[n - its
//                          stages]; TMA loads of chunk n -> full_c[n]
// The loops ptxas keeps rolled at K = 128 (`.loops` regions) are charged per pass times the
// passes the chunk's work needs, from the work one pass does.
#include "sim/models/gla_pingpong_paired_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <span>
#include <string>

#include "cuda/gla/gla_tiling.hpp"
#include "sim/models/generated/gla_pingpong_paired_sass.hpp"
#include "sim/models/generated/gla_pingpong_paired_two_sass.hpp"
#include "sim/sass_mix.hpp"

namespace overlap::sim {
namespace {

enum class Pass { States, Outputs };

// Barriers of consumer c: full, empty, and its three pipe completions.
constexpr int kPerConsumer = 5;
int full(int c) { return kPerConsumer * c; }
int empty(int c) { return kPerConsumer * c + 1; }
int sfu_done(int c) { return kPerConsumer * c + 2; }
int smem_done(int c) { return kPerConsumer * c + 3; }
int issue_done(int c) { return kPerConsumer * c + 4; }

constexpr double kWarps = 4;  // one consumer warpgroup

// One consumer's per-chunk instruction mix at head dim K: every `paired.*` region of the chunk's
// straight code, plus each rolled loop's body times its passes (the chunk's work over the work of
// one pass). `paired`: the chains as two consumers' warps run them side by side on a scheduler.
SassCounts chunk_mix(int K, Pass pass, double C, bool paired) {
  const std::string part = fmt::format("gla_pingpong_kernelILi{}ELNS1_4PassE{}E", K, pass == Pass::States ? 0 : 1);
  const std::span<const SassRegionMix> table =
      paired ? std::span<const SassRegionMix>(generated::kGlaPingpongPairedTwoSass)
             : std::span<const SassRegionMix>(generated::kGlaPingpongPairedSass);
  SassCounts mix = sass_counts(table, part, {"paired.chunk"});
  for (const SassRegionMix& row : table)
    if (row.function.find(part) != std::string_view::npos && row.region.starts_with("paired.") &&
        row.region != "paired.chunk" && !row.region.ends_with(".loops"))
      mix += row.counts;
  const auto add_loop = [&](const char* region, double total, double SassCounts::*per_pass) {
    if (!has_sass_region(table, part, region)) return;
    const SassCounts body = sass_counts(table, part, {region});
    mix += body.times(total / std::max(1.0, body.*per_pass));
  };
  add_loop("paired.cumsum.loops", C, &SassCounts::fp32);                   // one FFMA a row of its column
  add_loop("paired.decay_keys.loops", C * K / 128.0, &SassCounts::mufu);   // two exp2 a key pair
  if (pass == Pass::Outputs)
    add_loop("paired.diagonal_levels.loops", 4.0 * K / 16, &SassCounts::hmma);  // 4 levels x K/16 steps
  return mix;
}

KernelSpec pass_kernel(const HardwareProfile& hw, const GlaKernelShape& d, Pass pass) {
  const gla::Tiling t = gla::tiling_for(gla::Schedule::Pingpong, gla::StateCarry::Materialized, int(d.K), int(d.V));
  const double C = t.chunk, K = double(d.K), bv = t.block_v;
  const std::int64_t v_blocks = d.V / t.block_v, slices = d.B * d.H * v_blocks;
  const std::int64_t chunks = (d.T + t.chunk - 1) / t.chunk;
  const std::int64_t groups = pass == Pass::Outputs ? (chunks + t.chunks_per_cta - 1) / t.chunks_per_cta : 1;
  const std::int64_t units = slices * groups;
  const int per_cta = gla::pingpong_units_per_cta(units, int(hw.sm_count));
  const int stages_each = t.stages / per_cta;

  KernelSpec k;
  k.name = fmt::format("gla_pingpong_{} ({} unit{} a CTA, {} stage{} each)", pass == Pass::States ? "states" : "output",
                       per_cta, per_cta > 1 ? "s" : "", stages_each, stages_each > 1 ? "s" : "");
  k.ctas = (units + per_cta - 1) / per_cta;
  k.threads_per_cta = t.threads();
  k.regs_per_cta = regs_for_warps(4 * t.consumer_warpgroups, t.max_regs_per_thread) +
                   regs_for_warps(t.producer_warps, gla::kPingpongProducerRegs);
  k.smem_bytes = std::int64_t(t.smem_bytes(int(d.K), int(d.V)));
  k.tiles = int(pass == Pass::States ? chunks : std::min<std::int64_t>(t.chunks_per_cta, chunks));

  // A chunk's loads (q, k, g of a head are read by each of its v_blocks slices, which run
  // together: one HBM read).
  const double shared = 1.0 / double(v_blocks);
  std::vector<Step> loads;
  if (pass == Pass::Outputs) loads.push_back(load(C * K * 2, shared, CopyEngine::Tma, "load q"));
  loads.push_back(load(C * K * 2, shared, CopyEngine::Tma, "load k"));
  loads.push_back(load(C * bv * 2, 1.0, CopyEngine::Tma, "load v"));
  loads.push_back(load(C * K * 4, shared, CopyEngine::Tma, "load g"));
  if (pass == Pass::Outputs) loads.push_back(load(K * bv * 2, 1.0, CopyEngine::Tma, "load S_n"));

  for (int c = 0; c < per_cta; ++c) {
    k.barriers.push_back({fmt::format("full{}", c), int(loads.size())});
    k.barriers.push_back({fmt::format("empty{}", c), 1});
    k.barriers.push_back({fmt::format("exp2 {}", c), 1});
    k.barriers.push_back({fmt::format("smem {}", c), 1});
    k.barriers.push_back({fmt::format("issue {}", c), 1});
  }

  Role producer;
  producer.name = "producer";
  producer.warps = 1;
  for (int c = 0; c < per_cta; ++c) {
    producer.body.push_back(wait(empty(c), -stages_each, fmt::format("wait consumer {}'s free stage", c)));
    for (const Step& s : loads) producer.body.push_back(issued(s, full(c), 0));
  }
  k.roles.push_back(std::move(producer));

  const SassCounts mix = chunk_mix(int(d.K), pass, C, per_cta > 1);
  const double wgmma_flops = mix.hgmma_flops, mma_sync_flops = mix.hmma_flops * kWarps;
  // The other consumer's wgmmas stream beside this one's shared loads for their share of its chunk.
  const double beside = per_cta > 1 ? wgmma_flops / hw.bf16_flops_per_sm_clk() : 0.0;
  const double chain = loaded_chain(mix, beside);
  for (int c = 0; c < per_cta; ++c) {
    Role r;
    r.name = fmt::format("consumer{}", c);
    r.warps = 4;
    if (pass == Pass::States && d.h0) r.prologue.push_back(load(K * bv * 4, 1.0, CopyEngine::LdSt, "load h0"));
    r.body.push_back(wait(full(c), 0, "wait chunk"));
    if (pass == Pass::States) r.body.push_back(issued(store(K * bv * 2, CopyEngine::Tma, "store S_n (TMA)"), -1, 0));
    for (Step& s : sass_pass(mix, kWarps, chain * hw.cycle_ns(), {sfu_done(c), smem_done(c), issue_done(c)}, "chunk",
                             per_cta > 1 ? "two consumers' warps a scheduler, side by side (SASS, in order; shared "
                                           "loads beside the other's wgmmas)"
                                         : "one warp's chain a scheduler (SASS, in order)"))
      r.body.push_back(std::move(s));
    r.body.push_back(mma(wgmma_flops, Precision::Bf16, TensorPath::Warpgroup, "wgmma (waited)"));
    if (mma_sync_flops > 0) r.body.push_back(mma(mma_sync_flops, Precision::Bf16, TensorPath::WarpMma, "diagonal blocks"));
    r.body.push_back(arrive(empty(c), 0));
    if (pass == Pass::Outputs) r.body.push_back(issued(store(C * bv * 2, CopyEngine::LdSt, "store o"), -1, 0));
    if (pass == Pass::States && d.hT) r.epilogue.push_back(store(K * bv * 4, CopyEngine::LdSt, "store hT"));
    k.roles.push_back(std::move(r));
  }
  return k;
}

}  // namespace

std::vector<KernelSpec> gla_pingpong_paired_kernels(const HardwareProfile& hw, const GlaKernelShape& d) {
  return {pass_kernel(hw, d, Pass::States), pass_kernel(hw, d, Pass::Outputs)};
}

}  // namespace overlap::sim
