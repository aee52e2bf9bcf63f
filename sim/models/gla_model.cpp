// gla (chunkwise gated linear attention, forward): the six schedule x state-carry variants,
// built from cuda/gla/gla_tiling.hpp so the model and the kernels share one tiling.
//
// Work per chunk of C steps for a CTA owning V-columns [block_v] of one (b, h) follows SPEC's
// chunked form: cumulative gate sums, exponents anchored per sub-chunk, the gated Q K^T
// (recomputed by every V-block CTA), the decay mask, A V, q S_n and the state update.
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "cuda/gla/gla_tiling.hpp"
#include "sim/occupancy.hpp"
#include "sim/gemm_model.hpp"
#include "sim/tile_loop.hpp"
#include "sim/variants.hpp"

namespace overlap::sim {
namespace {

using gla::Schedule;

// q, k, v are bf16; the log gate g is fp32 (ref/gla/inputs.hpp).
constexpr double kGateBytes = 4;
using gla::StateCarry;

struct GlaDims {
  std::int64_t B, T, H, K, V;
  bool h0, hT;
};

GlaDims dims(const ShapeArgs& s) {
  return {shape_size(s, "gla", "B"), shape_size(s, "gla", "T"), shape_size(s, "gla", "H"),
          shape_size(s, "gla", "K"), shape_size(s, "gla", "V"), shape_value(s, "h0", 0) != 0,
          shape_value(s, "hT", 0) != 0};
}

const char* schedule_name(Schedule s) {
  return s == Schedule::Sequential ? "sequential" : s == Schedule::Pipelined ? "pipelined" : "pingpong";
}

// The pieces every gla kernel is assembled from: which copy and MMA instructions the schedule
// uses, and the CTA resources from the tiling.
struct GlaKernelBase {
  gla::Tiling t;
  CopyEngine engine;
  TensorPath path;

  GlaKernelBase(const HardwareProfile& hw, Schedule s, StateCarry c, const GlaDims& d)
      : t(gla::tiling_for(s, c, int(d.K), int(d.V))) {
    const bool specialized = t.producer_warps > 0;
    // Pingpong is TMA + wgmma; the others are written with cp.async and mma.sync (ld/st where
    // the GPU has no cp.async).
    engine = specialized ? CopyEngine::Tma : (hw.copy_engine == CopyEngine::Tma ? CopyEngine::CpAsync : hw.copy_engine);
    path = specialized ? TensorPath::Warpgroup : TensorPath::WarpMma;
  }

  KernelSpec shell(std::string name, std::int64_t ctas, const GlaDims& d) const {
    KernelSpec k;
    k.name = std::move(name);
    k.ctas = ctas;
    k.threads_per_cta = t.threads();
    // Warp-specialized kernels rebalance registers with setmaxnreg: the tiling's budget is the
    // consumers'; the producer warp drops to kProducerRegsPerThread.
    k.regs_per_cta = t.producer_warps > 0
                         ? regs_for_warps(4 * t.consumer_warpgroups, t.max_regs_per_thread) +
                               regs_for_warps(t.producer_warps, kProducerRegsPerThread)
                         : regs_for_warps(t.compute_warps, t.max_regs_per_thread);
    k.smem_bytes = std::int64_t(t.smem_bytes(int(d.K), int(d.V)));
    return k;
  }

