// The variable-length model (sim/varlen.hpp): equal lengths reproduce the dense prediction but
// for the plan lookups;
// a batch whose steps sit in one sequence is bound by that sequence's serial walk; the
// benchmark's batch is balanced by longest-first scheduling; bad lengths are refused by value.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "sim/api.hpp"
#include "sim/varlen.hpp"

namespace overlap::sim {
namespace {

TEST(GlaVarlenModel, EqualLengthsCostWhatTheDenseBatchCosts) {
  const HardwareProfile hw = load_profile("H100");
  const VarlenPrediction p = predict_gla_varlen_train(hw, std::vector<std::int64_t>(32, 1000), 16, 128, 128);
  EXPECT_EQ(p.equal_T, 1000);
  const Prediction dense =
      predict(hw, "gla_backward", "saved_states", parse_shape("gla_backward", "B=32,T=1000,H=16,K=128,V=128,h0=0,hT=0"));
  ASSERT_EQ(p.kernels.size(), 5u);  // forward, dS walk, chunk grads, state writes, plans
  EXPECT_DOUBLE_EQ(p.kernels[2].equal_us, dense.kernels[1].time_us);
  // What separates them: the two plan launches, and in every wave of CTA slots each CTA's two
  // dependent L2 reads of its sequence.
  const double lookup_us = 2 * hw.l2_latency_cycles * hw.cycle_ns() * 1e-3;
  const KernelPrediction& grads = dense.kernels[1];
  const std::int64_t waves = grads.full_waves + (grads.tail_ctas > 0 ? 1 : 0);
  EXPECT_NEAR(p.kernels[2].varlen_us, grads.time_us + double(waves) * lookup_us, 1e-6 * grads.time_us);
  EXPECT_GT(p.varlen_us, p.equal_us + 2 * hw.launch_overhead_us);
  EXPECT_LT(p.varlen_us, 1.05 * p.equal_us);
}

TEST(GlaVarlenModel, OneLongSequenceIsBoundByItsWalk) {
  // 31 one-step sequences and one of 31000 steps (485 chunks): the forward's CTAs of the long
  // sequence walk it serially, at the per-chunk rate of a CTA of the equal batch (32 sequences
  // of 1000 steps, 16 chunks, in full and partial waves), where the equal batch's slots each
  // walk about four sequences.
  const HardwareProfile hw = load_profile("H100");
  std::vector<std::int64_t> lengths(31, 1);
  lengths.push_back(31000);
  const VarlenPrediction p = predict_gla_varlen_train(hw, lengths, 16, 128, 128);
  const KernelPrediction fwd =
      predict(hw, "gla", "pingpong_fused", parse_shape("gla", "B=32,T=1000,H=16,K=128,V=128,h0=0,hT=0")).kernels[0];
  const double waves = double(fwd.full_waves + (fwd.tail_ctas > 0 ? 1 : 0));
  const double per_chunk = (fwd.time_us - fwd.launch_us) / waves / 16.0;
  const double lookup_us = 2 * hw.l2_latency_cycles * hw.cycle_ns() * 1e-3;  // the CTA's plan reads
  EXPECT_NEAR(p.kernels[0].varlen_us, fwd.launch_us + 485 * per_chunk + lookup_us, 1e-6 * p.kernels[0].varlen_us);
  EXPECT_GT(p.kernels[0].varlen_us, 5 * p.kernels[0].equal_us);
  EXPECT_GT(p.per_step_ratio, 1.5);  // the chunk-parallel kernel, most of the time, stays balanced
}

TEST(GlaVarlenModel, TheBenchmarkBatchIsBalancedLongestFirst) {
  const std::vector<std::int64_t> lengths = gla_varlen_bench_lengths();
  ASSERT_EQ(lengths.size(), 64u);
  EXPECT_EQ(lengths.front(), 1);
  EXPECT_EQ(lengths.back(), 8192);
  const VarlenPrediction p = predict_gla_varlen_train(load_profile("H100"), lengths, 16, 128, 128);
  EXPECT_LT(p.per_step_ratio, 1.10);
  EXPECT_GT(p.per_step_ratio, 0.9);
}

TEST(GlaVarlenModel, RefusesBadLengthsByValue) {
  const HardwareProfile hw = load_profile("H100");
  try {
    predict_gla_varlen_train(hw, {5, -3}, 16, 128, 128);
    FAIL() << "accepted a negative length";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("-3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(predict_gla_varlen_train(hw, {0, 0}, 16, 128, 128), Error);
  EXPECT_THROW(predict_gla_varlen_train(hw, {}, 16, 128, 128), Error);
}

}  // namespace
}  // namespace overlap::sim
