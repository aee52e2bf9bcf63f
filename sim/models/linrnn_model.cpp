// linrnn (projection -> gated scan -> SiLU gate): the four variants of SPEC, built from
// cuda/linrnn/linrnn_tiling.hpp. The scan h_t = a_t h_{t-1} + (1 - a_t) u_t is a chain of
// dependent FMAs per channel: it is modelled as a Delay of fma_latency per step, which no
// amount of bandwidth shortens; everything else is unit work and copies.
#include <algorithm>

#include "core/error.hpp"
#include "cuda/linrnn/linrnn_tiling.hpp"
#include "sim/gemm_model.hpp"
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

CopyEngine async_engine(const HardwareProfile& hw) { return hw.copy_engine; }
TensorPath mma_path(const HardwareProfile& hw) { return hw.has_wgmma() ? TensorPath::Warpgroup : TensorPath::WarpMma; }

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
  return gemm_kernel(hw, g);
}

// A scan kernel: T walked in chunks loaded whole (double-buffered), elementwise math by all
// warps, the dependent chain by one warp in registers. `inputs` tensors of 2 bytes per element are read per step;
// `outputs` of `out_bytes` are written.
KernelSpec scan_kernel(const HardwareProfile& hw, const LinrnnDims& d, std::string name, int inputs,
                       double out_bytes, double sfu_per_step, double fma_per_step) {
  const auto t = linrnn::scan_tiling();
  KernelSpec k;
  k.name = std::move(name);
  k.ctas = d.B * ceil_div(d.dv, t.channels_per_cta);
  k.threads_per_cta = t.threads;
  k.regs_per_cta = regs_for_warps(t.threads / 32, t.max_regs_per_thread);
  const double ch = t.channels_per_cta, ct = t.chunk_t;
  k.smem_bytes = std::int64_t(t.stages * inputs * ct * ch * 2);
  TileLoop loop;
  loop.tiles = int(ceil_div(d.T, t.chunk_t));
  for (int i = 0; i < inputs; ++i) loop.loads.push_back(load(ct * ch * 2, 1.0, async_engine(hw), "load chunk"));
  loop.compute = {run(Unit::Sfu, ct * ch * sfu_per_step, "sigmoid / silu"), run(Unit::Fma, ct * ch * fma_per_step, "elementwise")};
  loop.carried = {delay(ct * hw.fma_latency_cycles * hw.cycle_ns(), "scan chain")};
  loop.stores = {store(ct * ch * out_bytes, async_engine(hw), "store chunk")};
  LoopSchedule sch;
  sch.stages = t.stages;
  sch.compute_warps = t.threads / 32;
  build_tile_loop(k, loop, sch);
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
  loop.loads = {load(per_cta * 4, 1.0, CopyEngine::LdSt, "load h"), load(per_cta * 2, 1.0, CopyEngine::LdSt, "load z")};
  loop.compute = {run(Unit::Sfu, per_cta * 2, "silu"), run(Unit::Fma, per_cta * 3, "gate")};
  loop.stores = {store(per_cta * 2, CopyEngine::LdSt, "store y")};
  LoopSchedule sch;
  sch.compute_warps = t.threads / 32;
  build_tile_loop(k, loop, sch);
  return k;
}

// One kernel, per timestep a vector-matrix product on the FMA pipes: every step waits for
// x_t (a dependent global load: nothing is in flight ahead of it), a CTA-wide reduction, then
// one scan step. This is why it loses.
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
  loop.compute = {run(Unit::Fma, double(d.d) * cols, "x_t W (FMA)"),
                  delay(hw.sync_latency_cycles * hw.cycle_ns(), "reduce across warps"),
                  run(Unit::Sfu, t.channels * 3.0, "sigmoid, silu")};
  loop.carried = {delay(hw.fma_latency_cycles * hw.cycle_ns(), "scan step")};
  loop.stores = {store(t.channels * 2.0, CopyEngine::LdSt, "store y_t")};
  loop.async_stores = true;
  if (resident) loop.prologue = {load(w_bytes, 1.0 / double(d.B), CopyEngine::LdSt, "load W slice")};
  LoopSchedule sch;  // stages = 1: each x_t is loaded when needed
  sch.compute_warps = t.threads / 32;
  build_tile_loop(k, loop, sch);
  return k;
}

