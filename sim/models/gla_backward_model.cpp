// gla_backward (the gradients of gla, issue 18): the `materialized` variant, our three passes
// (cuda/gla/gla_backward_common.cuh), `saved_states`, passes 2 and 3 on the S_n the forward
// saved (the forward's extra writes: gla_saved_states_bytes), and `saved_states_ws`, the same
// with pass 3 warp-specialized:
//   1. and 2. two walks over the chunks (gla_state_walk_kernel.cuh), per (b, h, 64 rows of the
//      state), carrying S forwards and dS backwards in registers: every S_n and dS_n in bf16;
//   3. chunk grads (gla_chunk_grad_kernel.cuh): one CTA per (b, h, chunk) forms dq, dk, dv, dg.
// Work per chunk is counted per warp from the kernels' source (gla_warp_work.hpp), as the
// forward's mma.sync kernels are; shared memory per CTA from the kernels' own layouts
// (cuda/gla/gla_backward_tiling.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <span>

#include "core/error.hpp"
#include "cuda/gla/gla_backward_tiling.hpp"
#include "sim/models/gla_model.hpp"
#include "sim/models/gla_warp_work.hpp"
#include "sim/models/generated/gla_chunk_grad_sass.hpp"
#include "sim/models/generated/gla_state_walk_sass.hpp"
#include "sim/sass_mix.hpp"
#include "sim/occupancy.hpp"
#include "sim/tile_loop.hpp"
#include "sim/variants.hpp"

