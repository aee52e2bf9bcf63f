// gla (chunkwise gated linear attention, forward): the six schedule x state-carry variants,
// built from cuda/gla/gla_tiling.hpp so the model and the kernels share one tiling.
//
// Work per chunk of C steps for a CTA owning V-columns [block_v] of one (b, h) follows SPEC's
// chunked form: cumulative gate sums, exponents anchored per sub-chunk, the gated Q K^T
// (recomputed by every V-block CTA), the decay mask, A V, q S_n and the state update.
#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include "core/error.hpp"
#include "cuda/gla/gla_tiling.hpp"
#include "sim/occupancy.hpp"
#include "sim/gemm_model.hpp"
#include "sim/models/gla_chunk_sass_model.hpp"
#include "sim/models/gla_model.hpp"
#include "sim/models/gla_pingpong_fused_model.hpp"
#include "sim/models/gla_pingpong_paired_model.hpp"
#include "sim/models/gla_warp_work.hpp"
#include "sim/tile_loop.hpp"
#include "sim/variants.hpp"

namespace overlap::sim {
namespace {

using gla::Schedule;
using namespace gla_work;

// q, k, v are bf16; the log gate g is fp32 (ref/gla/inputs.hpp).
constexpr double kGateBytes = 4;
using gla::StateCarry;

struct GlaDims {
  std::int64_t B, T, H, K, V;
  bool h0, hT;
  int segments;  // a launch form's (pingpong_fused@segments=N); 0: the launcher's rule
};

GlaDims dims(const ShapeArgs& s) {
  return {shape_size(s, "gla", "B"), shape_size(s, "gla", "T"), shape_size(s, "gla", "H"),
          shape_size(s, "gla", "K"), shape_size(s, "gla", "V"), shape_value(s, "h0", 0) != 0,
          shape_value(s, "hT", 0) != 0, int(shape_value(s, "segments", 0))};
}

const char* schedule_name(Schedule s) {
  return s == Schedule::Sequential ? "sequential" : s == Schedule::Pipelined ? "pipelined" : "pingpong";
}

// The pieces every sequential and pipelined gla kernel is assembled from (the pingpong kernels
// have models of their own): the copy and MMA instructions, and the CTA resources from the tiling.
// The tiling the variant takes on `hw`: the kernels' own, or where that needs more shared memory
// than the GPU has, the refitted one of gla::fit_shared_memory.
gla::Tiling tiling_on(const HardwareProfile& hw, Schedule s, StateCarry c, const GlaDims& d) {
  return gla::fit_shared_memory(gla::tiling_for(s, c, int(d.K), int(d.V)), int(d.K), int(d.V),
                                std::size_t(hw.smem_per_cta_KiB * 1024));
}

struct GlaKernelBase {
  gla::Tiling t;
  gla::Tiling hopper;  // the tiling of our (sm_90) kernels
  CopyEngine engine;
  TensorPath path;

  GlaKernelBase(const HardwareProfile& hw, Schedule s, StateCarry c, const GlaDims& d)
      : t(tiling_on(hw, s, c, d)), hopper(gla::tiling_for(s, c, int(d.K), int(d.V))) {
    // cp.async and mma.sync (ld/st where the GPU has no cp.async).
    engine = hw.copy_engine == CopyEngine::Tma ? CopyEngine::CpAsync : hw.copy_engine;
    path = TensorPath::WarpMma;
  }

  KernelSpec shell(std::string name, std::int64_t ctas, const GlaDims& d) const {
    KernelSpec k;
    k.name = std::move(name);
    if (t.chunk != hopper.chunk || t.block_v != hopper.block_v)  // say that the tiling is refitted
      k.name += fmt::format(" (refitted to this GPU's shared memory: chunk {}, block_v {}; our kernels: {}, {})",
                            t.chunk, t.block_v, hopper.chunk, hopper.block_v);
    k.ctas = ctas;
    k.threads_per_cta = t.threads();
    k.regs_per_cta = regs_for_warps(t.compute_warps, t.max_regs_per_thread);
    k.smem_bytes = std::int64_t(t.smem_bytes(int(d.K), int(d.V)));
    return k;
  }

