// Mechanisms added for the gla accuracy work (issue 5): the shared-memory pipe as an SM unit,
// per-chunk work counted from the chunk kernel's instruction mix (cuda/gla/gla_chunk_kernel.cuh)
// with phases bounded by their busiest SM sub-partition, and the output pass's
// __launch_bounds__ occupancy. Expected values are derived here from the kernel's code and
// the profile's fields, never copied from a model run.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "sim/api.hpp"
#include "sim/schedule_file.hpp"
#include "sim/simulate.hpp"
#include "sim/variants.hpp"

namespace overlap::sim {
namespace {

// One CTA of 8 warps reading `bytes` of shared memory per iteration, nothing else.
KernelSpec smem_loop(int iterations, double bytes) {
  KernelSpec k;
  k.name = "lds";
  k.ctas = 1;
  k.threads_per_cta = 256;
  k.regs_per_cta = regs_for_warps(8, 64);
  k.tiles = iterations;
  Role r;
  r.name = "warps";
  r.warps = 8;
  r.body = {run(Unit::Smem, bytes, "lds")};
  k.roles = {r};
  return k;
}

class ClosedFormSmem : public ::testing::TestWithParam<std::string> {};

TEST_P(ClosedFormSmem, SharedMemoryLoopIsBytesOverPipeRate) {
  const HardwareProfile hw = load_profile(GetParam());
  ASSERT_GT(hw.smem_bytes_per_clk, 0);
  const int iterations = 200;
  const double bytes = 64 * 1024;
  const KernelResult r = simulate_kernel(hw, smem_loop(iterations, bytes));
  const double expected = iterations * bytes / (hw.smem_bytes_per_clk * hw.clock_MHz * 1e-3);
  EXPECT_NEAR((r.time_ns - hw.launch_overhead_us * 1e3) / expected, 1.0, 1e-6);
  EXPECT_DOUBLE_EQ(r.smem_bytes, iterations * bytes);
}

INSTANTIATE_TEST_SUITE_P(Profiles, ClosedFormSmem, ::testing::Values("T4", "A100", "H100", "H200", "B200"));

ShapeArgs one_chunk(int K) {
  return parse_shape("gla", "B=1,T=64,H=1,K=" + std::to_string(K) + ",V=64");
}

// The exp2 lanes charged for one chunk of the fused kernel, from the kernel's code:
//  - decayed keys: C*K/2 pairs over all 8 warps (balanced): C*K exp2;
//  - output warp o (o = 0..3) per 16-wide k-slice: 4 + 4o decayed pairs for the gated block
//    left of its diagonal (o > 0) and 4 for q 2^b (inter-chunk); state warp o: 18 pairs for
//    the diagonal block (levels 8, 4, 2, 1: 4 + 6 + 6 + 2); warps o and o+4 share SM
//    sub-partition o, so the phase lasts as long as sub-partition 3: (16 + 4 + 18) pairs per
//    k-slice, x 2 exp2 x 32 lanes, x 4 sub-partitions;
//  - state update: 2 exp2 per lane per 16-row m-tile (K/64 per state warp), x 4.
double expected_fused_sfu_lanes(int K) {
  const double C = 64, kc = K / 16.0, m_tiles = K / 64.0;
  return C * K + 4 * (kc * (16 + 4 + 18) * 2 * 32) + 4 * (2 * m_tiles * 32);
}

TEST(ClosedFormGla, FusedChunkExpWorkFollowsTheKernelsInstructionMix) {
  const HardwareProfile hw = load_profile("H100");
  for (int K : {64, 128}) {
    const auto kernels = find_variant_model("gla", "pipelined_fused").build(hw, one_chunk(K));
    ASSERT_EQ(kernels.size(), 1u);
    const KernelResult r = simulate_kernel(hw, kernels[0]);
    EXPECT_NEAR(r.sfu_ops / expected_fused_sfu_lanes(K), 1.0, 1e-9) << "K=" << K;
    EXPECT_GT(r.smem_bytes, 0);
  }
  // What the kernel executes (not what the busiest sub-partition is charged): 560 decayed
  // pairs per chunk at K=64, i.e. 35840 exp2 + 256 for the state decay.
  EXPECT_LT(35840.0 + 256, expected_fused_sfu_lanes(64));
}

TEST(ClosedFormGla, SharedMemoryTrafficDoublesWithK) {
  // Every decayed-pair and ldmatrix term scales with K/16 k-slices (block_v fixed at 64); the
  // output warps' A V (ldmatrix of V) and the shared loads of the chunk's cp.async issue do not
  // (1.79x in the kernel's SASS, which the model charges).
  const HardwareProfile hw = load_profile("H100");
  const auto smem = [&](int K) {
    return simulate_kernel(hw, find_variant_model("gla", "sequential_fused").build(hw, one_chunk(K))[0]).smem_bytes;
  };
  const double ratio = smem(128) / smem(64);
  EXPECT_GT(ratio, 1.7);
  EXPECT_LT(ratio, 2.0);
}

TEST(OccupancyGla, OutputPassRunsTwoCtasPerSmWhereItsSharedMemoryAllows) {
  // The output pass is compiled with __launch_bounds__(256, 2) when two CTAs' shared memory
  // fits (227 KB): K=64 with one stage (68.6 KB); not with two stages (122.9 KB) or K=128.
  const HardwareProfile hw = load_profile("H100");
  const auto per_sm = [&](const char* variant, const char* shape) {
    return predict(hw, "gla", variant, parse_shape("gla", shape)).kernels.at(1).ctas_per_sm;
  };
  EXPECT_EQ(per_sm("sequential_materialized", "B=4,T=4096,H=32,K=64,V=64"), 2);
  EXPECT_EQ(per_sm("pipelined_materialized", "B=4,T=4096,H=32,K=64,V=64"), 1);
  EXPECT_EQ(per_sm("sequential_materialized", "B=8,T=4096,H=16,K=128,V=128"), 1);
}

TEST(ClosedFormGla, FullSizePredictionIsFast) {
  const HardwareProfile hw = load_profile("H100");
  const ShapeArgs s = parse_shape("gla", "B=8,T=4096,H=16,K=128,V=128");
  predict(hw, "gla", "pipelined_fused", s);  // warm-up
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 5; ++i) predict(hw, "gla", "sequential_materialized", s);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / 5;
  EXPECT_LT(ms, 10.0);
}

TEST(ScheduleFileSmem, SmemOpChargesTheSharedMemoryPipe) {
  const HardwareProfile hw = load_profile("H100");
  const auto kernels = build_schedule(
      parse_schedule(R"({"workload": "gla", "kernels": [{"ctas": 1, "loop": {"tiles": 10,
          "loads": [{"op": "load", "bytes": 16}], "compute": [{"op": "smem", "bytes": "4096 * K"}]}}]})",
                     "f.json"),
      hw, one_chunk(64));
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_DOUBLE_EQ(simulate_kernel(hw, kernels[0]).smem_bytes, 10 * 4096.0 * 64);
}

}  // namespace
}  // namespace overlap::sim