  LoopSchedule schedule() const {
    LoopSchedule s;
    s.stages = t.stages;
    if (t.producer_warps > 0) {
      s.kind = LoopSchedule::Kind::WarpSpecialized;
      s.producer_warps = t.producer_warps;
      s.consumer_warpgroups = t.consumer_warpgroups;
      s.consumers_alternate = t.consumer_warpgroups > 1;
    } else {
      s.compute_warps = t.compute_warps;
    }
    return s;
  }
};

// Fused state carry: one pass per (b, h, V-block), S on chip, chunks in order.
KernelSpec fused_kernel(const HardwareProfile& hw, Schedule s, const GlaDims& d) {
  const GlaKernelBase base(hw, s, StateCarry::Fused, d);
  const auto& t = base.t;
  const double C = t.chunk, K = double(d.K), bv = t.block_v, anchors = double(t.chunk) / t.subchunk;
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
  loop.compute = {run(Unit::Fma, C * K, "gate cumsum"),
                  run(Unit::Sfu, C * K * (anchors + 2), "exp gates"),
                  run(Unit::Fma, C * K * (anchors + 1), "gate q, k"),
                  mma(2 * C * C * K, Precision::Bf16, base.path, "q k^T"),
                  run(Unit::Fma, C * C, "decay mask"),
                  mma(2 * C * C * bv, Precision::Bf16, base.path, "A v")};
  loop.carried = {mma(2 * C * K * bv, Precision::Bf16, base.path, "q S"),
                  mma(2 * K * C * bv, Precision::Bf16, base.path, "state update"),
                  run(Unit::Fma, K * bv + C * bv, "decay state, add")};
  loop.stores = {store(C * bv * 2, base.engine, "store o")};
  loop.async_stores = base.engine == CopyEngine::Tma;
  if (d.h0) loop.prologue.push_back(load(K * bv * 4, 1.0, base.engine, "load h0"));
  if (d.hT) loop.epilogue.push_back(store(K * bv * 4, base.engine, "store hT"));
  build_tile_loop(k, loop, base.schedule());
  return k;
}

// Materialized state carry (as flash-linear-attention): kernel 1 walks the chunks and writes
// every S_n; kernel 2 is parallel over chunks and reads them back.
std::vector<KernelSpec> materialized_kernels(const HardwareProfile& hw, Schedule s, const GlaDims& d) {
  const GlaKernelBase base(hw, s, StateCarry::Materialized, d);
  const auto& t = base.t;
  const double C = t.chunk, K = double(d.K), bv = t.block_v, anchors = double(t.chunk) / t.subchunk;
  const double v_blocks = double(d.V / t.block_v);
  const std::int64_t chunks = (d.T + t.chunk - 1) / t.chunk;

  KernelSpec states = base.shell(fmt::format("gla_{}_states", schedule_name(s)), d.B * d.H * (d.V / t.block_v), d);
  TileLoop a;
  a.tiles = int(chunks);
  a.loads = {load(C * K * 2, 1.0 / v_blocks, base.engine, "load k"), load(C * K * kGateBytes, 1.0 / v_blocks, base.engine, "load g"),
             load(C * bv * 2, 1.0, base.engine, "load v")};
  a.compute = {run(Unit::Fma, C * K, "gate cumsum"), run(Unit::Sfu, C * K, "exp gates"), run(Unit::Fma, C * K, "gate k")};
  a.carried = {mma(2 * K * C * bv, Precision::Bf16, base.path, "state update"), run(Unit::Fma, K * bv, "decay state")};
  a.stores = {store(K * bv * 4, base.engine, "store S_n")};
  a.async_stores = true;  // the state is written from shared memory and not waited for
  if (d.h0) a.prologue.push_back(load(K * bv * 4, 1.0, base.engine, "load h0"));
  if (d.hT) a.epilogue.push_back(store(K * bv * 4, base.engine, "store hT"));
  build_tile_loop(states, a, base.schedule());

  // Kernel 2: one CTA per (b, h, group of chunks_per_cta chunks, V-block); its stage ring
  // prefetches across the chunks of its group, each chunk reading its S_n back.
  const std::int64_t groups = (chunks + t.chunks_per_cta - 1) / t.chunks_per_cta;
  KernelSpec out = base.shell(fmt::format("gla_{}_output", schedule_name(s)), d.B * d.H * groups * (d.V / t.block_v), d);
  TileLoop b;
  b.tiles = int(std::min<std::int64_t>(t.chunks_per_cta, chunks));
  b.loads.push_back(load(C * K * 2, 1.0 / v_blocks, base.engine, "load q"));
  b.loads.push_back(load(C * K * 2, 1.0 / v_blocks, base.engine, "load k"));
  b.loads.push_back(load(C * K * kGateBytes, 1.0 / v_blocks, base.engine, "load g"));
  b.loads.push_back(load(C * bv * 2, 1.0, base.engine, "load v"));
  b.loads.push_back(load(K * bv * 4, 1.0, base.engine, "load S_n"));
  b.compute = {run(Unit::Fma, C * K, "gate cumsum"),
               run(Unit::Sfu, C * K * (anchors + 2), "exp gates"),
               run(Unit::Fma, C * K * (anchors + 1), "gate q, k"),
               mma(2 * C * C * K, Precision::Bf16, base.path, "q k^T"),
               run(Unit::Fma, C * C, "decay mask"),
               mma(2 * C * C * bv, Precision::Bf16, base.path, "A v"),
               mma(2 * C * K * bv, Precision::Bf16, base.path, "q S_n"),
               run(Unit::Fma, C * bv, "add")};
  b.stores = {store(C * bv * 2, base.engine, "store o")};
  b.async_stores = base.engine == CopyEngine::Tma;
  build_tile_loop(out, b, base.schedule());
  return {states, out};
}

std::string cannot_run(const HardwareProfile& hw, Schedule s, StateCarry c, const ShapeArgs& shape) {
  const GlaDims d = dims(shape);
  if (d.K % 16 != 0 || d.K > 256) return fmt::format("gla needs K a multiple of 16 and at most 256 (K={})", d.K);
  const gla::Tiling t = gla::tiling_for(s, c, int(d.K), int(d.V));
  if (d.V % 16 != 0 || d.V % t.block_v != 0)
    return fmt::format("gla needs V a multiple of 16 and of block_v={} (V={})", t.block_v, d.V);
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
                                                   : "TMA producer warp + 2 alternating wgmma consumer warpgroups";
      m.description = fmt::format("{}; {}", how,
                                  fused ? "state kept on chip, one pass" : "chunk states through HBM, two kernels");
      m.cannot_run = [s, c](const HardwareProfile& hw, const ShapeArgs& shape) { return cannot_run(hw, s, c, shape); };
      m.build = [s, c](const HardwareProfile& hw, const ShapeArgs& shape) {
        const GlaDims d = dims(shape);
        return c == StateCarry::Fused ? std::vector<KernelSpec>{fused_kernel(hw, s, d)} : materialized_kernels(hw, s, d);
      };
      v.push_back(std::move(m));
    }
  return v;
}

}  // namespace overlap::sim
