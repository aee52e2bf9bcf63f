// Closed-form cases the model must reproduce (issue 3): streaming copy, pure tensor loop,
// 1-stage vs deep pipeline, an epilogue warpgroup's overlap, waves, kernel sequences. Expected values are computed from the
// profile's fields, never hard-coded.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>

#include "sim/api.hpp"
#include "sim/simulate.hpp"
#include "sim/tile_loop.hpp"

namespace overlap::sim {
namespace {

double launch_ns(const HardwareProfile& hw) { return hw.launch_overhead_us * 1e3; }

// The closed forms are of the engine's steady state: a workload's cold first load
// (tma_first_load_ns) holds back only the start of its first kernel, and has its own test
// (ColdStart below).
HardwareProfile steady_profile(const std::string& name) {
  HardwareProfile hw = load_profile(name);
  hw.tma_first_load_ns = 0;
  return hw;
}
double tensor_flops_per_ns_sm(const HardwareProfile& hw) { return hw.bf16_step_TFLOPs() * 1e3 / hw.sm_count; }

// Streams `bytes_per_cta` in and out per CTA, 4-stage pipeline, 2 CTAs per SM.
KernelSpec streaming_copy(const HardwareProfile& hw, std::int64_t ctas, double bytes_per_cta) {
  KernelSpec k;
  k.name = "copy";
  k.ctas = ctas;
  k.threads_per_cta = 128;
  k.regs_per_cta = regs_for_warps(4, 32);
  k.smem_bytes = 4 * 16384;
  TileLoop loop;
  loop.tiles = int(bytes_per_cta / 16384);
  loop.loads = {load(16384, 1.0, hw.copy_engine, "load")};
  loop.stores = {store(16384, hw.copy_engine, "store")};
  loop.async_stores = true;
  LoopSchedule s;
  s.stages = 4;
  build_tile_loop(k, loop, s);
  return k;
}

KernelSpec tensor_loop(std::int64_t ctas, int iterations, double flops) {
  KernelSpec k;
  k.name = "mma";
  k.ctas = ctas;
  k.threads_per_cta = 128;
  k.regs_per_cta = regs_for_warps(4, 200);
  k.tiles = iterations;
  Role r;
  r.name = "warpgroup";
  r.warps = 4;
  r.body = {mma(flops, Precision::Bf16, TensorPath::Warpgroup, "mma")};
  k.roles = {r};
  return k;
}

// One CTA on one SM: per tile a load of `bytes` then `flops` of tensor work; the same warps
// prefetch `stages - 1` tiles ahead (stages = 1: load, wait, compute).
KernelSpec load_compute(const HardwareProfile& hw, int stages, int tiles, double bytes, double flops,
                        bool refill_after_wait = false) {
  KernelSpec k;
  k.name = "pipeline";
  k.ctas = 1;
  k.threads_per_cta = 128;
  k.regs_per_cta = regs_for_warps(4, 128);
  k.smem_bytes = std::int64_t(stages * bytes);
  TileLoop loop;
  loop.tiles = tiles;
  loop.loads = {load(bytes, 1.0, CopyEngine::Tma, "load")};
  loop.compute = {mma(flops, Precision::Bf16, TensorPath::Warpgroup, "mma")};
  LoopSchedule s;
  s.stages = stages;
  s.refill_after_wait = refill_after_wait;
  build_tile_loop(k, loop, s);
  return k;
}

// A warp-specialized loop of `outputs` output tiles, each `kt` k-tiles of `flops` tensor work,
// then an epilogue of `epilogue_ns` (a latency chain: it occupies no unit). With
// epilogue_warpgroups = 0 the consumers run it; with 1 an epilogue role runs it from the
// hand-off buffer while the consumers go on with the next output tile.
KernelSpec handoff_loop(int outputs, int kt, double flops, double epilogue_ns, int epilogue_warpgroups,
                        int epilogue_every = 1) {
  KernelSpec k;
  k.name = "handoff";
  k.ctas = 1;
  k.threads_per_cta = 128 * (3 + epilogue_warpgroups);
  k.regs_per_cta = regs_for_warps(4 * (3 + epilogue_warpgroups), 128);
  k.smem_bytes = 8 * 1024;
  TileLoop loop;
  loop.tiles = outputs * kt;
  loop.loads = {load(1024, 1.0, CopyEngine::Tma, "load")};
  loop.compute = {mma(flops, Precision::Bf16, TensorPath::Warpgroup, "mma")};
  // On the last k-tile of every `epilogue_every`-th output tile.
  Step e = delay(epilogue_ns, "epilogue");
  e.every = kt * epilogue_every;
  e.phase = kt - 1;
  loop.output = {e};
  LoopSchedule s;
  s.kind = LoopSchedule::Kind::WarpSpecialized;
  s.stages = 8;  // small tiles: deep enough that the loads' latency hides behind the MMAs
  s.run_length = kt;
  s.consumer_warpgroups = 2;
  s.epilogue_warpgroups = epilogue_warpgroups;
  build_tile_loop(k, loop, s);
  return k;
}

// Parameterised over every built-in profile and a size.
class ClosedForm : public ::testing::TestWithParam<std::tuple<std::string, int>> {
 protected:
  HardwareProfile hw = steady_profile(std::get<0>(GetParam()));
  int scale = std::get<1>(GetParam());
};

TEST_P(ClosedForm, StreamingCopyIsBytesOverBandwidthPlusLaunch) {
  const double per_cta = 16384.0 * 64 * scale;
  const std::int64_t ctas = std::int64_t(hw.sm_count) * 2;
  const KernelResult r = simulate_kernel(hw, streaming_copy(hw, ctas, per_cta));
  const double bytes = 2 * per_cta * double(ctas);
  const double expected = launch_ns(hw) + bytes / hw.hbm_bandwidth_GBps;
  EXPECT_NEAR(r.time_ns / expected, 1.0, 0.05) << r.time_ns << " vs " << expected;
  EXPECT_DOUBLE_EQ(r.hbm_bytes, bytes);
}

TEST_P(ClosedForm, TensorLoopIsFlopsOverRate) {
  const int iterations = 100 * scale;
  const double flops = 2.0 * 128 * 128 * 64;
  const KernelResult r = simulate_kernel(hw, tensor_loop(std::int64_t(hw.sm_count), iterations, flops));
  const double rate = tensor_flops_per_ns_sm(hw);  // before Hopper mma.sync is the peak path
  const double expected = launch_ns(hw) + iterations * flops / rate;
  EXPECT_NEAR(r.time_ns / expected, 1.0, 0.01);
}

TEST_P(ClosedForm, OneStagePipelineIsLoadPlusComputeDeepIsMax) {
  // One SM alone: copies run at its L2->SM port; loads also pay the DRAM latency.
  const double port = std::min({hw.sm_port_bytes_per_clk * hw.clock_MHz * 1e-3, hw.l2_bandwidth_GBps, hw.hbm_bandwidth_GBps});
  const double bytes = 4096;  // small tiles: the deep ring must fit 64 KiB on T4
  const double t_load = bytes / port;
  const double flops = t_load * tensor_flops_per_ns_sm(hw);  // compute time == transfer time
  const double latency = hw.dram_latency_cycles * 1e3 / hw.clock_MHz;
  const int tiles = 50 * scale;
  const double one = simulate_kernel(hw, load_compute(hw, 1, tiles, bytes, flops)).time_ns - launch_ns(hw);
  EXPECT_NEAR(one / (tiles * (t_load + latency + t_load)), 1.0, 0.03);
  // Deep enough to cover the latency: ~max(load, compute) per tile after the fill.
  const int deep = 3 + int(std::ceil(latency / t_load));
  const double many = simulate_kernel(hw, load_compute(hw, deep, tiles, bytes, flops)).time_ns - launch_ns(hw);
  EXPECT_NEAR(many / ((tiles + 1) * t_load + latency), 1.0, 0.03);
}

// A refill issued only once the current tile's data has landed (a TMA consumer refilling between
// its wgmmas) keeps one load fewer in flight: with two stages the loads follow each other, one
// latency and transfer a tile, where a cp.async-style ring overlaps two of them.
TEST_P(ClosedForm, RefillAfterTheWaitKeepsOneLoadFewerInFlight) {
  const double port = std::min({hw.sm_port_bytes_per_clk * hw.clock_MHz * 1e-3, hw.l2_bandwidth_GBps, hw.hbm_bandwidth_GBps});
  const double bytes = 4096, t_load = bytes / port, latency = hw.dram_latency_cycles * 1e3 / hw.clock_MHz;
  const int tiles = 50 * scale;
  const double flops = 0.1 * t_load * tensor_flops_per_ns_sm(hw);
  const double serial = simulate_kernel(hw, load_compute(hw, 2, tiles, bytes, flops, true)).time_ns - launch_ns(hw);
  EXPECT_NEAR(serial / (tiles * (t_load + latency)), 1.0, 0.05);
  const double ring = simulate_kernel(hw, load_compute(hw, 2, tiles, bytes, flops)).time_ns - launch_ns(hw);
  EXPECT_LT(ring, 0.7 * serial);
}

// Every SM reading L2-resident tiles: each byte costs the larger of its SM's share of L2's
// bandwidth and its own L2->SM port. A tile multicast to a cluster of n (l2_fraction 1/n) is
// read from L2 once for n SMs, so only the port is left when the L2 share was the limit. TMA
// loads take the TMA stream's measured L2 rate where the profile has one, other loads (and TMA
// loads without it) l2_bandwidth_GBps.
TEST_P(ClosedForm, L2ResidentLoadsShareL2AndMulticastDividesTheShare) {
  const double sms = hw.sm_count, port = hw.sm_port_bytes_per_clk * hw.clock_MHz * 1e-3;
  const double bytes = 16384, tiles = 200 * scale;
  for (const CopyEngine engine : {hw.copy_engine, CopyEngine::LdSt}) {
    const double l2_GBps =
        engine == CopyEngine::Tma && hw.tma_l2_bandwidth_GBps > 0 ? hw.tma_l2_bandwidth_GBps : hw.l2_bandwidth_GBps;
    for (double l2_fraction : {1.0, 0.5, 0.25}) {
      KernelSpec k = streaming_copy(hw, hw.sm_count, bytes * tiles);
      TileLoop loop;
      loop.tiles = int(tiles);
      Step s = load(bytes, 0.0, engine, "load");
      s.l2_fraction = l2_fraction;
      loop.loads = {s};
      LoopSchedule sch;
      sch.stages = 4;
      k.roles.clear();
      k.barriers.clear();
      build_tile_loop(k, loop, sch);
      const double per_byte = std::max(l2_fraction * sms / l2_GBps, 1.0 / port);
      const double expected = tiles * bytes * per_byte;
      const double measured = simulate_kernel(hw, k).time_ns - launch_ns(hw);
      EXPECT_NEAR(measured / expected, 1.0, 0.03)
          << "l2_fraction " << l2_fraction << ", engine " << copy_engine_name(engine);
    }
  }
}

// Consumers that keep one MMA group in flight free stage n only once tile n+1 is in: with two
// stages one load is in flight while they wait, not two. Small loads, so each tile costs about
// one load latency: the held ring takes twice as long as the free one.
TEST_P(ClosedForm, HoldingAStageUntilTheNextTileHalvesTheLoadsInFlight) {
  const int tiles = 40 * scale;
  const auto time = [&](bool hold) {
    KernelSpec k;
    k.name = "held ring";
    k.ctas = 1;
    k.threads_per_cta = 384;
    k.regs_per_cta = regs_for_warps(12, 64);
    k.smem_bytes = 2 * 1024;
    TileLoop loop;
    loop.tiles = tiles;
    loop.loads = {load(1024, 1.0, hw.copy_engine, "load")};
    loop.compute = {mma(1024, Precision::Bf16, TensorPath::Warpgroup, "mma")};
    LoopSchedule sch;
    sch.kind = LoopSchedule::Kind::WarpSpecialized;
    sch.stages = 2;
    sch.run_length = tiles;
    sch.consumer_warpgroups = 2;
    sch.release_after_next_tile = hold;
    build_tile_loop(k, loop, sch);
    return simulate_kernel(hw, k).time_ns - launch_ns(hw);
  };
  EXPECT_NEAR(time(true) / time(false), 2.0, 0.15);
}

// Clusters of 4 CTAs that each take a whole SM: only the profile's measured cluster slots are
// resident at once (an H100 holds 30, not 33), so CTAs past 4 x slots run as a tail wave; a
// profile without the measurement falls back to sm_count / 4.
TEST_P(ClosedForm, ClustersFillOnlyTheMeasuredClusterSlots) {
  if (!hw.has_clusters()) GTEST_SKIP() << hw.name << " has no thread-block clusters";
  const double flops = 2.0 * 128 * 128 * 64;
  HardwareProfile measured = hw, unmeasured = hw;
  measured.max_clusters_of_4 = std::floor(hw.sm_count / 4) - 3;
  unmeasured.max_clusters_of_4 = 0;
  EXPECT_EQ(unmeasured.cluster_slots(4), int(hw.sm_count) / 4);
  EXPECT_EQ(measured.cluster_slots(4), int(measured.max_clusters_of_4));
  KernelSpec k = tensor_loop(4 * (int(hw.sm_count) / 4), 50 * scale, flops);
  k.smem_bytes = std::int64_t(hw.smem_per_sm_KiB * 1024 / 2 + 1);  // one CTA per SM
  k.cluster_size = 4;
  const KernelResult all = simulate_kernel(unmeasured, k), fewer = simulate_kernel(measured, k);
  EXPECT_EQ(all.full_waves, 1);
  EXPECT_EQ(all.tail_ctas, 0);
  EXPECT_EQ(fewer.full_waves, 1);
  EXPECT_EQ(fewer.tail_ctas, 12);
  EXPECT_NEAR((fewer.time_ns - launch_ns(hw)) / (2 * (all.time_ns - launch_ns(hw))), 1.0, 0.01);
}

// Mainloop M per output tile, epilogue E: the consumers alone take outputs · (M + E); with an
// epilogue role the two overlap, outputs · max(M, E) + min(M, E) (the first mainloop or the
// last epilogue runs alone). Few output tiles, so that the lone min(M, E) is 10% of the total;
// `start` (the first loads' latency) is measured from the same loop without an epilogue.
TEST_P(ClosedForm, EpilogueWarpgroupOverlapsTheNextMainloop) {
  const int kt = 8 * scale, outputs = 4;
  const double flops = 2.0 * 128 * 128 * 64;
  // One CTA: the launch holds one SM, at the clock measured for few (tensor_clock_boost).
  const double mainloop = kt * flops / (tensor_flops_per_ns_sm(hw) * hw.tensor_clock_boost(1));
  const auto time = [&](double epilogue, int warpgroups, int every = 1) {
    return simulate_kernel(hw, handoff_loop(outputs, kt, flops, epilogue, warpgroups, every)).time_ns - launch_ns(hw);
  };
  const double start = time(0, 1) - outputs * mainloop;
  EXPECT_LT(start, 0.1 * outputs * mainloop);
  for (double ratio : {0.5, 2.0}) {
    const double epilogue = ratio * mainloop;
    const double serial = start + outputs * (mainloop + epilogue);
    const double overlapped = start + outputs * std::max(mainloop, epilogue) + std::min(mainloop, epilogue);
    EXPECT_NEAR(time(epilogue, 0) / serial, 1.0, 0.01) << "epilogue / mainloop " << ratio;
    EXPECT_NEAR(time(epilogue, 1) / overlapped, 1.0, 0.01) << "epilogue / mainloop " << ratio;
  }
  // The hand-off buffer holds one tile: an epilogue of 2M on every other output tile (none on
  // the rest) makes the consumers wait for it, 3M per pair of output tiles, where a deeper
  // buffer would smooth it to the average (2M per pair).
  EXPECT_NEAR(time(2 * mainloop, 1, 2) / (start + outputs / 2 * 3 * mainloop), 1.0, 0.01);
}

TEST_P(ClosedForm, OneCtaMoreThanTheSmsIsTwoWaves) {
  const std::int64_t sms = std::int64_t(hw.sm_count);
  const double flops = 2.0 * 128 * 128 * 64;
  // Shared memory for just one CTA per SM.
  const auto one_per_sm = [&](KernelSpec k) {
    k.smem_bytes = std::int64_t(hw.smem_per_sm_KiB * 1024 / 2 + 1);
    return k;
  };
  const double one = simulate_kernel(hw, one_per_sm(tensor_loop(sms, 50 * scale, flops))).time_ns - launch_ns(hw);
  const KernelResult r = simulate_kernel(hw, one_per_sm(tensor_loop(sms + 1, 50 * scale, flops)));
  EXPECT_EQ(r.full_waves, 1);
  EXPECT_EQ(r.tail_ctas, 1);
  EXPECT_NEAR((r.time_ns - launch_ns(hw)) / (2 * one), 1.0, 0.01);
}

// A kernel queued right behind another costs the measured gap of one more empty kernel where the
// profile has it (overlap calibrate's queued_kernel_gap_us), the first a whole launch.
TEST_P(ClosedForm, KernelSequenceIsSumPlusLaunches) {
  const KernelSpec a = tensor_loop(std::int64_t(hw.sm_count), 20 * scale, 1e6);
  const KernelSpec b = streaming_copy(hw, std::int64_t(hw.sm_count), 16384.0 * 16 * scale);
  const double ta = simulate_kernel(hw, a).time_ns, tb = simulate_kernel(hw, b, 0, nullptr, true).time_ns;
  const double gap_ns = (hw.queued_kernel_gap_us > 0 ? hw.queued_kernel_gap_us : hw.launch_overhead_us) * 1e3;
  EXPECT_NEAR(tb - simulate_kernel(hw, b).time_ns, gap_ns - launch_ns(hw), 1e-6);
  const Prediction p = predict_kernels(hw, "test", "sequence", ShapeArgs{}, {a, b});
  EXPECT_NEAR(p.time_us * 1e3 / (ta + tb), 1.0, 1e-9);
  EXPECT_NEAR(p.units.at("launch"), (launch_ns(hw) + gap_ns) / (ta + tb), 1e-9);
  EXPECT_EQ(p.kernels.size(), 2u);
}

INSTANTIATE_TEST_SUITE_P(Profiles, ClosedForm,
                         ::testing::Combine(::testing::Values("T4", "A100", "H100", "H200", "B200"), ::testing::Values(1, 3)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_x" + std::to_string(std::get<1>(info.param));
                         });

// A GEMM operand's walk loads (Step::k_walk, TMA) as overlap calibrate measured them: the SM's
// walk loads, of one tensor or several, go no faster than tma_walk_sm_GBps together (less beside
// wgmma; no tensor has a rate of its own), misses stream from HBM
// beside the SM's side, and L2 prefetches take the SM's TMA; a profile without the
// measurements charges them as other TMA loads (the SM's share of tma_l2_bandwidth_GBps, or
// its port).
// A GEMM-like k-loop of `tensors` walk loads of `box_bytes` (16 KiB unless given) a tile (the first
// tensor's a `first_misses` fraction from HBM) and one MMA of `flops`, on `per_sm` CTAs an SM of
// `stages` stages each.
constexpr double kWalkBytes = 16384;
constexpr int kWalkTiles = 400;
KernelSpec walk_kernel(const HardwareProfile& hw, int tensors, double flops, double first_misses, bool prefetch_second,
                       int per_sm = 1, int stages = 4, double box_bytes = kWalkBytes) {
  KernelSpec k;
  k.name = "walk";
  k.ctas = per_sm * std::int64_t(hw.sm_count);
  k.threads_per_cta = 384;
  k.regs_per_cta = regs_for_warps(12, 64);
  k.smem_bytes = stages * tensors * std::int64_t(box_bytes);
  TileLoop loop;
  loop.tiles = kWalkTiles;
  for (int t = 0; t < tensors; ++t) {
    Step s = load(box_bytes, t == 0 ? first_misses : 0.0, CopyEngine::Tma, "load " + std::to_string(t));
    s.k_walk = true;
    loop.loads.push_back(s);
  }
  if (prefetch_second) {  // the second tensor's box eight tiles ahead, into L2
    Step p = loop.loads[1];
    p.kind = StepKind::Issue;
    p.l2_prefetch = true;
    p.offset = 8;
    loop.prefetches.push_back(p);
  }
  loop.compute = {mma(flops, Precision::Bf16, TensorPath::Warpgroup, "mma")};
  LoopSchedule sch;
  sch.kind = LoopSchedule::Kind::WarpSpecialized;
  sch.stages = stages;
  sch.run_length = kWalkTiles;
  sch.consumer_warpgroups = 2;
  build_tile_loop(k, loop, sch);
  return k;
}

TEST(WalkLoads, ChargedAsCalibrateMeasuresThem) {
  // ns per byte of one CTA's walk, one CTA an SM.
  const auto time = [](const HardwareProfile& hw, int tensors, double flops = 1, double first_misses = 0,
                       bool prefetch_second = false) {
    const KernelSpec k = walk_kernel(hw, tensors, flops, first_misses, prefetch_second);
    return (simulate_kernel(hw, k).time_ns - hw.launch_overhead_us * 1e3) / (kWalkTiles * kWalkBytes * tensors);
  };
  HardwareProfile hw = steady_profile("H100");
  ASSERT_GT(hw.tma_walk_sm_GBps, 0);
  EXPECT_NEAR(time(hw, 1) * hw.tma_walk_sm_GBps, 1.0, 0.05) << "one tensor alone: the SM's rate";  // ns/B x B/ns
  EXPECT_NEAR(time(hw, 3) * hw.tma_walk_sm_GBps, 1.0, 0.05) << "three tensors: together at the SM's rate";
  // Beside wgmma streaming shared-memory operands the SM's walk rate drops to its share (a
  // share well below the H100's measured 0.97, so that the effect shows): with MMAs of half the
  // loads' time the walk lands slower than alone, and no slower than at the share throughout.
  ASSERT_GT(hw.tma_walk_beside_wgmma_fraction, 0);
  const double walk_sm = hw.tma_walk_sm_GBps;
  {
    HardwareProfile slowed = hw;
    slowed.tma_walk_beside_wgmma_fraction = 0.7;
    const double beside = walk_sm * slowed.tma_walk_beside_wgmma_fraction;
    const double flops = 0.5 * 3 * 16384 / beside * hw.bf16_step_TFLOPs() * 1e3 / hw.sm_count;
    const double with_mma = time(slowed, 3, flops);
    EXPECT_GT(with_mma * walk_sm, 1.05);
    EXPECT_LT(with_mma * beside, 1.02);
  }
  // One tensor's loads missing L2: their HBM share and the SM's walk go side by side, so the
  // time is the longer of the two, not their sum.
  const double hbm_per_byte = hw.sm_count / hw.tma_hbm_walk_bandwidth_GBps / 3;  // its third of the bytes
  EXPECT_NEAR(time(hw, 3, 1, 1.0) / std::max(hbm_per_byte, 1 / walk_sm), 1.0, 0.05);
  // An L2 prefetch of a walk box takes the SM's TMA for its bytes at tma_walk_prefetch_GBps.
  ASSERT_GT(hw.tma_walk_prefetch_GBps, 0);
  EXPECT_NEAR(time(hw, 3, 1, 0, true) / (1 / walk_sm + 1 / (3 * hw.tma_walk_prefetch_GBps)), 1.0, 0.05);
  hw.tma_walk_sm_GBps = 0;
  const double port = hw.sm_port_bytes_per_clk * hw.clock_MHz * 1e-3;
  const double fallback = std::min(port, hw.tma_l2_bandwidth_GBps / hw.sm_count);
  EXPECT_NEAR(time(hw, 1) * fallback, 1.0, 0.05);
}

TEST(WalkLoads, AMissWaitsByTheWalkDepthInCalibratesStagesAsLoadsOrBytes) {
  // One tensor, one stage, every box from HBM: each tile is its box's transfer (its HBM part
  // beside the SM's walk) and then the miss's latency at the walk's depth. calibrate's stage is
  // one 16 KiB box of each of three tensors (48 KiB), so a 16 KiB box alone is one stage deep by
  // its count (a third by bytes), a 64 KiB box 4/3 deep by its bytes: its latency lies a third of
  // the way from the one-stage figure to the two-stage one.
  const HardwareProfile hw = steady_profile("H100");
  ASSERT_GT(hw.tma_walk_sm_GBps, 0);
  ASSERT_GT(hw.tma_hbm_walk_latency_2_ns, hw.tma_hbm_walk_latency_ns);
  const double walk_sm = hw.tma_walk_sm_GBps;
  const auto latency = [&](double measured) {  // the engine's: less the stage's transfer
    return std::max(hw.dram_latency_cycles / (hw.clock_MHz * 1e-3), measured - 3 * 16384 / walk_sm);
  };
  const double l1 = latency(hw.tma_hbm_walk_latency_ns), l2 = latency(hw.tma_hbm_walk_latency_2_ns);
  for (const double box : {16384.0, 65536.0}) {
    const KernelSpec k = walk_kernel(hw, 1, 1, 1.0, false, 1, 1, box);
    const double tile_ns = (simulate_kernel(hw, k).time_ns - hw.launch_overhead_us * 1e3) / kWalkTiles;
    const double transfer = std::max(box * hw.sm_count / hw.tma_hbm_walk_bandwidth_GBps, box / walk_sm);
    const double expected = box == 16384.0 ? l1 : l1 + (l2 - l1) / 3;
    EXPECT_NEAR((tile_ns - transfer) / expected, 1.0, 0.03) << box << "-byte boxes";
  }
}

TEST(WalkLoads, TheTensorPipeKeepsItsShareBesideTheWalk) {
  // MMAs of twice the loads' time: the k-loop is the tensor pipe's, which runs at
  // tensor_beside_walk_fraction of its rate while walk loads cross the SM's port and at its
  // full rate once they have landed.
  HardwareProfile hw = steady_profile("H100");
  ASSERT_GT(hw.tensor_beside_walk_fraction, 0);
  const double load_ns = 3 * kWalkBytes / hw.tma_walk_sm_GBps;
  const double flops = 2 * load_ns * hw.bf16_step_TFLOPs() * 1e3 / hw.sm_count;  // 2 x load_ns of MMA a tile
  const auto tile_ns = [&](const HardwareProfile& p) {
    return (simulate_kernel(p, walk_kernel(p, 3, flops, 0, false)).time_ns - p.launch_overhead_us * 1e3) / kWalkTiles;
  };
  HardwareProfile alone = hw, slowed = hw;
  alone.tensor_beside_walk_fraction = 0;  // not measured: no slowdown
  slowed.tensor_beside_walk_fraction = 0.5;
  slowed.tma_walk_beside_wgmma_fraction = 1;
  EXPECT_NEAR(tile_ns(alone) / (2 * load_ns), 1.0, 0.03);
  // Half the tensor rate during the load's time (load_ns, its share of the MMA done at half
  // rate), the full rate after: 2 load_ns of work takes load_ns + (2 - 0.5) load_ns.
  EXPECT_NEAR(tile_ns(slowed) / (2.5 * load_ns), 1.0, 0.05);

  // Wide wgmmas (N >= 256) keep the share measured for them; narrower or unknown ones the general.
  const auto tile_ns_of = [&](const HardwareProfile& p, int mma_n) {
    KernelSpec k = walk_kernel(p, 3, flops, 0, false);
    for (Role& r : k.roles)
      for (Step& st : r.body)
        if (st.unit == Unit::Tensor) st.mma_n = mma_n;
    return (simulate_kernel(p, k).time_ns - p.launch_overhead_us * 1e3) / kWalkTiles;
  };
  HardwareProfile wide = slowed;
  wide.tensor_beside_walk_wide_fraction = 1.0;
  EXPECT_NEAR(tile_ns_of(wide, 256) / (2 * load_ns), 1.0, 0.03);
  EXPECT_NEAR(tile_ns_of(wide, 128) / (2.5 * load_ns), 1.0, 0.05);
  EXPECT_NEAR(tile_ns_of(wide, 0) / (2.5 * load_ns), 1.0, 0.05);
  wide.tensor_beside_walk_wide_fraction = 0;  // not measured: the general share
  EXPECT_NEAR(tile_ns_of(wide, 256) / (2.5 * load_ns), 1.0, 0.05);
}

TEST(WalkLoads, SeveralCtasAnSmShareTheRateCalibrateMeasuresForThem) {
  // Two CTAs an SM, two stages each, three tensors: the SM's walk runs at the multi-CTA rate.
  HardwareProfile hw = load_profile("H100");
  ASSERT_GT(hw.tma_walk_sm_multi_GBps, 0);
  ASSERT_LT(hw.tma_walk_sm_multi_GBps, hw.tma_walk_sm_GBps);
  const auto sm_rate = [&] {
    const KernelSpec k = walk_kernel(hw, 3, 1, 0, false, 2, 2);
    return 2 * kWalkTiles * kWalkBytes * 3 / (simulate_kernel(hw, k).time_ns - hw.launch_overhead_us * 1e3);
  };
  EXPECT_NEAR(sm_rate() / hw.tma_walk_sm_multi_GBps, 1.0, 0.05);
  hw.tma_walk_sm_multi_GBps = 0;  // not measured: the one-CTA rate
  EXPECT_NEAR(sm_rate() / hw.tma_walk_sm_GBps, 1.0, 0.05);
}

// One CTA an SM writing `bytes` once, waiting for the stores, in the given shape.
KernelSpec one_store(const HardwareProfile& hw, double bytes, StoreShape shape) {
  KernelSpec k;
  k.name = "store";
  k.ctas = hw.sm_count;
  k.threads_per_cta = 256;
  k.regs_per_cta = regs_for_warps(8, 64);
  Role r;
  r.name = "epilogue";
  r.warps = 8;
  Step s = store(bytes, hw.copy_engine, "store C");
  s.store_shape = shape;
  r.body = {s};
  k.roles = {r};
  return k;
}

TEST(OutputStores, EachShapeRunsAtItsMeasuredRate) {
  constexpr double kBytes = 32768;  // a 128 x 128 fp16 tile an SM, as calibrate's store_drain writes it
  for (const char* gpu : {"H100", "H200"}) {
    const HardwareProfile hw = load_profile(gpu);
    const auto time = [&](StoreShape shape) { return simulate_kernel(hw, one_store(hw, kBytes, shape)).time_ns - launch_ns(hw); };
    const auto expected = [&](double bytes_per_clk) {
      return std::max(time(StoreShape::Any), kBytes * hw.sm_count / (bytes_per_clk * hw.clock_MHz * 1e-3));
    };
    ASSERT_GT(hw.fragment_store_bytes_per_clk, 0) << gpu;
    ASSERT_GT(hw.bulk_store_bytes_per_clk, 0) << gpu;
    EXPECT_NEAR(time(StoreShape::Fragment) / expected(hw.fragment_store_bytes_per_clk), 1.0, 1e-6) << gpu;
    EXPECT_NEAR(time(StoreShape::Lines) / expected(hw.line_store_bytes_per_clk), 1.0, 1e-6) << gpu;
    EXPECT_NEAR(time(StoreShape::Bulk) / expected(hw.bulk_store_bytes_per_clk), 1.0, 1e-6) << gpu;
    // Fragments write half of each sector a warp instruction touches: slower than a bulk copy.
    EXPECT_GT(time(StoreShape::Fragment), 1.5 * time(StoreShape::Bulk)) << gpu;
  }
  // Not measured (the T4 profile): every shape is charged as any other copy.
  const HardwareProfile t4 = load_profile("T4");
  const double any = simulate_kernel(t4, one_store(t4, kBytes, StoreShape::Any)).time_ns;
  EXPECT_DOUBLE_EQ(simulate_kernel(t4, one_store(t4, kBytes, StoreShape::Fragment)).time_ns, any);
}

TEST(TensorRate, StepsRunAtTheWgmmaStreamWhereMeasured) {
  HardwareProfile hw = load_profile("H100");
  ASSERT_GT(hw.tensor_bf16_stream_TFLOPs, 0);
  const double flops = 2.0 * 128 * 128 * 64;
  const auto per_sm_rate = [&] {
    const KernelResult r = simulate_kernel(hw, tensor_loop(std::int64_t(hw.sm_count), 1000, flops));
    return 1000 * flops / (r.time_ns - launch_ns(hw));
  };
  EXPECT_NEAR(per_sm_rate() / (hw.tensor_bf16_stream_TFLOPs * 1e3 / hw.sm_count), 1.0, 0.01);
  hw.tensor_bf16_stream_TFLOPs = 0;  // not measured: the library GEMM's rate
  EXPECT_NEAR(per_sm_rate() / (hw.tensor_bf16_TFLOPs * 1e3 / hw.sm_count), 1.0, 0.01);
}

TEST(TensorRate, ALaunchOnFewerSmsHoldsTheClockMeasuredForThem) {
  // A launch holding at most half the SMs runs its tensor steps tensor_clock_half_sms_ratio
  // faster than one holding them all, linearly between; a tail after a full wave does not speed
  // up (the launch holds every SM).
  HardwareProfile hw = steady_profile("H200");
  ASSERT_GT(hw.tensor_clock_half_sms_ratio, 1.0);
  const double flops = 2.0 * 128 * 128 * 64, sms = hw.sm_count;
  const double boost = hw.tensor_clock_half_sms_ratio;
  const auto run = [&](const HardwareProfile& p, std::int64_t ctas) {
    KernelSpec k = tensor_loop(ctas, 1000, flops);
    k.smem_bytes = std::int64_t(p.smem_per_sm_KiB * 1024 / 2 + 1);  // one CTA an SM
    return simulate_kernel(p, k);
  };
  const auto per_sm_rate = [&](const HardwareProfile& p, std::int64_t ctas) {
    const KernelResult r = run(p, ctas);
    return 1000 * flops * double(r.full_waves + (r.tail_ctas > 0)) / (r.time_ns - launch_ns(p));
  };
  const double all = per_sm_rate(hw, std::int64_t(sms));
  EXPECT_NEAR(all / (hw.tensor_bf16_stream_TFLOPs * 1e3 / sms), 1.0, 0.01);
  EXPECT_NEAR(per_sm_rate(hw, 48) / all, boost, 0.002);
  EXPECT_NEAR(per_sm_rate(hw, std::int64_t(sms / 2)) / all, boost, 0.002);
  const std::int64_t three_quarters = std::int64_t(0.75 * sms);
  EXPECT_NEAR(per_sm_rate(hw, three_quarters) / all, 1 + (boost - 1) * (sms - three_quarters) / (sms / 2), 0.002);
  const KernelResult two = run(hw, std::int64_t(sms) + 48);
  ASSERT_EQ(two.full_waves, 1);
  ASSERT_EQ(two.tail_ctas, 48);
  EXPECT_NEAR(per_sm_rate(hw, std::int64_t(sms) + 48) / all, 1.0, 0.004);  // the tail at the full wave's clock
  hw.tensor_clock_half_sms_ratio = 0;  // not measured: every launch at the same clock
  EXPECT_NEAR(per_sm_rate(hw, 48) / all, 1.0, 0.002);
}

// One load of `bytes` from HBM per CTA, waited for, and nothing else: overlap calibrate's cold
// start (first_load.cu) as a kernel, `waves` rounds of one CTA an SM.
KernelSpec one_load_each(const HardwareProfile& hw, double bytes, int waves) {
  KernelSpec k;
  k.name = "one load";
  k.ctas = std::int64_t(waves) * hw.sm_count;
  k.threads_per_cta = 384;
  k.regs_per_cta = regs_for_warps(12, 64);
  k.smem_bytes = 200 * 1024;  // one CTA an SM
  Role r;
  r.name = "loader";
  r.warps = 12;
  r.body = {load(bytes, 1.0, CopyEngine::Tma, "load")};
  k.roles = {r};
  return k;
}

TEST(ColdStart, AWorkloadsFirstLoadsLandNoEarlierThanCalibrateMeasured) {
  for (const char* gpu : {"H100", "H200"}) {
    const HardwareProfile hw = load_profile(gpu);
    const HardwareProfile warm = steady_profile(gpu);
    ASSERT_GT(hw.tma_first_load_ns, 0) << gpu;
    const KernelSpec one = one_load_each(hw, 16384, 1);
    const double steady = simulate_kernel(warm, one).time_ns - launch_ns(hw);
    ASSERT_LT(steady, hw.tma_first_load_ns) << gpu << ": the cold load is the longer";
    // The first kernel of a workload: its load lands the measured cold time after its start.
    EXPECT_NEAR((simulate_kernel(hw, one).time_ns - launch_ns(hw)) / hw.tma_first_load_ns, 1.0, 0.01) << gpu;
    // Queued behind another kernel (which touched the data): no cold start.
    EXPECT_DOUBLE_EQ(simulate_kernel(hw, one, 0, nullptr, true).time_ns, simulate_kernel(warm, one, 0, nullptr, true).time_ns)
        << gpu;
    // Three waves: only the first waits it.
    const KernelSpec three = one_load_each(hw, 16384, 3);
    EXPECT_NEAR(simulate_kernel(hw, three).time_ns - simulate_kernel(warm, three).time_ns,
                hw.tma_first_load_ns - steady, 1.0)
        << gpu;
  }
  // Not measured (0): no cold start.
  const HardwareProfile t4 = load_profile("T4");
  EXPECT_EQ(t4.tma_first_load_ns, 0);
}

TEST(Occupancy, RegisterHungryCtasLoseResidency) {
  const HardwareProfile hw = load_profile("H100");
  KernelSpec k = tensor_loop(1000, 10, 1e6);
  k.regs_per_cta = regs_for_warps(4, 64);
  const int light = simulate_kernel(hw, k).ctas_per_sm;
  k.regs_per_cta = regs_for_warps(4, 255);
  const KernelResult heavy = simulate_kernel(hw, k);
  EXPECT_GT(light, heavy.ctas_per_sm);
  EXPECT_EQ(heavy.occupancy_limiter, "registers");
}

}  // namespace
}  // namespace overlap::sim