namespace overlap::sim {
namespace {

using namespace gla_work;
using cuda::gla_backward_kernel::kChunk;
using cuda::gla_backward_kernel::kWalkRows;
namespace tiling = cuda::gla_backward_kernel;

// Registers per thread of the compiled kernels (ptxas -v, sm_90a, CUDA 13.0).
int chunk_grad_regs(std::int64_t K, std::int64_t V) {
  if (K == 128) return V == 128 ? 255 : 216;
  return V == 128 ? 176 : 128;  // <64, 64>: launch bounds ask for two CTAs an SM
}
int walk_regs(std::int64_t K, std::int64_t V, bool forward) {
  if (V == 64) return 96;
  return forward ? 168 : K == 128 ? 164 : 161;
}

GlaKernelShape dims(const ShapeArgs& s) {
  return {shape_size(s, "gla_backward", "B"), shape_size(s, "gla_backward", "T"), shape_size(s, "gla_backward", "H"),
          shape_size(s, "gla_backward", "K"), shape_size(s, "gla_backward", "V"), shape_value(s, "h0", 0) != 0,
          shape_value(s, "hT", 0) != 0};
}

CopyEngine engine_on(const HardwareProfile& hw) {
  return hw.copy_engine == CopyEngine::Tma ? CopyEngine::CpAsync : hw.copy_engine;
}

// The mangled name of the walk instantiation (cuda/gla/gla_state_walk_kernel.cuh: <K, V, Walk>,
// Walk::States = 0, Walk::StateGrads = 1) in the SASS table.
std::string walk_function(const GlaKernelShape& d, bool forward) {
  return fmt::format("gla_state_walk_kernelILi{}ELi{}ELNS1_4WalkE{}E", d.K, d.V, forward ? 0 : 1);
}

// Pass 1 (forward: S_n from k, v) or pass 2 (backward: dS_n from q, do), as the kernel runs it:
// a CTA of 4 warps (one a scheduler; two CTAs an SM share them) owns 64 rows and all V columns
// of one head's state and walks the chunks, the next kWalkStages - 1 of them loading (cp.async)
// while it works on one. A chunk's work is the kernel's compiled SASS for it (its `walk.*`
// regions, sim/models/generated/gla_state_walk_sass.hpp, checked against a fresh compile by a
// CPU test): the instruction stream on the issue slots, MUFU, shared memory and mma.sync on
// their pipes, beside one warp's in-order pass through it with the profile's latencies (its CTA
// barriers included, at bar_sync_latency_cycles); the chunk takes the longer. The state goes out
// without waiting.
KernelSpec state_walk_kernel(const HardwareProfile& hw, const GlaKernelShape& d, bool forward) {
  const double C = kChunk, B = kWalkRows, V = double(d.V);
  const double k_blocks = double(d.K / kWalkRows);
  const CopyEngine engine = engine_on(hw);
  KernelSpec k;
  k.name = forward ? "gla_backward_states" : "gla_backward_state_grads";
  k.ctas = d.B * d.H * (d.K / kWalkRows);
  k.threads_per_cta = tiling::kWalkThreads;
  k.regs_per_cta = regs_for_warps(tiling::kWalkWarps, walk_regs(d.K, d.V, forward));
  k.smem_bytes = d.V == 64 ? tiling::WalkLayout<64>::kBytes : tiling::WalkLayout<128>::kBytes;
  k.tiles = int((d.T + kChunk - 1) / kChunk);
  const int stages = d.V == 64 ? tiling::kWalkStages<64> : tiling::kWalkStages<128>;
  enum { kFull = 0, kIssue = 1, kSfu = 2, kSmem = 3, kTensor = 4 };
  // x and g columns are read by the one CTA of their rows, y by the K/64 CTAs of a head, all
  // running together: one HBM read each.
  const std::vector<Step> loads = {load(C * B * 2, 1.0, engine, forward ? "load k" : "load q"),
                                   load(C * V * 2, 1.0 / k_blocks, engine, forward ? "load v" : "load do"),
                                   load(C * B * 4, 1.0, engine, "load g")};
  k.barriers = {{"full", int(loads.size())}, {"issued", 1}, {"exp2", 1}, {"shared memory", 1}, {"mma", 1}};
  const auto issue_loads = [&](std::vector<Step>& to, int offset) {
    for (const Step& s : loads) to.push_back(issued(s, kFull, offset));
  };
  const SassCounts c = sass_counts(generated::kGlaStateWalkSass, walk_function(d, forward),
                                   {"walk.chunk", "walk.state_out", "walk.decay", "walk.update", "walk.load"});
  const double warps = tiling::kWalkWarps;

  Role r;
  r.name = "warps (prefetching)";
  r.warps = tiling::kWalkWarps;
  if (forward ? d.h0 : d.hT) r.prologue.push_back(load(B * V * 4, 1.0, engine, forward ? "load h0" : "load dhT"));
  for (int j = 0; j + 1 < stages; ++j) issue_loads(r.prologue, j);
  issue_loads(r.body, stages - 1);
  r.body.push_back(wait(kFull, 0, "wait chunk"));
  r.body.push_back(issued(mma(c.hmma_flops * warps, Precision::Bf16, TensorPath::WarpMma, "state update (mma.sync)"),
                          kTensor, 0));
  for (Step& s : sass_pass(c, warps, c.cycles * hw.cycle_ns(), {kSfu, kSmem, kIssue}, "chunk",
                           "one warp's in-order pass through the chunk (SASS)"))
    r.body.push_back(std::move(s));
  r.body.push_back(wait(kTensor, 0, "mma done"));
  // Not waited for: a bulk copy (TMA) per row from shared memory at V = 128, else from registers.
  const CopyEngine out_engine = d.V == 128 && hw.copy_engine == CopyEngine::Tma ? CopyEngine::Tma : engine;
  r.body.push_back(issued(store(B * V * 2, out_engine, forward ? "store S_n" : "store dS_n"), -1, 0));
  if (!forward && d.h0) r.epilogue.push_back(store(B * V * 4, engine, "store dh0"));
  k.roles.push_back(std::move(r));
  return k;
}

// Phases both paths of pass 3 share: the gate cumsum first; the dg sums and dv's A^T do last.
void cumsum_phase(std::vector<Step>& steps, double K) {
  std::vector<WarpWork> w(8);
  for (auto& x : w) x.smem = 2.0 * kChunk * K * 4 / 8, x.alu = 2.0 * kChunk * K / 32 / 8;
  add_phase(steps, w, true, TensorPath::WarpMma, "gate cumsum");
}
void dg_phase(std::vector<Step>& steps, double K) {
  // q dq - k dk (q, k read, written once by the warp that holds both), the suffix sums down
  // each column, dg out.
  std::vector<WarpWork> w(8);
  for (auto& x : w) {
    x.smem += kChunk * K * (2 + 2 + 4 + 4) / 8;
    x.alu += 4 * kChunk * K / 32 / 8;
  }
  add_phase(steps, w, true, TensorPath::WarpMma, "dg");
}
// dv for 16 rows x V/2 columns (warp i): A^T do over the key sub-chunks at or below the diagonal.
void dv_from_A(WarpWork& x, int i, double V) {
  const double below = 4 - i % 4;
  x.smem += below * (1 + V / 32) * kLdsm4Bytes;
  x.mma += below * V / 16;
  x.alu += V / 16 * 4;
}

// The phases of pass 3's single-anchor path (gla_chunk_grad_single_anchor.cuh), the path every
// chunk takes unless a channel decays by more than 2^-96 over it. The shape says nothing of the
// gates, so the model times this path, which the usual gates take; chunks of gates strong
// enough for the anchored path (gla_chunk_grad_anchored.cuh) run slower than predicted.
std::vector<Step> single_anchor_chunk_phases(const HardwareProfile& hw, double K, double V) {
  const int warps = tiling::kChunkGradWarps;
  const double C = kChunk, kc = K / 16, vc = V / 16, elems = K / 8 * 4;
  std::vector<Step> steps;
  cumsum_phase(steps, K);
  {  // q <- q 2^b, k <- k 2^-b in place, kF = k 2^-b 2^{b_last} and b <- 2^b: per lane C K / 512
     // steps of 4 MUFU, 15 FP32 (unpack, multiply, pack), LDS.64 + 2 LDS.32 + 3 STS.32 + STS.64.
    std::vector<WarpWork> w(warps);
    for (auto& x : w) {
      // <q_t, k_t> first: 8 lanes a row, 2 rows a lane, K/64 LDS.128 pairs a row (8 unpacks,
      // 8 FMA each), 3 shuffles and adds a row.
      x.smem += 2 * K / 64 * 2 * 4 * kLds32Bytes;
      x.alu += 2 * (K / 64 * 16 + 6);
      const double steps_per_lane = C * K / 2 / (32 * warps);
      x.mufu += 4 * steps_per_lane;
      x.alu += 15 * steps_per_lane;
      x.smem += steps_per_lane * (2 * 256 + 5 * kLds32Bytes);
    }
    add_phase(steps, w, true, TensorPath::WarpMma, "decay q, k");
  }
  {  // Phase A. Warps 0-3: dA = s do v^T up to the diagonal; warps 4-7: A = s q~ k~^T up to the
     // diagonal. (S_n and dS_n load meanwhile: chunk_grad_kernel waits for them before R_n.)
    std::vector<WarpWork> w(warps);
    for (int o = 0; o < 4; ++o) {
      WarpWork& x = w[o];
      x.smem += vc * (1 + (o + 1)) * kLdsm4Bytes + (16 + 8) * kLds32Bytes;
      x.mma += vc * 2 * (o + 1);
      x.alu += 16 * 5;
      WarpWork& y = w[4 + o];
      y.smem += kc * (1 + (o + 1)) * kLdsm4Bytes + 16 * kLds32Bytes;
      y.mma += kc * 2 * (o + 1);
      y.alu += 16 * 4;
    }
    add_phase(steps, w, false, TensorPath::WarpMma, "dA, A");
  }
  {  // All: R_n = rowsum(dS_n * S_n), K V / 2 pairs (2 FMA; read 8 a lane at a time, LDS.128).
    std::vector<WarpWork> w(warps);
    for (auto& x : w) {
      const double pairs = K * V / 2 / (32 * warps);
      x.smem += pairs * 2 * kLds32Bytes;
      x.alu += pairs * 3;
    }
    add_phase(steps, w, true, TensorPath::WarpMma, "R_n");
  }
  {  // Phase B. Every warp: dq and dk for its 16 rows (block o % 4) and half the K columns: the
     // inter-chunk GEMMs (vc x (1 + kc/2) ldmatrix, vc K/16 mma each), the intra-chunk GEMMs over
     // the o % 4 + 1 (dq) and 4 - o % 4 (dk) 16-row blocks up to the diagonal, the stores with the
     // self pair and E (2 LDS, 4 FP32 an element; dk divides: MUFU.RCP), and dk's sums of
     // k~ dk^inter per column (per 8-column tile 2 LDS.32 of k and an LDS.64 of E_last, 6 FP32;
     // then three halving exchanges, 7 K / 64 shuffles, each with an add and 2 selects).
    std::vector<WarpWork> w(warps);
    const double half_elems = elems / 2;
    for (int o = 0; o < warps; ++o) {
      WarpWork& x = w[o];
      const double blocks = (o % 4 + 1) + (4 - o % 4);
      x.smem += 2 * vc * (1 + kc / 2) * kLdsm4Bytes + blocks * (1 + kc / 2) * kLdsm4Bytes;
      x.mma += (2 * vc + blocks) * K / 16;
      x.alu += half_elems * (1 + 4) + half_elems * 4;
      x.smem += 2 * half_elems * 2 * kLds32Bytes / 2;
      x.mufu += half_elems, x.alu += half_elems + K / 16 * 6 + 7 * K / 64 * 4;
      x.smem += K / 16 * (2 * kLds32Bytes + 2 * kLds32Bytes);
    }
    add_phase(steps, w, false, TensorPath::WarpMma, "dq, dk");
  }
  dg_phase(steps, K);
  {  // Phase D: A^T do, then kF dS_n through ldmatrix (kc x (1 + V/32), kc V/16 mma).
    std::vector<WarpWork> w(warps);
    for (int i = 0; i < warps; ++i) {
      dv_from_A(w[i], i, V);
      w[i].smem += kc * (1 + V / 32) * kLdsm4Bytes;
      w[i].mma += kc * V / 16;
    }
    add_phase(steps, w, false, TensorPath::WarpMma, "dv");
  }
  steps.push_back(delay(6 * hw.cta_barrier_cycles() * hw.cycle_ns(), "CTA barriers"));
  return steps;
}

// Pass 3's four input groups, in the order its phases first read them, each with the label
// prefix of the first phase that reads it (single_anchor_chunk_phases).
struct InputGroup {
  std::vector<Step> loads;
  std::string first_phase;
};
std::vector<InputGroup> chunk_input_groups(const GlaKernelShape& d, CopyEngine engine) {
  const double C = kChunk, K = double(d.K), V = double(d.V);
  return {{{load(C * K * 4, 1.0, engine, "load g")}, "gate cumsum"},
          {{load(C * K * 2, 1.0, engine, "load q"), load(C * K * 2, 1.0, engine, "load k")}, "decay q, k"},
          {{load(C * V * 2, 1.0, engine, "load do"), load(C * V * 2, 1.0, engine, "load v")}, "dA, A"},
          {{load(K * V * 2, 1.0, engine, "load S_n"), load(K * V * 2, 1.0, engine, "load dS_n")}, "R_n"}};
}

// A chunk's gradients: dq, dk, dv, dg.
std::vector<Step> chunk_output_stores(const GlaKernelShape& d, CopyEngine engine) {
  const double C = kChunk, K = double(d.K), V = double(d.V);
  return {store(C * K * 2, engine, "store dq"), store(C * K * 2, engine, "store dk"),
          store(C * V * 2, engine, "store dv"), store(C * K * 4, engine, "store dg")};
}

// A phase of the chunk: its label (the input groups wait before the phase their first_phase
// names) and its steps.
struct Phase {
  std::string name;
  std::vector<Step> steps;
};

// The hand-counted phases (single_anchor_chunk_phases), split where their labels' "name: " changes.
std::vector<Phase> counted_phases(const HardwareProfile& hw, const GlaKernelShape& d) {
  std::vector<Phase> out;
  for (const Step& s : single_anchor_chunk_phases(hw, double(d.K), double(d.V))) {
    const std::string name = s.label.substr(0, s.label.find(':'));
    if (out.empty() || out.back().name != name) out.push_back({name, {}});
    out.back().steps.push_back(s);
  }
  return out;
}

// The same phases from the kernel's compiled code on the GPUs it is compiled for (sm_90): the
// single-anchor path's `sass:` regions in cuda/gla/gla_chunk_grad_kernel.cuh
// (sim/models/generated/gla_chunk_grad_sass.hpp, checked against a fresh compile by
// sim.sass_mix_matches_gla_chunk_grad). A phase's exp2, shared-memory bytes, issue slots and
// mma.sync flops run on the SM's pipes beside its busiest scheduler's in-order chain (two warps a
// scheduler; phase A: a dA warp beside an A warp), ending when all are done; the six barriers
// between phases after them. Static counts are the busiest warps' (row block 3 in phase A, 0 in
// dv: the triangular loops are compiled whole). Appends each phase's pipe barriers to `barriers`.
std::optional<std::vector<Phase>> sass_phases(const HardwareProfile& hw, const GlaKernelShape& d,
                                              std::vector<BarrierSpec>& barriers, bool warp_specialized) {
  const bool sm90 = hw.compute_capability >= 90 && hw.compute_capability < 100;
  const std::span<const SassRegionMix> table(generated::kGlaChunkGradSass);
  // Each kernel's own compile of the phases (the warp-specialized one's R_n, dq, dk chain is
  // about 1.5x the pipelined one's at K = V = 64).
  const std::string part = fmt::format("{}ILi{}ELi{}E", warp_specialized ? "gla_chunk_grad_ws_kernel" : "gla_chunk_grad_kernel",
                                       d.K, d.V);
  if (!sm90 || !has_sass_region(table, part, "all.cumsum")) return std::nullopt;
  const auto region = [&](const char* r) { return sass_counts(table, part, {r}); };
  constexpr double kSchedulers = 4;
  std::vector<Phase> out;
  const auto add = [&](const SassCounts& c, double warps, double chain_cycles, const std::string& name) {
    out.push_back({name, sass_mma_phase(c, warps, chain_cycles * hw.cycle_ns(), name, barriers)});
  };
  add(region("all.cumsum"), 2 * kSchedulers, region("all.cumsum").cycles, "gate cumsum");
  // decay_operands' row loop, per pass of its body: the passes from the exp2 a thread does (four
  // a column pair of a row, C K / 2 pairs over the CTA's threads).
  const SassCounts decay = region("all.decay.loops");
  const double passes = std::round(4.0 * kChunk * double(d.K) / 2 / tiling::kChunkGradThreads / std::max(1.0, decay.mufu));
  SassCounts qk = region("all.self_dots");
  qk += decay.times(passes);
  add(qk, 2 * kSchedulers, region("all.self_dots").cycles + decay.cycles * passes, "decay q, k");
  SassCounts pair = region("dA.rows");
  pair += region("A.rows");
  add(pair, kSchedulers, std::max(region("phaseA.dA").cycles, region("phaseA.A").cycles), "dA, A");
  add(region("all.dq_dk"), 2 * kSchedulers, region("all.dq_dk").cycles, "R_n, dq, dk");
  add(region("all.dg"), 2 * kSchedulers, region("all.dg").cycles, "dg");
  add(region("all.dv"), 2 * kSchedulers, region("all.dv").cycles, "dv");
  out.push_back({"CTA barriers", {delay(6 * hw.cta_barrier_cycles() * hw.cycle_ns(), "CTA barriers")}});
  return out;
}

// The compute warps' chunk: the phases, each input group waited for (barrier = its index)
// before the first phase that reads it; `after` adds steps after the phase of that name. Then
// the stores, issued as each phase ends, not waited for (STG from registers). The phases' own
// pipe barriers are appended to `barriers` (which holds the input groups' first).
std::vector<Step> compute_chunk(const HardwareProfile& hw, const GlaKernelShape& d, CopyEngine engine,
                                std::vector<BarrierSpec>& barriers, bool warp_specialized,
                                const std::vector<std::pair<std::string, std::vector<Step>>>& after = {}) {
  const std::vector<InputGroup> groups = chunk_input_groups(d, engine);
  std::vector<Phase> phases;
  if (auto sass = sass_phases(hw, d, barriers, warp_specialized)) phases = std::move(*sass);
  else phases = counted_phases(hw, d);
  std::vector<Step> body;
  std::size_t next_group = 0;
  for (const Phase& ph : phases) {
    if (next_group < groups.size() && ph.name.rfind(groups[next_group].first_phase, 0) == 0) {
      body.push_back(wait(int(next_group), 0, "wait " + groups[next_group].first_phase + " inputs"));
      ++next_group;
    }
    body.insert(body.end(), ph.steps.begin(), ph.steps.end());
    for (const auto& [name, steps] : after)
      if (ph.name == name) body.insert(body.end(), steps.begin(), steps.end());
  }
  OVERLAP_REQUIRE(next_group == groups.size(), "gla_backward chunk grads: a load group no phase waits for");
  for (const Step& s : chunk_output_stores(d, engine)) body.push_back(issued(s, -1, 0));
  return body;
}

// Pass 3 as the pipelined kernel runs it (gla_chunk_grad_kernel.cuh): one chunk per CTA, its
// loads in the four cp.async groups, each phase waiting only for its own (g before the gate
// sums, q and k before the decay, do and v before dA / A, S_n and dS_n before R_n).
KernelSpec chunk_grad_kernel(const HardwareProfile& hw, const GlaKernelShape& d) {
  const CopyEngine engine = engine_on(hw);
  KernelSpec k;
  k.name = "gla_backward_chunk_grads";
  k.ctas = d.B * d.H * ((d.T + kChunk - 1) / kChunk);
  k.threads_per_cta = tiling::kChunkGradThreads;
  k.regs_per_cta = regs_for_warps(tiling::kChunkGradWarps, chunk_grad_regs(d.K, d.V));
  k.smem_bytes = tiling::chunk_grad_smem_bytes(int(d.K), int(d.V));
  k.tiles = 1;
  Role r;
  r.name = "warps";
  r.warps = tiling::kChunkGradWarps;
  for (const InputGroup& g : chunk_input_groups(d, engine)) {
    k.barriers.push_back({g.first_phase + " inputs", int(g.loads.size())});
    for (const Step& s : g.loads) r.body.push_back(issued(s, int(k.barriers.size()) - 1, 0));
  }
  const std::vector<Step> chunk = compute_chunk(hw, d, engine, k.barriers, false);
  r.body.insert(r.body.end(), chunk.begin(), chunk.end());
  k.roles.push_back(std::move(r));
  return k;
}

// Pass 3 warp-specialized (gla_chunk_grad_ws_kernel.cuh): a persistent CTA an SM walks chunks
// x, x + grid, ...; its producer warpgroup loads chunk i + 1's q, v, S_n as soon as the compute
// warps have formed chunk i's dg (and g, k then: the single-anchor path the model times no
// longer reads them), and do, dS_n once they have formed its dv. The compute warps wait for each
// group where the pipelined kernel does, and free buffers by their own arrivals.
KernelSpec chunk_grad_ws_kernel(const HardwareProfile& hw, const GlaKernelShape& d) {
  const CopyEngine engine = engine_on(hw);
  const std::int64_t chunks = d.B * d.H * ((d.T + kChunk - 1) / kChunk);
  KernelSpec k;
  k.name = "gla_backward_chunk_grads_ws";
  k.ctas = std::min<std::int64_t>(chunks, hw.sm_count);
  // The busiest CTA's chunks set the time; the bytes are every chunk's once (the model's CTA
  // stands for the busiest, so its count would overstate them by up to a chunk a CTA).
  k.tiles = int((chunks + k.ctas - 1) / k.ctas);
  k.threads_per_cta = tiling::kChunkGradWsThreads;
  k.regs_per_cta = regs_for_warps(tiling::kChunkGradWarps, tiling::kChunkGradWsComputeRegs) +
                   regs_for_warps(tiling::kChunkGradProducerThreads / 32, tiling::kChunkGradWsProducerRegs);
  k.smem_bytes = tiling::chunk_grad_ws_smem_bytes(int(d.K), int(d.V));
  const std::vector<InputGroup> groups = chunk_input_groups(d, engine);
  double chunk_bytes = 0;
  for (const Step& s : chunk_output_stores(d, engine)) chunk_bytes += s.amount;
  for (const InputGroup& g : groups)
    for (const Step& s : g.loads) chunk_bytes += s.amount;
  k.hbm_bytes = chunk_bytes * double(chunks);
  enum { kGates, kQK, kDoV, kStates, kFreeAfterDg, kFreeGK, kFreeAfterDv };
  // Arrivals a chunk: one a stream that loads part of the group (S_n and dS_n: stream 1 once).
  const int arrivals[] = {1, 2, 2, 1};
  for (std::size_t g = 0; g < groups.size(); ++g)
    k.barriers.push_back({groups[g].first_phase + " inputs", arrivals[g]});
  k.barriers.push_back({"q, v, S_n buffers free", 1});
  k.barriers.push_back({"g, k buffers free", 1});
  k.barriers.push_back({"do, dS_n buffers free", 1});

  // Two load streams of two warps each (gla_chunk_grad_ws_kernel.cuh), so that g and do, the
  // groups the compute warps wait for first, never queue behind another group's copies. A
  // stream waits for its copies to land before it arrives, and issues nothing meanwhile.
  const auto landed = [](Step s, int barrier) {
    return std::vector<Step>{std::move(s), arrive(barrier, 0)};
  };
  const auto stream = [&](const char* name, std::vector<std::vector<Step>> parts) {
    Role r;
    r.name = name;
    r.warps = tiling::kChunkGradProducerStreamThreads / 32;
    for (auto& part : parts) r.body.insert(r.body.end(), part.begin(), part.end());
    return r;
  };
  k.roles.push_back(stream("producer stream 0 (g, k, do)",
                           {{wait(kFreeGK, -1, "wait g, k buffers")}, landed(groups[kGates].loads[0], kGates),
                            landed(groups[kQK].loads[1], kQK), {wait(kFreeAfterDv, -1, "wait do buffer")},
                            landed(groups[kDoV].loads[0], kDoV)}));
  k.roles.push_back(stream("producer stream 1 (q, v, S_n, dS_n)",
                           {{wait(kFreeAfterDg, -1, "wait q, v, S_n buffers")}, landed(groups[kQK].loads[0], kQK),
                            landed(groups[kDoV].loads[1], kDoV), {groups[kStates].loads[0]},
                            {wait(kFreeAfterDv, -1, "wait dS_n buffer")}, landed(groups[kStates].loads[1], kStates)}));

  Role compute;
  compute.name = "compute warps";
  compute.warps = tiling::kChunkGradWarps;
  compute.body = compute_chunk(hw, d, engine, k.barriers, true,
                               {{"dg", {arrive(kFreeAfterDg, 0), arrive(kFreeGK, 0)}}, {"dv", {arrive(kFreeAfterDv, 0)}}});
  k.roles.push_back(std::move(compute));
  return k;
}

// The variants: materialized walks for S_n (pass 1), the others read the forward's; saved_states_ws
// runs pass 3 warp-specialized.
enum class Variant { Materialized, SavedStates, SavedStatesWs };

std::vector<KernelSpec> kernels_of(const HardwareProfile& hw, const GlaKernelShape& d, Variant v) {
  std::vector<KernelSpec> out;
  if (v == Variant::Materialized) out.push_back(state_walk_kernel(hw, d, true));
  out.push_back(state_walk_kernel(hw, d, false));
  out.push_back(v == Variant::SavedStatesWs ? chunk_grad_ws_kernel(hw, d) : chunk_grad_kernel(hw, d));
  return out;
}

std::string cannot_run(const HardwareProfile& hw, const ShapeArgs& shape, Variant v) {
  const GlaKernelShape d = dims(shape);
  if ((d.K != 64 && d.K != 128) || (d.V != 64 && d.V != 128))
    return fmt::format("gla_backward needs K and V in {{64, 128}} (K={}, V={})", d.K, d.V);
  if (v == Variant::SavedStatesWs && !hw.has_wgmma())
    return fmt::format("saved_states_ws needs setmaxnreg (sm_90 on; {} is sm_{})", hw.name, hw.compute_capability);
  for (const KernelSpec& k : kernels_of(hw, d, v)) {
    const std::string why = why_kernel_does_not_fit(hw, k);
    if (!why.empty()) return why;
  }
  return {};
}

}  // namespace

double gla_saved_states_bytes(const ShapeArgs& shape) {
  const GlaKernelShape d = dims(shape);
  return double(d.B * d.H) * double((d.T + kChunk - 1) / kChunk) * double(d.K * d.V) * 2;
}

std::vector<VariantModel> gla_backward_variant_models() {
  struct Named {
    Variant v;
    const char* name;
    const char* description;
  };
  const Named variants[] = {
      {Variant::Materialized, "materialized",
       "S_n and dS_n written by a forward and a backward walk over the chunks, then one CTA per chunk forms dq, "
       "dk, dv, dg (mma.sync)"},
      {Variant::SavedStates, "saved_states",
       "S_n as the forward saved them (it writes B H NT K V bf16 more); a backward walk writes every dS_n, then "
       "one CTA per chunk forms dq, dk, dv, dg (mma.sync)"},
      {Variant::SavedStatesWs, "saved_states_ws",
       "saved_states with the chunk pass warp-specialized: a persistent CTA an SM, a producer warpgroup loading "
       "the next chunk's inputs as the compute warps free their buffers"}};
  std::vector<VariantModel> out;
  for (const Named& n : variants) {
    VariantModel m;
    m.workload = "gla_backward";
    m.name = n.name;
    m.description = n.description;
    const Variant v = n.v;
    m.cannot_run = [v](const HardwareProfile& hw, const ShapeArgs& shape) { return cannot_run(hw, shape, v); };
    m.build = [v](const HardwareProfile& hw, const ShapeArgs& shape) { return kernels_of(hw, dims(shape), v); };
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace overlap::sim
