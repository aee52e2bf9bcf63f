#include "sim/gemm_model.hpp"

#include <algorithm>
#include <climits>
#include <cmath>

#include "core/error.hpp"
#include "sim/occupancy.hpp"
#include "sim/tile_loop.hpp"

namespace overlap::sim {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

std::int64_t handoff_footprint(const GemmSpec& g) {
  return g.handoff_tile_bytes > 0 ? g.handoff_tile_bytes
                                  : std::int64_t(double(g.tile_m) * g.tile_n * g.handoff_bytes_per_element);
}

KernelSpec shell(const HardwareProfile& hw, const GemmSpec& g) {
  KernelSpec k;
  k.name = g.name;
  const int producer = g.warp_specialized ? 1 : 0;
  const int epilogue_warps = g.epilogue_warpgroup ? 4 : 0;
  k.threads_per_cta = 32 * (g.consumer_warps + producer + epilogue_warps);
  k.regs_per_cta = regs_for_warps(g.consumer_warps, g.max_regs_per_thread) +
                   (producer ? regs_for_warps(1, kProducerRegsPerThread) : 0) +
                   regs_for_warps(epilogue_warps, g.epilogue_max_regs_per_thread);
  const double per_stage = double(g.tile_k) * (g.tile_m * g.a_bytes_per_element + g.b_operands * g.tile_n * g.b_bytes_per_element);
  k.smem_bytes = std::int64_t(per_stage * g.stages) + (g.tma_store ? std::int64_t(g.tile_m) * g.tile_n * 2 : 0) +
                 (g.epilogue_warpgroup ? handoff_footprint(g) : 0);
  k.cluster_size = g.cluster_size;
  (void)hw;
  return k;
}

double tensor_rate(const HardwareProfile& hw, Precision p) {
  return p == Precision::Bf16 ? hw.tensor_bf16_TFLOPs : p == Precision::Fp8 ? hw.tensor_fp8_TFLOPs : hw.tensor_fp4_TFLOPs;
}

}  // namespace

std::string gemm_cannot_run(const HardwareProfile& hw, const GemmSpec& g) {
  if (tensor_rate(hw, g.precision) <= 0)
    return fmt::format("{} has no tensor cores for {} inputs", hw.name,
                       g.precision == Precision::Fp8 ? "fp8" : g.precision == Precision::Fp4 ? "fp4 (NVFP4)" : "16-bit");
  if (g.warp_specialized && !hw.has_wgmma())
    return fmt::format("warp specialization with TMA needs sm_90+; {} is sm_{}", hw.name, int(hw.compute_capability));
  return why_kernel_does_not_fit(hw, shell(hw, g));
}

