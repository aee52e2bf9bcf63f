// linrnn (projection -> gated scan -> SiLU gate): the four variants of SPEC, built from
// cuda/linrnn/linrnn_tiling.hpp. The scan h_t = a_t h_{t-1} + (1 - a_t) u_t is a chain of
// dependent FMAs per channel, and the scan kernels' tiles go through their phases one after
// another: they are charged by latency (their SASS in order, and the memory round trips they wait
// on), which no amount of bandwidth shortens; everything else is unit work and copies.
#include <algorithm>

#include "core/error.hpp"
#include "cuda/linrnn/linrnn_tiling.hpp"
#include "sim/gemm_model.hpp"
#include "sim/models/cublas_picks.hpp"
#include "sim/models/generated/linrnn_full_fused_sass.hpp"
#include "sim/models/generated/linrnn_scan_sass.hpp"
#include "sim/sass_mix.hpp"
#include "sim/occupancy.hpp"
#include "sim/tile_loop.hpp"
#include "sim/variants.hpp"

namespace overlap::sim {
namespace {

using linrnn::Variant;

struct LinrnnDims {
  std::int64_t B, T, d, dv;
};

LinrnnDims dims(const ShapeArgs& s) {
  return {shape_size(s, "linrnn", "B"), shape_size(s, "linrnn", "T"), shape_size(s, "linrnn", "d"),
          shape_size(s, "linrnn", "dv")};
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// The intermediates (read back through HardwareProfile::l2_miss_fraction): the projection GEMM
// writes u, a_pre and z; the scan reads them next, and three_kernel's gate kernel reads z and the
// h the scan wrote.
double projection_bytes(const LinrnnDims& d) { return double(d.B * d.T * 3 * d.dv) * 2; }
double h_bytes(const LinrnnDims& d) { return double(d.B * d.T * d.dv) * 4; }

// x[B*T, d] @ W[d, 3 dv] -> u, a_pre, z (bf16) in HBM.
KernelSpec projection(const HardwareProfile& hw, const LinrnnDims& d) {
  const auto t = linrnn::projection_gemm_for(int(hw.compute_capability));
  GemmSpec g;
  g.name = "linrnn_projection_gemm";
  g.M = d.B * d.T;
  g.N = 3 * d.dv;
  g.K = d.d;
  g.tile_m = t.tile_m;
  g.tile_n = t.tile_n;
  g.tile_k = t.tile_k;
  g.stages = t.stages;
  g.consumer_warps = t.warps;
  g.warp_specialized = t.warp_specialized;
  g.max_regs_per_thread = t.max_regs_per_thread;
  apply_cublas_pick(hw, g);  // the kernel cuBLAS runs, where it was observed
  return gemm_kernel(hw, g);
}

// A scan kernel (three_kernel's scan, semi_fused's scan + gate): one CTA of 8 warps per (batch
// row, chunk of chunk_t steps, 64 channels) tile, which goes through its phases in order with a
// barrier between each, so its time is a sum of latencies. Each phase is charged from the
// kernel's SASS (sim/models/generated/linrnn_scan_sass.hpp, its `scan.*` regions): the busiest
// scheduler's in-order chain (timed with two warps a scheduler, as the 8-warp phases run; the
// carry and look-back run on two warps, one a scheduler, so theirs are a little long) beside the
// phase's issue slots, MUFU and shared-memory bytes, which CTAs sharing an SM contend for. To
// that come the memory round trips the code waits on: the tile counter's atomic, the chunk's
// loads (all issued before any use), the look-back's polls (one L2 round trip, within the
// `scan.lookback` chain, per window of predecessors) and the fence and atomic that count the
// tile finished.
KernelSpec scan_kernel(const HardwareProfile& hw, const LinrnnDims& d, std::string name, bool with_gate) {
  const auto t = linrnn::scan_tiling();
  const std::string_view fn = with_gate ? "scan_kernelILb1" : "scan_kernelILb0";
  const auto sass = [&](std::string_view region) {
    return sass_counts(generated::kLinrnnScanSass, fn, {region});
  };
  KernelSpec k;
  k.name = std::move(name);
  const std::int64_t rows = d.B * ceil_div(d.dv, t.channels_per_cta), chunks = ceil_div(d.T, t.chunk_t);
  k.ctas = rows * chunks;
  k.threads_per_cta = t.threads;
  k.regs_per_cta = regs_for_warps(t.threads / 32, t.max_regs_per_thread);
  const double ch = t.channels_per_cta, ct = t.chunk_t, warps = t.threads / 32.0, ns = hw.cycle_ns();
  k.smem_bytes = std::int64_t(3 * ct * (ch + 4) * 4);
  // Tiles are drawn chunk-major, so the tiles resident together span `span` chunks; a tile's
  // look-back walks back through the running ones (those before have published their inclusive
  // h), a window of kLookbackWindow predecessors per round.
  const std::int64_t resident = std::min(k.ctas, resident_ctas(hw, occupancy(hw, k).ctas_per_sm, 1));
  const std::int64_t span = std::min(chunks - 1, std::max<std::int64_t>(1, resident / rows));
  const double rounds = chunks > 1 ? double(ceil_div(span, linrnn::kLookbackWindow)) : 0.0;

  enum { kFull = 0 };
  k.barriers = {{"chunk loaded", with_gate ? 3 : 2}};
  Role r;
  r.name = "warps (one tile)";
  r.warps = int(warps);
  auto phase = [&](const SassCounts& c, double phase_warps, double chain_cycles, const std::string& what) {
    for (Step& s : sass_mma_phase(c, phase_warps, chain_cycles * ns, what, k.barriers)) r.body.push_back(std::move(s));
  };
  r.body.push_back(delay((sass("scan.tile").cycles + hw.l2_latency_cycles) * ns,
                         "tile id: the counter's atomic (an L2 round trip) and the index math (SASS)"));
  r.body.push_back(delay(sass("scan.fetch").cycles * ns, "load addresses and issue (SASS)"));
  for (int i = 0; i < (with_gate ? 3 : 2); ++i)
    r.body.push_back(
        issued(load(ct * ch * 2, hw.l2_miss_fraction(projection_bytes(d)), CopyEngine::LdSt, "load chunk"), kFull, 0));
  r.body.push_back(wait(kFull, 0, "chunk loaded"));
  const SassCounts gate = sass("scan.gate"), pass1 = sass("scan.pass1"), pass2 = sass("scan.pass2");
  phase(gate, warps, gate.cycles, "gates into shared memory");
  phase(pass1, warps, pass1.cycles, "segment aggregates");
  // Threads 0..63 (two warps, one on each of two schedulers): the chunk's aggregate, then the
  // look-back's rounds.
  const SassCounts carry = sass("scan.carry"), look = sass("scan.lookback");
  phase(carry, 2, carry.cycles, "chunk aggregate");
  if (rounds > 0) phase(look.times(rounds), 2, look.cycles * rounds, fmt::format("look-back ({:.0f} rounds)", rounds));
  phase(pass2, warps, pass2.cycles, "carry-in and every step");
  // The fence that counts the tile finished waits for the stores; then the counter's atomic.
  r.body.push_back(store(ct * ch * (with_gate ? 2 : 4), CopyEngine::LdSt, with_gate ? "store y" : "store h"));
  r.body.push_back(delay((sass("scan.finish").cycles + hw.l2_latency_cycles) * ns,
                         "tile finished: fence, the counter's atomic (SASS)"));
  k.roles.push_back(std::move(r));
  return k;
}

// y = h * silu(z): h (fp32) and z read, y written.
KernelSpec gate_kernel(const HardwareProfile& hw, const LinrnnDims& d) {
  const auto t = linrnn::elementwise_tiling();
  KernelSpec k;
  k.name = "linrnn_gate";
  const double per_cta = double(t.threads) * t.elements_per_thread;
  k.ctas = ceil_div(d.B * d.T * d.dv, std::int64_t(per_cta));
  k.threads_per_cta = t.threads;
  k.regs_per_cta = regs_for_warps(t.threads / 32, 32);
  TileLoop loop;
  loop.loads = {load(per_cta * 4, hw.l2_miss_fraction(h_bytes(d)), CopyEngine::LdSt, "load h"),
                load(per_cta * 2, hw.l2_miss_fraction(h_bytes(d) + projection_bytes(d)), CopyEngine::LdSt, "load z")};
  loop.compute = {run(Unit::Sfu, per_cta * 2, "silu"), run(Unit::Fma, per_cta * 3, "gate")};
  loop.stores = {store(per_cta * 2, CopyEngine::LdSt, "store y")};
  LoopSchedule sch;
  sch.compute_warps = t.threads / 32;
  build_tile_loop(k, loop, sch);
  return k;
}

// One kernel, per timestep a vector-matrix product on the FMA pipes: every step waits for
// x_t (a dependent global load: nothing is in flight ahead of it), a d-long dependent chain of
// FFMAs per thread, a CTA-wide barrier, then one scan step. This is why it loses. Both chains
// are the kernel's SASS in order (sim/models/generated/linrnn_full_fused_sass.hpp).
KernelSpec full_fused_kernel(const HardwareProfile& hw, const LinrnnDims& d) {
  const auto t = linrnn::full_fused_tiling();
  KernelSpec k;
  k.name = "linrnn_full_fused";
  k.ctas = d.B * ceil_div(d.dv, t.channels);
  k.threads_per_cta = t.threads;
  k.regs_per_cta = regs_for_warps(t.threads / 32, t.max_regs_per_thread);
  const double cols = 3.0 * t.channels, w_bytes = double(d.d) * cols * 2;
  const bool resident = w_bytes <= t.w_resident_max_bytes;
  k.smem_bytes = resident ? std::int64_t(w_bytes) : 0;
  const double batch_ctas = double(ceil_div(d.dv, t.channels));
  TileLoop loop;
  loop.tiles = int(d.T);
  loop.loads = {load(double(d.d) * 2, 1.0 / batch_ctas, CopyEngine::LdSt, "load x_t")};
  if (!resident) loop.loads.push_back(load(w_bytes, 0.0, CopyEngine::LdSt, "re-read W slice from L2"));
  // Each thread's d-long chain of dependent FFMAs, from the kernel's SASS: one pass over the
  // unrolled loop body (tools/sass_mix.py `.loop` region) takes `cycles` in order with the
  // profile's latencies and advances the chain by `fp32` steps; W from shared memory, or from
  // L2 where it does not fit.
  const SassCounts dot = sass_counts(generated::kLinrnnFullFusedSass, "full_fused_kernel",
                                     {resident ? "dot.loop" : "dot_l2.loop"});
  const double chain_ns = dot.cycles / dot.fp32 * double(d.d) * hw.cycle_ns();
  // The rest of a step, also in order from its SASS (region `step`): the two __syncthreads, the
  // gates' exp2 and reciprocals, the scan's FMA and the store of y_t, lane by lane dependent.
  const SassCounts rest = sass_counts(generated::kLinrnnFullFusedSass, "full_fused_kernel", {"step"});
  loop.compute = {delay(chain_ns, "x_t W: d-long FFMA chain per thread (SASS)"),
                  delay(rest.cycles * hw.cycle_ns(), "barriers, gates, scan step, y_t (SASS, in order)")};
  loop.stores = {store(t.channels * 2.0, CopyEngine::LdSt, "store y_t")};
  loop.async_stores = true;
  if (resident) loop.prologue = {load(w_bytes, 1.0 / double(d.B), CopyEngine::LdSt, "load W slice")};
  LoopSchedule sch;  // stages = 1: each x_t is loaded when needed
  sch.compute_warps = t.threads / 32;
  build_tile_loop(k, loop, sch);
  return k;
}

// One persistent warp-specialized GEMM (TMA + wgmma) over the flattened [B*T] rows whose scan
// runs in an epilogue warpgroup of its own (cuda/common/sm90_handoff_gemm.cuh): the two MMA
// warpgroups copy each finished tile (tile_m rows x one block of block_dv channels as [u|a|z])
// to shared memory as fp32 and go on with the next tile. The epilogue warpgroup, meanwhile:
// the gate math (3 MUFU operations per (row, channel): 1 per column of the tile), the serial
// scan and y (about 8 instructions per column), shared-memory traffic (reading u and a_pre and
// writing A and B over them, then reading A, B and z: 28 bytes per (row, channel)), the
// look-back across tiles plus two barriers (a delay per tile), then y (one bf16 per channel =
// 2/3 byte per column). Registers: 128 per thread (512 threads fill the register file).
KernelSpec chunk_fused_kernel(const HardwareProfile& hw, const LinrnnDims& d) {
  const auto t = linrnn::chunk_fused_tiling();
  GemmSpec g;
  g.name = "linrnn_chunk_fused";
  g.M = d.B * d.T;
  g.N = ceil_div(d.dv, t.block_dv) * 3 * t.block_dv;
  g.K = d.d;
  g.tile_m = t.tile_m;
  g.tile_n = 3 * t.block_dv;
  g.tile_k = t.tile_k;
  g.stages = t.stages;
  g.consumer_warps = t.consumer_warps;
  g.warp_specialized = true;
  g.persistent = true;
  g.cluster_size = t.cluster_m;
  g.b_multicast = t.cluster_m;  // the cluster's CTAs lie along M and share each weight tile by multicast
  g.c_bytes_per_element = 2.0 / 3.0;
  g.max_regs_per_thread = 128;
  g.epilogue_warpgroup = t.epilogue_warps > 0;
  g.handoff_bytes_per_element = 4;            // fp32 moved
  g.handoff_tile_bytes = t.handoff_bytes();    // with the 8-float row padding
  g.epilogue_smem_bytes_per_element = 28.0 / 3.0;
  g.epilogue_max_regs_per_thread = 128;
  g.epilogue_sfu_per_element = 1;
  g.epilogue_fma_per_element = 8;
  g.epilogue_sync_ns_per_tile = (3 * hw.l2_latency_cycles + 2 * hw.sync_latency_cycles) * hw.cycle_ns();
  return gemm_kernel(hw, g);
}

std::vector<KernelSpec> build(Variant v, const HardwareProfile& hw, const ShapeArgs& shape) {
  const LinrnnDims d = dims(shape);
  switch (v) {
    case Variant::ThreeKernel:
      return {projection(hw, d), scan_kernel(hw, d, "linrnn_scan", false), gate_kernel(hw, d)};
    case Variant::SemiFused:
      return {projection(hw, d), scan_kernel(hw, d, "linrnn_scan_gate", true)};
    case Variant::FullFused:
      return {full_fused_kernel(hw, d)};
    case Variant::ChunkFused:
      return {chunk_fused_kernel(hw, d)};
  }
  return {};
}

std::string cannot_run(Variant v, const HardwareProfile& hw, const ShapeArgs& shape) {
  const LinrnnDims d = dims(shape);
  if (d.dv % 8 != 0) return fmt::format("linrnn needs dv a multiple of 8 (dv={})", d.dv);
  if (d.d % 16 != 0) return fmt::format("linrnn needs d a multiple of 16 (d={})", d.d);
  if (v == Variant::ChunkFused && !hw.has_wgmma())
    return fmt::format("chunk_fused is a TMA + wgmma kernel: needs sm_90+, {} is sm_{}", hw.name,
                       int(hw.compute_capability));
  if (v == Variant::ThreeKernel || v == Variant::SemiFused) {
    const auto t = linrnn::projection_gemm_for(int(hw.compute_capability));
    GemmSpec g;
    g.tile_m = t.tile_m, g.tile_n = t.tile_n, g.tile_k = t.tile_k, g.stages = t.stages;
    g.consumer_warps = t.warps, g.warp_specialized = t.warp_specialized, g.max_regs_per_thread = t.max_regs_per_thread;
    const std::string why = gemm_cannot_run(hw, g);
    if (!why.empty()) return why;
  }
  for (const auto& k : build(v, hw, shape)) {
    const std::string why = why_kernel_does_not_fit(hw, k);
    if (!why.empty()) return why;
  }
  return {};
}

}  // namespace

std::vector<VariantModel> linrnn_variant_models() {
  return enum_variant_models<Variant>(
      "linrnn",
      {
          {Variant::ThreeKernel, "three_kernel", "GEMM, scan kernel, gate kernel; u, a, z, h through HBM"},
          {Variant::SemiFused, "semi_fused", "library GEMM, then one scan + gate kernel"},
          {Variant::FullFused, "full_fused", "one kernel, per-timestep vector-matrix products on FMA pipes"},
          {Variant::ChunkFused, "chunk_fused", "one persistent TMA/wgmma GEMM, the scan in an epilogue warpgroup under the next tile, h carried"},
      },
      [](Variant v, const HardwareProfile& hw, const ShapeArgs& s) { return cannot_run(v, hw, s); },
      [](Variant v, const HardwareProfile& hw, const ShapeArgs& s) { return build(v, hw, s); });
}

}  // namespace overlap::sim