// One kernel: per chunk of timesteps a tensor-core GEMM (x chunk @ W slice), then the scan
// over the chunk carrying h between chunks.
KernelSpec chunk_fused_kernel(const HardwareProfile& hw, const LinrnnDims& d) {
  const auto t = linrnn::chunk_fused_tiling();
  KernelSpec k;
  k.name = "linrnn_chunk_fused";
  const std::int64_t dv_blocks = ceil_div(d.dv, t.block_dv);
  k.ctas = d.B * dv_blocks;
  k.threads_per_cta = 32 * t.warps;
  k.regs_per_cta = regs_for_warps(t.warps, t.max_regs_per_thread);
  const double C = t.chunk_t, n = 3.0 * t.block_dv, w_bytes = double(d.d) * n * 2;
  // W stays resident when it is small enough and the whole layout fits the GPU's shared
  // memory; otherwise x and W stream through the ring in d-slices.
  const auto layout = [&](bool resident_w) {
    const double x_stage = C * (resident_w ? double(d.d) : double(t.tile_k)) * 2;
    const double w_stage = resident_w ? 0 : double(t.tile_k) * n * 2;
    return t.stages * (x_stage + w_stage) + (resident_w ? w_bytes : 0) + C * n * 4;
  };
  const bool resident = w_bytes <= t.w_resident_max_bytes && layout(true) <= hw.smem_per_cta_KiB * 1024;
  const double x_stage = C * (resident ? double(d.d) : double(t.tile_k)) * 2;
  const double w_stage = resident ? 0 : double(t.tile_k) * n * 2;
  k.smem_bytes = std::int64_t(layout(resident));
  TileLoop loop;
  const CopyEngine e = async_engine(hw);
  if (resident) {
    loop.tiles = int(ceil_div(d.T, t.chunk_t));
    loop.prologue = {load(w_bytes, 1.0 / double(d.B), e, "load W slice")};
    loop.loads = {load(x_stage, 1.0 / double(dv_blocks), e, "load x chunk")};
    loop.compute = {mma(2 * C * double(d.d) * n, Precision::Bf16, mma_path(hw), "x W")};
  } else {
    // W slice streamed with x in d-slices; the scan runs once per chunk (every k-slices).
    const std::int64_t kt = ceil_div(d.d, t.tile_k);
    loop.tiles = int(ceil_div(d.T, t.chunk_t) * kt);
    loop.loads = {load(x_stage, 1.0 / double(dv_blocks), e, "load x slice"),
                  load(w_stage, 1.0 / double(d.B), e, "load W slice")};
    loop.compute = {mma(2 * C * double(t.tile_k) * n, Precision::Bf16, mma_path(hw), "x W (slice)")};
  }
  const int every = resident ? 1 : int(ceil_div(d.d, t.tile_k));
  auto per_chunk = [&](Step s) {
    s.every = every;
    s.phase = every - 1;
    return s;
  };
  loop.compute.push_back(per_chunk(run(Unit::Sfu, C * t.block_dv * 4, "sigmoid, silu")));
  loop.compute.push_back(per_chunk(run(Unit::Fma, C * t.block_dv * 6, "gate math")));
  loop.carried = {per_chunk(delay(C * hw.fma_latency_cycles * hw.cycle_ns(), "scan chain"))};
  loop.stores = {per_chunk(store(C * t.block_dv * 2, e, "store y chunk"))};
  loop.async_stores = e == CopyEngine::Tma;
  LoopSchedule sch;
  sch.stages = t.stages;
  sch.compute_warps = t.warps;
  build_tile_loop(k, loop, sch);
  return k;
}

std::vector<KernelSpec> build(Variant v, const HardwareProfile& hw, const ShapeArgs& shape) {
  const LinrnnDims d = dims(shape);
  switch (v) {
    case Variant::ThreeKernel:
      return {projection(hw, d), scan_kernel(hw, d, "linrnn_scan", 2, 4, 2, 3), gate_kernel(hw, d)};
    case Variant::SemiFused:
      return {projection(hw, d), scan_kernel(hw, d, "linrnn_scan_gate", 3, 2, 4, 6)};
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
          {Variant::ChunkFused, "chunk_fused", "one kernel, per-chunk tensor-core GEMM then scan, h carried"},
      },
      [](Variant v, const HardwareProfile& hw, const ShapeArgs& s) { return cannot_run(v, hw, s); },
      [](Variant v, const HardwareProfile& hw, const ShapeArgs& s) { return build(v, hw, s); });
}

}  // namespace overlap::sim
