// The gla_backward models' structure against their kernels' rules: the warp-specialized chunk
// pass is a persistent grid of at most one CTA an SM (cuda/gla/gla_backward_launch.cu) that moves
// the same bytes as the pipelined one, and both charge the same chunk phases (the compute
// threads run one body, cuda/gla/gla_chunk_grad_kernel.cuh). Expected values come from the
// shape and the profile, never from a model run.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "sim/api.hpp"

namespace overlap::sim {
namespace {

const KernelPrediction& chunk_pass(const Prediction& p) {
  const auto it = std::find_if(p.kernels.begin(), p.kernels.end(),
                               [](const KernelPrediction& k) { return k.name.find("chunk_grads") != std::string::npos; });
  if (it == p.kernels.end()) throw std::runtime_error("no chunk pass in " + p.variant);
  return *it;
}

class ChunkPass : public ::testing::TestWithParam<const char*> {};

TEST_P(ChunkPass, WarpSpecializedIsPersistentAndMovesTheSameBytes) {
  const HardwareProfile hw = load_profile("H100");
  const ShapeArgs shape = parse_shape("gla_backward", GetParam());
  const Prediction pipelined = predict(hw, "gla_backward", "saved_states", shape);
  const Prediction ws = predict(hw, "gla_backward", "saved_states_ws", shape);
  const auto get = [&](const char* key) { return shape.get(key); };
  const std::int64_t chunks = get("B") * get("H") * ((get("T") + 63) / 64);
  const KernelPrediction &a = chunk_pass(pipelined), &b = chunk_pass(ws);
  EXPECT_EQ(a.ctas, chunks);
  EXPECT_EQ(b.ctas, std::min<std::int64_t>(chunks, hw.sm_count));
  EXPECT_EQ(b.ctas_per_sm, 1);
  EXPECT_NEAR(b.hbm_bytes / a.hbm_bytes, 1.0, 1e-9);
  // The same state walk before either.
  EXPECT_NEAR(pipelined.kernels.front().time_us, ws.kernels.front().time_us, 1e-9);
}

INSTANTIATE_TEST_SUITE_P(Shapes, ChunkPass,
                         ::testing::Values("B=8,T=4096,H=16,K=128,V=128,h0=1,hT=1", "B=4,T=1024,H=32,K=64,V=64,h0=0,hT=0",
                                           "B=1,T=100,H=2,K=64,V=128,h0=0,hT=1"));

}  // namespace
}  // namespace overlap::sim
