// dualgemm (C = silu(A B1^T) * (A B2^T)): one variant per tiling of
// cuda/dualgemm/dualgemm_tiling.hpp; the operand format comes from the shape key `fmt`
// (0 bf16, 1 fp8 e4m3, 2 nvfp4).
#include "core/error.hpp"
#include "cuda/dualgemm/dualgemm_tiling.hpp"
#include "sim/gemm_model.hpp"
#include "sim/kernel_registers.hpp"
#include "sim/models/generated/dualgemm_registers.hpp"
#include "sim/variants.hpp"

namespace overlap::sim {
namespace {

using dualgemm::OperandFormat;

OperandFormat format_of(const ShapeArgs& s) {
  const std::int64_t f = shape_value(s, "fmt", 0);
  OVERLAP_REQUIRE(f >= 0 && f <= 2, "dualgemm: fmt = {} is not 0 (bf16), 1 (fp8 e4m3) or 2 (nvfp4)", f);
  return OperandFormat(f);
}

// Before sm_90 a variant without warp specialization is the same loop on cp.async and mma.sync
// (the warp-specialized ones need TMA and are refused). Where its stages do not fit the GPU's
// shared memory (T4: 64 KiB), such a kernel would keep fewer: the stages are dropped to what
// fits (down to one), then the tile halved, and the kernel's name says so.
dualgemm::Tiling refit(dualgemm::Tiling t, const HardwareProfile& hw, OperandFormat f) {
  if (t.warp_specialized || hw.has_wgmma()) return t;
  const long limit = long(hw.smem_per_cta_KiB * 1024);
  while (t.smem_bytes(f) > limit) {
    if (t.stages > 1) --t.stages;
    else if (t.tile_n > 64) t.tile_n /= 2;
    else if (t.tile_m > 64) t.tile_m /= 2;
    else break;
  }
  return t;
}

// The consumers' k-block beyond the wgmma where the ring's depth is not a power of two: the
// kernel takes a k-block's stage and phase as `r % Stages` and `(r / Stages) & 1`, a division
// between one wgmma wait and the next wgmma (profile ring_division_cycles, from consumer_chain).
// That experiment also shows a floor at small wgmmas (N = 64, 96: half the wgmma plus 242-294
// clocks) which the kernels' own times do not: 128x48 with 7 stages (N = 96) measures faster
// than that floor allows, so it is not charged.
double ring_division_ns(const dualgemm::Tiling& t, const HardwareProfile& hw) {
  if (hw.ring_division_cycles <= 0 || !hw.has_wgmma() || (t.stages & (t.stages - 1)) == 0) return 0;
  return hw.ring_division_cycles * hw.tensor_cycle_ns();
}

// The template arguments of cuda/dualgemm/dualgemm_kernel.cuh's kernel for a tiling, as they
// appear in its mangled name: <Fp8, BM, BN, Stages, WS, TmaStore, CM, CN, Eager, Pairs, PrefetchK, KAtoms,
// Producers, EarlyScales, LeanEdges>.
std::string mangled_part(const dualgemm::Tiling& t, OperandFormat f) {
  return fmt::format("dualgemm_kernelILb{}ELi{}ELi{}ELi{}ELb{}ELb{}ELi{}ELi{}ELb{}ELb{}ELi{}ELi{}ELi{}ELb{}ELb{}EE",
                     int(f == OperandFormat::Fp8E4m3), t.tile_m, t.tile_n, t.stages, int(t.warp_specialized),
                     int(t.tma_store), t.cluster_m, t.cluster_n, int(t.eager_release), int(t.paired_loads),
                     t.prefetch_k, t.k_atoms, t.producers, int(t.early_scales), int(t.lean_edges));
}

GemmSpec spec(const dualgemm::Tiling& variant, const HardwareProfile& hw, const ShapeArgs& s) {
  const OperandFormat f = format_of(s);
  const dualgemm::Tiling t = refit(variant, hw, f);
  GemmSpec g;
  g.name = fmt::format("dualgemm_{}", t.name);
  if (t.stages != variant.stages || t.tile_m != variant.tile_m || t.tile_n != variant.tile_n)
    g.name += fmt::format(" (refitted to this GPU's shared memory: {}x{}, {} stage{})", t.tile_m, t.tile_n, t.stages,
                          t.stages > 1 ? "s" : "");
  g.batch = shape_value(s, "L", 1);
  g.M = shape_size(s, "dualgemm", "M");
  g.N = shape_size(s, "dualgemm", "N");
  g.K = shape_size(s, "dualgemm", "K");
  g.b_operands = 2;
  g.a_bytes_per_element = g.b_bytes_per_element = dualgemm::operand_bytes_per_element(f);
  g.c_bytes_per_element = 2;
  g.precision = f == OperandFormat::Bf16 ? Precision::Bf16 : f == OperandFormat::Fp8E4m3 ? Precision::Fp8 : Precision::Fp4;
  g.tile_m = t.tile_m;
  g.tile_n = t.tile_n;
  g.tile_k = t.k_atoms * dualgemm::tile_k_for(f);
  g.stages = t.stages;
  g.consumer_warps = t.consumer_warps();
  g.warp_specialized = t.warp_specialized;
  g.persistent = t.warp_specialized;  // the warp-specialized kernels are persistent (CUTLASS sm90)
  g.tma_store = t.tma_store;
  // The TMA-store epilogue writes C from shared memory by TMA; the direct one stores each
  // thread's accumulator pairs (cuda/dualgemm/dualgemm_kernel.cuh's epilogue).
  g.c_store_shape = t.tma_store ? StoreShape::Bulk : StoreShape::Fragment;
  g.cluster_size = t.cluster_size();
  g.b_multicast = t.cluster_m;  // B1 and B2 tiles shared by the cluster's CTAs along M
  g.a_multicast = t.cluster_n;  // A tiles by those along N
  g.eager_release = t.eager_release;
  g.paired_loads = t.paired_loads;
  // Not warp-specialized (TMA + wgmma): consumer thread 0 refills the stage the previous k-block
  // freed after its wgmma.wait, past this k-block's full barrier (dualgemm_kernel.cuh).
  g.refill_after_wait = !t.warp_specialized && hw.has_wgmma();
  g.l2_prefetch_k = t.prefetch_k;
  g.kblock_extra_ns = ring_division_ns(t, hw);
  g.mma_n = 2 * t.warpgroup_n();  // both products from one 64 x 2WN wgmma (dualgemm_kernel.cuh)
  g.max_regs_per_thread = t.max_regs_per_thread();
  // Without warp specialization the consumers keep what ptxas gave them (no setmaxnreg), and
  // where that is few (the 64x64 tile's 63 in bf16) several CTAs share an SM: take the compiled
  // count on the GPUs our sm_90a code runs on. (Warp-specialized: the launch's 168 a thread is
  // the budget above, split by setmaxnreg.)
  if (!t.warp_specialized && hw.compute_capability >= 90 && hw.compute_capability < 100) {
    const int compiled = compiled_registers(generated::kDualgemmRegisters, mangled_part(t, f));
    if (compiled > 0) g.max_regs_per_thread = compiled;
  }
  // silu(x1) * x2 per element: one tanh on the SFU (sigmoid(x) = (1 + tanh(x / 2)) / 2), a few
  // FMAs, two accumulators (dualgemm_kernel.cuh's silu_times).
  g.epilogue_fma_per_element = 5;
  g.epilogue_sfu_per_element = 1;
  // fp8 scales loaded after the k-loop: the epilogue's first multiply waits them. A CTA's first
  // tile finds them in HBM (no earlier load of the call reads them); later tiles may find them
  // in L2 (other CTAs of the row or column share the lines), which this does not distinguish.
  // Loaded before the k-loop (early_scales), the k-loop hides them.
  if (f == OperandFormat::Fp8E4m3 && !t.early_scales) g.epilogue_load_ns_per_tile = hw.dram_latency_cycles * hw.cycle_ns();
  return g;
}

std::string cannot_run(const dualgemm::Tiling& t, const HardwareProfile& hw, const ShapeArgs& s) {
  const OperandFormat f = format_of(s);
  const std::int64_t K = shape_size(s, "dualgemm", "K");
  if (K % 256 != 0) return fmt::format("dualgemm needs K a multiple of 256 (K={})", K);
  if (f == OperandFormat::Nvfp4 && hw.compute_capability < 100)
    return fmt::format("NVFP4 is a Blackwell (sm_100) format; {} is sm_{} (use fmt=0 bf16 or fmt=1 fp8)", hw.name,
                       int(hw.compute_capability));
  if (t.tma_store && !hw.has_wgmma())
    return fmt::format("{}: the TMA-store epilogue needs TMA (sm_90+); {} is sm_{}", t.name, hw.name,
                       int(hw.compute_capability));
  if (t.accumulator_regs_per_thread() + 32 > t.max_regs_per_thread())
    return fmt::format("{}: two {}x{} fp32 accumulators need {} registers per thread, budget {}", t.name, t.tile_m,
                       t.tile_n, t.accumulator_regs_per_thread(), t.max_regs_per_thread());
  return gemm_cannot_run(hw, spec(t, hw, s));
}

}  // namespace

std::vector<VariantModel> dualgemm_variant_models() {
  std::vector<VariantModel> out;
  for (const auto& t : dualgemm::kTilings) {
    VariantModel m;
    m.workload = "dualgemm";
    m.name = t.name;
    m.description = fmt::format("{}x{} tiles, {} stages, {}{}{}{}{}{}{}{}{}{} ({})", t.tile_m, t.tile_n, t.stages,
                                t.warp_specialized ? "TMA producer warpgroup + 2 consumer warpgroups, persistent"
                                                   : "2 warpgroups, one thread issues TMA between its MMAs",
                                t.tma_store ? ", TMA-store epilogue" : "",
                                t.cluster_size() > 1 ? fmt::format(", {}x{} cluster multicasting B along M and A along N",
                                                                   t.cluster_m, t.cluster_n)
                                                     : "",
                                t.eager_release ? ", a stage freed as soon as its MMAs are done where the next is late" : "",
                                t.paired_loads ? ", k-blocks loaded two at a time" : "",
                                t.prefetch_k > 0 ? fmt::format(", B prefetched into L2 {} k-blocks ahead", t.prefetch_k) : "",
                                t.k_atoms > 1 ? fmt::format(", {} K atoms (128 B) a box and stage", t.k_atoms) : "",
                                t.producers > 1 ? fmt::format(", {} producer warps issuing alternate k-blocks", t.producers)
                                                : "",
                                t.early_scales ? ", fp8 scales loaded before the k-loop" : "",
                                t.lean_edges ? ", the first fill before the CTA's barrier, the last store waited for its reads only" : "",
                                t.hypothesis);
    m.cannot_run = [&t](const HardwareProfile& hw, const ShapeArgs& s) { return cannot_run(t, hw, s); };
    m.build = [&t](const HardwareProfile& hw, const ShapeArgs& s) {
      return std::vector<KernelSpec>{gemm_kernel(hw, spec(t, hw, s))};
    };
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace overlap::sim