  LoopSchedule schedule() const {
    LoopSchedule s;
    s.stages = t.stages;
    s.compute_warps = t.compute_warps;
    return s;
  }
};

// ---------------------------------------------------------------------------------------
// Per-chunk work of the chunk kernel (cuda/gla/gla_chunk_kernel.cuh), counted from what its
// warps execute, derived from the tiling so that it follows the kernel when the tiling
// changes. Instruction mix per chunk (K=64, fused, counted from the source and checked
// against the SASS of sm_90a, see sim/README.md "gla"):
//   * every operand element of a gated GEMM is built by decayed_pair(): LDS.32 of the bf16
//     pair, LDS.64 of its cumulative gates, LDS.64 of the anchor's (none for the chunk start),
//     2 x MUFU.EX2, ~7 FP32/ALU instructions (unpack, subtract, multiply, pack). 560 such warp
//     calls per chunk at K=64 (1120 at K=128): 35840 exp2 (model before: 24576) and ~360 KB of
//     shared-memory reads per chunk, far above the tensor work.
//   * B operands of S_n / V / the decayed keys come through ldmatrix.x4 (512 B per warp).
//   * four __syncthreads split a chunk into phases: cumulative gate sums | decayed keys (all
//     warps) | output warps' first half || state warps' diagonal blocks | output warps' A V ||
//     state update. Inside a phase the two roles' warps run side by side; warp w sits on SM
//     sub-partition w % 4 (one of 4 schedulers, each with a quarter of the SM's FP32, SFU and
//     tensor pipes), so a phase lasts as long as its busiest sub-partition (output warp 3 has
//     the most off-diagonal blocks); the shared-memory pipe is one per SM.
// With 8 warps on an SM (one CTA) a scheduler has only 2 warps: the dependent chain LDS ->
// FADD -> MUFU -> FMUL -> pack of a decayed pair is not hidden, so the pipes a phase uses are
// charged one after the other (no overlap of SFU, shared memory, FP32 and tensor work inside
// one phase; loads of the next chunk still overlap, through cp.async).
enum class Pass { Fused, States, Outputs };

// The per-chunk phases of one pass, for a CTA owning block_v columns of V at head dim K.
// Returns {work on this chunk's data, work that needs the previous chunk's state}.
std::pair<std::vector<Step>, std::vector<Step>> chunk_phases(const HardwareProfile& hw, const gla::Tiling& t, Pass pass,
                                                             double K, TensorPath path) {
  const int C = t.chunk, sub = t.subchunk;
  const int out_warps = C / sub;                                      // one sub-chunk of rows each
  const int warps = t.compute_warps;
  const int state_warps = std::max(warps - out_warps, 1);
  const bool balanced = false;
  const double kc = K / 16, nv = t.block_v / 16.0, m_tiles = K / 16 / state_warps;
  std::vector<Step> compute, carried;

  // Phase 1: cumulative gate sums in place (read + write C x K fp32, one add per element).
  {
    std::vector<WarpWork> w(warps);
    for (auto& x : w) x.smem = 2.0 * C * K * 4 / warps, x.alu = 2.0 * C * K / 32 / warps;
    add_phase(compute, w, true, path, "gate cumsum");
  }
  // Phase 2 (fused, states): keys decayed to the chunk's end, C*K/2 pairs over all warps,
  // each pair also stored (STS.32).
  if (pass != Pass::Outputs) {
    std::vector<WarpWork> w(warps);
    for (auto& x : w) x.pair(C * K / 2 / 32 / warps, true), x.smem += C * K / 2 / 32 / warps * kLds32Bytes;
    add_phase(compute, w, true, path, "decay keys");
  }
  // Phase 3 (fused, outputs): output warp o: gated A left of its diagonal block (anchored at
  // its first row; 2o n8-tiles) and (q 2^b) S_n through ldmatrix; state warp o: the diagonal
  // 16x16 block by halving levels h = sub/2 .. 1 plus the diagonal itself.
  if (pass != Pass::States) {
    std::vector<WarpWork> w(warps);
    for (int o = 0; o < out_warps; ++o) {
      WarpWork& x = w[o];
      if (o > 0) x.pair(kc * (4 + 2.0 * 2 * o), true), x.mma += kc * 2 * o;
      x.pair(kc * 4, false);
      x.smem += kc * nv * kLdsm4Bytes;
      x.mma += kc * 2 * nv;
    }
    for (int o = 0; o < out_warps && out_warps + o < warps; ++o) {
      WarpWork& x = w[out_warps + o];
      for (int h = sub / 2; h >= 1; h /= 2) {
        const double a_lo_plain = (h == 1 || h == sub / 2) ? 2 : 0, a_hi_plain = h == 1 ? 2 : 0;
        x.pair(kc * ((2 - a_lo_plain) + (2 - a_hi_plain) + 2), true);
        x.smem += kc * (a_lo_plain + a_hi_plain) * kLds32Bytes;
        x.mma += kc;
      }
      x.smem += kc * 2 * 6 * kLds32Bytes;  // the diagonal: 4 A + 2 B plain pairs, two halves
      x.mma += kc * 2;
      x.smem += 2 * 4 * kLds32Bytes;  // scratch writes
    }
    add_phase(compute, w, balanced, path, "intra-chunk A, q S_n");
  } else {
    // States pass: the state warps write S_n (bf16) to global; counted with the stores.
  }
  // Phase 4: output warps: A V over key sub-chunks 0..o (ldmatrix of V); state warps: the
  // state update kd^T V (ldmatrix of kd and V), decay of S by 2^{b_last}.
  {
    std::vector<WarpWork> w(warps);
    if (pass != Pass::States)
      for (int o = 0; o < out_warps; ++o) {
        WarpWork& x = w[o];
        x.smem += (o + 1) * nv * kLdsm4Bytes + 4 * 2 * kLds32Bytes;  // + diagonal block from scratch
        x.mma += (o + 1) * 2 * nv;
        x.alu += (o + 1) * 4 + 2 * nv * 2;  // pack A to bf16, scale + pack the output
      }
    std::vector<Step> state_steps;
    if (pass != Pass::Outputs) {
      std::vector<WarpWork> s(warps);
      for (int o = 0; o < state_warps; ++o) {
        WarpWork& x = s[out_warps + o < warps ? out_warps + o : o];
        x.smem += C / 16.0 * m_tiles * (1 + nv) * kLdsm4Bytes;
        x.mma += C / 16.0 * m_tiles * 2 * nv;
        x.mufu += 2 * m_tiles;
        x.alu += m_tiles * nv * 2 * 4;
        if (pass == Pass::Fused) x.smem += m_tiles * nv * 2 * 2 * kLds32Bytes;  // S_n (bf16) to smem
      }
      // The state update runs beside the output warps' A V: one phase.
      for (int i = 0; i < warps; ++i) {
        w[i].smem += s[i].smem, w[i].mma += s[i].mma, w[i].mufu += s[i].mufu, w[i].alu += s[i].alu;
      }
    }
    add_phase(pass == Pass::Outputs ? compute : carried, w, balanced, path,
              pass == Pass::Outputs ? "A v" : "A v, state update");
  }
  // The CTA barriers between the phases (4 per chunk).
  const int barriers = 4;
  (pass == Pass::Outputs ? compute : carried)
      .push_back(delay(barriers * hw.cta_barrier_cycles() * hw.cycle_ns(), "CTA barriers"));
  return {compute, carried};
}

// A chunk's phases: from the kernel's SASS on the GPUs that code is for (sm_90; the CPU test
// sim.sass_mix_matches_gla_chunk keeps the table in step with the kernel), else counted by hand
// from the tiling (another architecture's compile, or a tiling refitted to a GPU with less
// shared memory, for which no kernel exists).
void set_chunk_work(TileLoop& loop, const HardwareProfile& hw, const GlaKernelBase& base, Pass pass, double K) {
  const bool sm90 = hw.compute_capability >= 90 && hw.compute_capability < 100;
  if (sm90 && base.t.chunk == base.hopper.chunk && base.t.block_v == base.hopper.block_v &&
      base.t.stages == base.hopper.stages) {
    const auto sass = gla_chunk::sass_chunk_phases(hw, int(K), base.t.stages, gla_chunk::Pass(int(pass)), base.t.chunk);
    if (sass) {
      loop.compute = sass->compute;
      loop.carried = sass->carried;
      loop.own_barriers = sass->barriers;
      return;
    }
  }
  std::tie(loop.compute, loop.carried) = chunk_phases(hw, base.t, pass, K, base.path);
}

// Fused state carry: one pass per (b, h, V-block), S on chip, chunks in order. The pingpong
// kernel has a model of its own (gla_pingpong_fused_model.cpp).
KernelSpec fused_kernel(const HardwareProfile& hw, Schedule s, const GlaDims& d) {
  if (s == Schedule::Pingpong) return gla_pingpong_fused_kernel(hw, {d.B, d.T, d.H, d.K, d.V, d.h0, d.hT, d.segments});
  const GlaKernelBase base(hw, s, StateCarry::Fused, d);
  const auto& t = base.t;
  const double C = t.chunk, K = double(d.K), bv = t.block_v;
  const double v_blocks = double(d.V / t.block_v);
  KernelSpec k = base.shell(fmt::format("gla_{}_fused", schedule_name(s)), d.B * d.H * (d.V / t.block_v), d);
  TileLoop loop;
  loop.tiles = int((d.T + t.chunk - 1) / t.chunk);
  // q, k, g of a head are read by every V-block CTA of that head, which run concurrently:
  // one HBM read, the rest hit L2.
  loop.loads.push_back(load(C * K * 2, 1.0 / v_blocks, base.engine, "load q"));
  loop.loads.push_back(load(C * K * 2, 1.0 / v_blocks, base.engine, "load k"));
  loop.loads.push_back(load(C * K * kGateBytes, 1.0 / v_blocks, base.engine, "load g"));
  loop.loads.push_back(load(C * bv * 2, 1.0, base.engine, "load v"));
  set_chunk_work(loop, hw, base, Pass::Fused, K);
  loop.stores = {store(C * bv * 2, base.engine, "store o")};
  loop.async_stores = base.engine == CopyEngine::Tma;
  if (d.h0) loop.prologue.push_back(load(K * bv * 4, 1.0, base.engine, "load h0"));
  if (d.hT) loop.epilogue.push_back(store(K * bv * 4, base.engine, "store hT"));
  build_tile_loop(k, loop, base.schedule());
  return k;
}

// Materialized state carry (as flash-linear-attention): kernel 1 walks the chunks and writes
// every S_n; kernel 2 is parallel over chunks and reads them back. The pingpong kernels have a
// model of their own (gla_pingpong_paired_model.cpp).
std::vector<KernelSpec> materialized_kernels(const HardwareProfile& hw, Schedule s, const GlaDims& d) {
  if (s == Schedule::Pingpong) return gla_pingpong_paired_kernels(hw, {d.B, d.T, d.H, d.K, d.V, d.h0, d.hT});
  const GlaKernelBase base(hw, s, StateCarry::Materialized, d);
  const auto& t = base.t;
  const double C = t.chunk, K = double(d.K), bv = t.block_v;
  const double v_blocks = double(d.V / t.block_v);
  const std::int64_t chunks = (d.T + t.chunk - 1) / t.chunk;

  KernelSpec states = base.shell(fmt::format("gla_{}_states", schedule_name(s)), d.B * d.H * (d.V / t.block_v), d);
  TileLoop a;
  a.tiles = int(chunks);
  a.loads = {load(C * K * 2, 1.0 / v_blocks, base.engine, "load k"), load(C * K * kGateBytes, 1.0 / v_blocks, base.engine, "load g"),
             load(C * bv * 2, 1.0, base.engine, "load v")};
  set_chunk_work(a, hw, base, Pass::States, K);
  // The entry state S_n is written as bf16 (the operand the output GEMM reads).
  // From registers, each thread its mma accumulator pairs (gla_chunk_kernel.cuh, State::store_bf16):
  // fragment stores, which hold the warps until the LSU has taken them (calibrate's store_drain).
  Step s_n = store(K * bv * 2, base.engine, "store S_n");
  s_n.store_shape = StoreShape::Fragment;
  a.stores = {s_n};
  if (d.h0) a.prologue.push_back(load(K * bv * 4, 1.0, base.engine, "load h0"));
  if (d.hT) a.epilogue.push_back(store(K * bv * 4, base.engine, "store hT"));
  build_tile_loop(states, a, base.schedule());

  // Kernel 2: one CTA per (b, h, group of chunks_per_cta chunks, V-block); its stage ring
  // prefetches across the chunks of its group, each chunk reading its S_n back.
  const std::int64_t groups = (chunks + t.chunks_per_cta - 1) / t.chunks_per_cta;
  KernelSpec out = base.shell(fmt::format("gla_{}_output", schedule_name(s)), d.B * d.H * groups * (d.V / t.block_v), d);
  // The output pass keeps no state in registers: where two CTAs' shared memory fits an SM the
  // kernel is compiled for two CTAs per SM (__launch_bounds__(256, 2): at most 128 registers).
  if (t.producer_warps == 0) {
    const std::int64_t smem_cap = std::int64_t(hw.smem_per_cta_KiB * 1024);
    if (2 * out.smem_bytes <= smem_cap) out.regs_per_cta = regs_for_warps(t.compute_warps, 128);
  }
  TileLoop b;
  b.tiles = int(std::min<std::int64_t>(t.chunks_per_cta, chunks));
  b.loads.push_back(load(C * K * 2, 1.0 / v_blocks, base.engine, "load q"));
  b.loads.push_back(load(C * K * 2, 1.0 / v_blocks, base.engine, "load k"));
  b.loads.push_back(load(C * K * kGateBytes, 1.0 / v_blocks, base.engine, "load g"));
  b.loads.push_back(load(C * bv * 2, 1.0, base.engine, "load v"));
  b.loads.push_back(load(K * bv * 2, 1.0, base.engine, "load S_n"));
  set_chunk_work(b, hw, base, Pass::Outputs, K);
  b.stores = {store(C * bv * 2, base.engine, "store o")};
  b.async_stores = base.engine == CopyEngine::Tma;
  build_tile_loop(out, b, base.schedule());
  return {states, out};
}

std::string cannot_run(const HardwareProfile& hw, Schedule s, StateCarry c, const ShapeArgs& shape) {
  const GlaDims d = dims(shape);
  if (d.K % 16 != 0 || d.K > 256) return fmt::format("gla needs K a multiple of 16 and at most 256 (K={})", d.K);
  const gla::Tiling t = tiling_on(hw, s, c, d);
  if (d.V % 16 != 0 || d.V % t.block_v != 0)
    return fmt::format("gla needs V a multiple of 16 and of block_v={} (V={})", t.block_v, d.V);
  if (d.segments > gla::PingpongFusedSegments::kMax)
    return fmt::format("pingpong_fused splits a walk into at most {} segments (segments={})",
                       gla::PingpongFusedSegments::kMax, d.segments);
  if (s == Schedule::Pingpong && !hw.has_wgmma())
    return fmt::format("pingpong uses TMA, mbarriers and wgmma (sm_90+); {} is sm_{}", hw.name, int(hw.compute_capability));
  const std::vector<KernelSpec> kernels =
      c == StateCarry::Fused ? std::vector<KernelSpec>{fused_kernel(hw, s, d)} : materialized_kernels(hw, s, d);
  for (const auto& k : kernels) {
    const std::string why = why_kernel_does_not_fit(hw, k);
    if (!why.empty()) return why;
  }
  return {};
}

}  // namespace

std::vector<VariantModel> gla_variant_models() {
  std::vector<VariantModel> v;
  for (Schedule s : {Schedule::Sequential, Schedule::Pipelined, Schedule::Pingpong})
    for (StateCarry c : {StateCarry::Fused, StateCarry::Materialized}) {
      VariantModel m;
      m.workload = "gla";
      const bool fused = c == StateCarry::Fused;
      m.name = fmt::format("{}_{}", schedule_name(s), fused ? "fused" : "materialized");
      if (fused) m.aliases = {schedule_name(s)};
      const char* how = s == Schedule::Sequential ? "load then compute each chunk, no overlap inside a CTA"
                        : s == Schedule::Pipelined ? "next chunk prefetched into a second stage (cp.async) while computing"
                  : fused ? "TMA producer + gating, state and output warpgroups (wgmma), one job each"
                          : "TMA producer warp + 2 wgmma consumer warpgroups, each on its own work unit";
      m.description = fmt::format("{}; {}", how,
                                  fused ? "state kept on chip, one pass" : "chunk states through HBM, two kernels");
      m.cannot_run = [s, c](const HardwareProfile& hw, const ShapeArgs& shape) { return cannot_run(hw, s, c, shape); };
      if (s == Schedule::Pingpong && fused)
        m.forms = {{"segments", 0, "CTAs per walk along T (0: the launcher's rule, as the GPU library)", 0}};
      m.build = [s, c](const HardwareProfile& hw, const ShapeArgs& shape) {
        const GlaDims d = dims(shape);
        return c == StateCarry::Fused ? std::vector<KernelSpec>{fused_kernel(hw, s, d)} : materialized_kernels(hw, s, d);
      };
      v.push_back(std::move(m));
    }
  return v;
}

}  // namespace overlap::sim