KernelSpec gemm_kernel(const HardwareProfile& hw, const GemmSpec& g) {
  const std::string why = gemm_cannot_run(hw, g);
  OVERLAP_REQUIRE(why.empty(), "{}", why);
  KernelSpec k = shell(hw, g);
  const std::int64_t mt = ceil_div(g.M, g.tile_m), nt = ceil_div(g.N, g.tile_n), kt = ceil_div(g.K, g.tile_k);
  const std::int64_t out_tiles = g.batch * mt * nt;
  k.ctas = out_tiles;  // provisional, for the occupancy query
  const Occupancy occ = occupancy(hw, k);
  const std::int64_t slots = std::int64_t(hw.sm_count) * occ.ctas_per_sm;
  std::int64_t tiles_per_cta = 1;
  if (g.persistent) {
    // Clusters may leave SMs idle (resident_ctas). Up to one tile per SM, the tiles past the
    // resident ones are a second round that only a few CTAs walk: charged as simulate_kernel's
    // tail wave. Beyond that, every resident CTA walks ceil(tiles / resident) tiles and the
    // busiest sets the time.
    k.ctas = out_tiles <= slots ? out_tiles : resident_ctas(hw, occ.ctas_per_sm, g.cluster_size);
    tiles_per_cta = ceil_div(out_tiles, k.ctas);
  }
  OVERLAP_REQUIRE(tiles_per_cta * kt < (1 << 30), "gemm '{}': too many k-iterations per CTA", g.name);

  // L2 reuse: the output tiles resident at once form a near-square rectangle (the swizzled
  // rasterisation of CUTLASS / cuBLAS); an operand tile is fetched from HBM once per rectangle
  // that needs it, or once overall when both operands fit in half of L2.
  const std::int64_t concurrent = std::min(out_tiles / g.batch > 0 ? out_tiles / g.batch : 1, slots);
  std::int64_t wave_m = std::min(mt, std::int64_t(std::ceil(std::sqrt(double(concurrent)))));
  const std::int64_t wave_n = std::min(nt, ceil_div(concurrent, wave_m));
  wave_m = std::min(mt, ceil_div(concurrent, wave_n));
  const double a_bytes = double(g.batch) * g.M * g.K * g.a_bytes_per_element;
  const double b_bytes = double(g.batch) * g.N * g.K * g.b_bytes_per_element * g.b_operands;
  const bool fits = hw.stays_in_l2(a_bytes + b_bytes);
  const double a_reuse = double(fits ? nt : std::max<std::int64_t>(1, std::min(nt, wave_n)));
  const double b_reuse = double(fits ? mt : std::max<std::int64_t>(1, std::min(mt, wave_m)));

  const CopyEngine engine = hw.copy_engine;
  const TensorPath path = hw.has_wgmma() ? TensorPath::Warpgroup : TensorPath::WarpMma;
  TileLoop loop;
  loop.tiles = int(tiles_per_cta * kt);
  Step a_load = load(double(g.tile_m) * g.tile_k * g.a_bytes_per_element, 1.0 / a_reuse, engine, "load A");
  a_load.k_walk = true;
  if (g.a_multicast > 1) a_load.l2_fraction = 1.0 / g.a_multicast;
  loop.loads.push_back(a_load);
  for (int b = 0; b < g.b_operands; ++b) {
    Step s = load(double(g.tile_n) * g.tile_k * g.b_bytes_per_element, 1.0 / b_reuse, engine,
                  g.b_operands == 1 ? "load B" : fmt::format("load B{}", b + 1));
    s.k_walk = true;
    if (g.b_multicast > 1) s.l2_fraction = 1.0 / g.b_multicast;
    if (g.l2_prefetch_k > g.stages) {
      // The ring's first fill (k-blocks 0 .. stages-1) loads from HBM; with the first k-block's
      // loads the producer prefetches k-blocks stages .. D, then with k-block n's k-block n + D.
      Step prefetch = s;
      prefetch.kind = StepKind::Issue;
      prefetch.l2_prefetch = true;
      prefetch.label = fmt::format("prefetch B{} to L2", b + 1);
      for (int j = g.stages; j <= g.l2_prefetch_k; ++j) {
        prefetch.offset = j;
        prefetch.from = j == g.l2_prefetch_k ? INT_MIN : j;  // the first fill's run once
        prefetch.to = j == g.l2_prefetch_k ? INT_MAX : j + 1;
        loop.prefetches.push_back(prefetch);
      }
      Step first_fill = s;
      first_fill.to = g.stages;
      loop.loads.push_back(first_fill);
      s.hbm_fraction = 0;  // in L2 by the time the ring loads it
      s.from = g.stages;
    }
    loop.loads.push_back(s);
  }
  if (g.eager_release && g.warp_specialized && g.stages > 1)
    loop.compute.push_back(delay(hw.cta_barrier_cycles() * hw.cycle_ns(), "is the stage in? (named barrier)"));
  Step mma_step = mma(2.0 * g.tile_m * g.tile_n * g.tile_k * g.b_operands, g.precision, path, "mma");
  mma_step.mma_n = g.mma_n;
  loop.compute.push_back(mma_step);
  if (g.kblock_extra_ns > 0) loop.compute.push_back(delay(g.kblock_extra_ns, "ring index by division"));
  const double elements = double(g.tile_m) * g.tile_n;
  const auto per_output_tile = [&](Step s) {
    s.every = int(kt);
    s.phase = int(kt - 1);
    return s;
  };
  loop.output.push_back(per_output_tile(run(Unit::Fma, elements * g.epilogue_fma_per_element, "epilogue")));
  if (g.epilogue_sfu_per_element > 0)
    loop.output.push_back(per_output_tile(run(Unit::Sfu, elements * g.epilogue_sfu_per_element, "epilogue SFU")));
  if (g.epilogue_smem_bytes_per_element > 0)
    loop.output.push_back(per_output_tile(run(Unit::Smem, elements * g.epilogue_smem_bytes_per_element, "epilogue smem")));
  if (g.epilogue_load_ns_per_tile > 0)
    loop.output.push_back(per_output_tile(delay(g.epilogue_load_ns_per_tile, "epilogue load waited")));
  if (g.epilogue_sync_ns_per_tile > 0)
    loop.output.push_back(per_output_tile(delay(g.epilogue_sync_ns_per_tile, "cluster exchange")));
  if (g.epilogue_warpgroup)
    loop.handoff.push_back(run(Unit::Smem, elements * g.handoff_bytes_per_element, "hand-off to smem"));
  Step c_store = store(elements * g.c_bytes_per_element, engine, "store C");
  c_store.store_shape = g.c_store_shape;
  loop.stores.push_back(per_output_tile(c_store));
  loop.async_stores = g.tma_store;

  LoopSchedule sch;
  sch.stages = g.stages;
  sch.run_length = int(kt);
  if (g.warp_specialized) {
    sch.kind = LoopSchedule::Kind::WarpSpecialized;
    sch.consumer_warpgroups = std::max(1, g.consumer_warps / 4);
    sch.epilogue_warpgroups = g.epilogue_warpgroup ? 1 : 0;
    // One MMA group in flight (CUTLASS sm90, our dualgemm); with one stage the kernels wait for
    // every MMA before freeing it, and an eager release frees it once its MMAs are done.
    sch.release_after_next_tile = g.stages > 1 && !g.eager_release;
    sch.paired_loads = g.paired_loads;
  } else {
    sch.kind = LoopSchedule::Kind::Prefetch;
    sch.compute_warps = g.consumer_warps;
    sch.refill_after_wait = g.refill_after_wait && g.stages > 1;
  }
  build_tile_loop(k, loop, sch);
  return k;
}

}  // namespace overlap::sim
