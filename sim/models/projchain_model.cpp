// projchain (the GLA input projections q, k, v, g, alpha from x): the fusion variants of SPEC,
// built from cuda/projchain/projchain_tiling.hpp. Whether fusion pays is decided by what the
// GEMM is bound by at a given N = B*T: the activation kernels cost a full HBM round trip of
// their slices plus a launch each, the fused epilogue costs FMA/SFU work inside the GEMM.
#include <algorithm>

#include "core/error.hpp"
#include "cuda/projchain/projchain_tiling.hpp"
#include "sim/gemm_model.hpp"
#include "sim/models/cublas_picks.hpp"
#include "sim/models/generated/projchain_activations_sass.hpp"
#include "sim/sass_mix.hpp"
#include "sim/occupancy.hpp"
#include "sim/tile_loop.hpp"
#include "sim/variants.hpp"

namespace overlap::sim {
namespace {

using projchain::Variant;

struct ProjDims {
  std::int64_t N, d, H, dk;
};

ProjDims dims(const ShapeArgs& s) {
  return {shape_size(s, "projchain", "B") * shape_size(s, "projchain", "T"), shape_size(s, "projchain", "d"),
          shape_size(s, "projchain", "H"), shape_size(s, "projchain", "dk")};
}

GemmSpec gemm_spec(const HardwareProfile& hw, Variant v, std::string name, const ProjDims& d, std::int64_t n) {
  const auto t = projchain::gemm_tiling_for(v, int(hw.compute_capability));
  GemmSpec g;
  g.name = std::move(name);
  g.M = d.N;
  g.N = n;
  g.K = d.d;
  g.tile_m = t.tile_m;
  g.tile_n = t.tile_n;
  g.tile_k = t.tile_k;
  g.stages = t.stages;
  g.consumer_warps = t.consumer_warps;
  g.warp_specialized = t.warp_specialized;
  g.persistent = t.persistent;
  g.tma_store = t.tma_store;
  g.max_regs_per_thread = t.max_regs_per_thread;
  g.cluster_size = t.cluster_size;
  // EpilogueFused's clusters lie along M and share each weight tile by multicast (tiling header);
  // ClusterFused's lie along N and share nothing.
  g.b_multicast = v == Variant::EpilogueFused ? t.cluster_size : 1;
  // The cuBLAS GEMMs of unfused and wide_gemm: the kernel cuBLAS runs where it was observed.
  if (v == Variant::Unfused || v == Variant::WideGemm) apply_cublas_pick(hw, g);
  return g;
}

// A kernel over a bf16 slice of `rows` rows, one CTA per block of rows (activation_tiling()).
KernelSpec slice_kernel(std::string name, std::int64_t rows) {
  const auto t = projchain::activation_tiling();
  KernelSpec k;
  k.name = std::move(name);
  k.ctas = (rows + t.rows_per_cta - 1) / t.rows_per_cta;
  k.threads_per_cta = t.threads;
  k.regs_per_cta = regs_for_warps(t.threads / 32, 40);
  return k;
}

// A copy kernel over `rows` x `cols` bf16, one read and one write of every element (the 2-d
// slice copies where the profile has no copy-engine rate).
KernelSpec copy_kernel(std::string name, std::int64_t rows, std::int64_t cols) {
  const auto t = projchain::activation_tiling();
  KernelSpec k = slice_kernel(std::move(name), rows);
  const double elements = double(t.rows_per_cta) * cols;
  TileLoop loop;
  loop.loads = {load(elements * 2, 1.0, CopyEngine::LdSt, "load slice")};
  loop.stores = {store(elements * 2, CopyEngine::LdSt, "store slice")};
  LoopSchedule sch;
  sch.compute_warps = t.threads / 32;
  build_tile_loop(k, loop, sch);
  return k;
}

// The standalone activation kernels (cuda/projchain/projchain_activations.cu) by the SASS of
// their loops (sim/models/generated/projchain_activations_sass.hpp, the bf16-pair forms the
// validated shapes run): one item a pass (a row's head for l2norm, a warp per item; a pair of
// values for SiLU and sigmoid, a thread per item), every pass's load waiting its latency (the
// stores may alias the next item's loads). A warp's chain is its passes, each the loop body in
// order with the load served from L2 (the SASS timing) plus, where the slice missed L2, DRAM's
// latency past L2's; its issue slots and MUFU operations go to the SM's pipes beside it.
enum class Activation { L2normHeads, Silu, Sigmoid };

KernelSpec activation(const HardwareProfile& hw, std::string name, std::int64_t rows, std::int64_t cols, Activation a,
                      std::int64_t dk, double miss) {
  const auto t = projchain::activation_tiling();
  KernelSpec k = slice_kernel(std::move(name), rows);
  const double warps = t.threads / 32.0, elements = double(t.rows_per_cta) * double(cols);
  const bool norm = a == Activation::L2normHeads;
  const double passes = norm ? double(t.rows_per_cta) * double(cols / dk) / warps : elements / 2 / t.threads;
  const char* fn = norm ? "l2norm_heads_kernelILb1E"
                        : a == Activation::Silu ? "elementwise_kernelINS2_4SiluELb1E" : "elementwise_kernelINS2_7SigmoidELb1E";
  const SassCounts body =
      sass_counts(generated::kProjchainActivationsSass, fn, {norm ? "act.l2norm.loop" : "act.elementwise.loop"});
  const double pass_cycles = body.cycles + miss * (hw.dram_latency_cycles - hw.l2_latency_cycles);
  k.barriers = {{"slice loaded", 1}};
  Role r;
  r.name = "warps";
  r.warps = int(warps);
  r.body.push_back(issued(load(elements * 2, miss, CopyEngine::LdSt, "load slice"), 0, 0));
  for (Step& s : sass_mma_phase(body.times(passes), warps, passes * pass_cycles * hw.cycle_ns(),
                                fmt::format("{:.0f} passes of the loop (SASS)", passes), k.barriers))
    r.body.push_back(std::move(s));
  r.body.push_back(wait(0, 0, "slice loaded"));
  r.body.push_back(store(elements * 2, CopyEngine::LdSt, "store slice"));
  k.roles.push_back(std::move(r));
  return k;
}

// cudaMemcpy2DAsync of a `rows` x `cols` bf16 slice out of the wide intermediate (device to
// device). It runs on a copy engine, no SM taking part: where the profile measured that
// (memcpy2d_GBps), its fixed part (in place of a kernel's launch) and its bytes at that rate, as
// one wait in the stream's order; elsewhere charged as a copy kernel, one read and one write of
// every element.
KernelSpec slice_copy(const HardwareProfile& hw, std::string name, std::int64_t rows, std::int64_t cols) {
  if (hw.memcpy2d_GBps <= 0) return copy_kernel(std::move(name), rows, cols);
  const double bytes = 2.0 * double(rows) * double(cols) * 2;  // read + written
  KernelSpec k;
  k.name = std::move(name) + " (copy engine)";
  k.ctas = 1;
  k.threads_per_cta = 32;
  k.regs_per_cta = regs_for_warps(1, 32);
  k.hbm_bytes = bytes;
  Role r;
  r.name = "copy engine";
  r.warps = 1;
  k.launch_us = hw.memcpy2d_fixed_us;
  r.body = {delay(bytes / hw.memcpy2d_GBps, "2-d copy on a copy engine")};
  k.roles = {r};
  return k;
}

// The activations after the GEMMs, whose outputs (`written` bytes) they read back: from L2
// where those stay there (HardwareProfile::l2_miss_fraction), else from HBM.
std::vector<KernelSpec> activations(const HardwareProfile& hw, const ProjDims& d, double written) {
  const std::int64_t w = d.H * d.dk;
  const double miss = hw.l2_miss_fraction(written);
  return {activation(hw, "projchain_l2norm_k", d.N, w, Activation::L2normHeads, d.dk, miss),
          activation(hw, "projchain_silu_g", d.N, w, Activation::Silu, d.dk, miss),
          activation(hw, "projchain_sigmoid_alpha", d.N, d.H, Activation::Sigmoid, d.dk, miss)};
}

std::vector<KernelSpec> build(Variant v, const HardwareProfile& hw, const ShapeArgs& shape) {
  const ProjDims d = dims(shape);
  const std::int64_t w = d.H * d.dk, wide = 4 * w + d.H;
  std::vector<KernelSpec> ks;
  switch (v) {
    case Variant::Unfused:
      for (const char* n : {"q", "k", "v", "g"})
        ks.push_back(gemm_kernel(hw, gemm_spec(hw, v, fmt::format("projchain_gemm_{}", n), d, w)));
      ks.push_back(gemm_kernel(hw, gemm_spec(hw, v, "projchain_gemm_alpha", d, d.H)));
      for (auto& k : activations(hw, d, double(d.N) * double(wide) * 2)) ks.push_back(std::move(k));
      return ks;
    case Variant::WideGemm:
      ks.push_back(gemm_kernel(hw, gemm_spec(hw, v, "projchain_wide_gemm", d, wide)));
      // q and v are separate outputs: copied out of the intermediate (projchain_forward.cpp).
      ks.push_back(slice_copy(hw, "projchain_copy_q", d.N, w));
      ks.push_back(slice_copy(hw, "projchain_copy_v", d.N, w));
      for (auto& k : activations(hw, d, double(d.N) * double(wide) * 2)) ks.push_back(std::move(k));
      return ks;
    case Variant::EpilogueFused:
    case Variant::ClusterFused: {
      GemmSpec g = gemm_spec(hw, v, v == Variant::EpilogueFused ? "projchain_fused_gemm" : "projchain_cluster_gemm", d, wide);
      // Per output element, averaged over the slices: conversion, k's square-sum + scale
      // (1/4 of columns), silu on g (1/4 of columns: one hardware tanh on the SFU, as the
      // kernel's silu_fast in cuda/common/fast_math.cuh) and one rsqrt per head of k. alpha's
      // H columns (0.2% of them at the reference shape) are left out.
      g.epilogue_fma_per_element = 1 + 0.25 * 3 + 0.25 * 3;
      g.epilogue_sfu_per_element = 0.25 * 1 + 0.25 / double(d.dk);
      // The per-head norm reduces across the warps holding the head: one CTA barrier per
      // tile, or a cluster barrier + DSMEM exchange when a head spans the cluster.
      g.epilogue_sync_ns_per_tile =
          (v == Variant::ClusterFused ? 2 * hw.l2_latency_cycles : hw.sync_latency_cycles) * hw.cycle_ns();
      ks.push_back(gemm_kernel(hw, g));
      return ks;
    }
  }
  return ks;
}

std::string cannot_run(Variant v, const HardwareProfile& hw, const ShapeArgs& shape) {
  const ProjDims d = dims(shape);
  if (d.d % 8 != 0) return fmt::format("projchain needs d a multiple of 8 (d={})", d.d);
  const auto t = projchain::gemm_tiling_for(v, int(hw.compute_capability));
  if (v == Variant::ClusterFused && !hw.has_clusters())
    return fmt::format("cluster_fused needs thread-block clusters and DSMEM (sm_90+); {} is sm_{}", hw.name,
                       int(hw.compute_capability));
  if (v == Variant::EpilogueFused && t.tile_n % d.dk != 0)
    return fmt::format("epilogue_fused needs each head (dk={}) inside one {}-column tile; use cluster_fused", d.dk, t.tile_n);
  if (v == Variant::ClusterFused && (d.dk % t.tile_n != 0 || d.dk / t.tile_n > 8))
    return fmt::format("cluster_fused needs dk={} a multiple of the {}-column tile, at most 8 tiles per head", d.dk, t.tile_n);
  const std::string why = gemm_cannot_run(hw, gemm_spec(hw, v, "projchain_gemm", d, d.H * d.dk));
  if (!why.empty()) return why;
  return {};
}

}  // namespace

std::vector<VariantModel> projchain_variant_models() {
  return enum_variant_models<Variant>(
      "projchain",
      {
          {Variant::Unfused, "unfused", "5 GEMMs + 3 activation kernels (8 launches)"},
          {Variant::WideGemm, "wide_gemm", "1 GEMM on the concatenated weight, 2 slice copies (q, v) + 3 activation kernels"},
          {Variant::EpilogueFused, "epilogue_fused", "1 GEMM, activations and per-head L2 norm in the epilogue"},
          {Variant::ClusterFused, "cluster_fused", "1 GEMM with half-head tiles, L2-norm partials exchanged in a cluster"},
      },
      [](Variant v, const HardwareProfile& hw, const ShapeArgs& s) { return cannot_run(v, hw, s); },
      [](Variant v, const HardwareProfile& hw, const ShapeArgs& s) { return build(v, hw, s); });
}

}  // namespace overlap::sim
