// The pingpong gla models' structure against their kernels' rules: the paired materialized
// kernels share their ring as the launcher pairs the work units (cuda/gla/gla_pingpong_launch.cu,
// gla::pingpong_units_per_cta), and a segmented pingpong_fused walk counts its HBM bytes over all
// its segments. Expected values come from the tiling and the shape, never from a model run.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "cuda/gla/gla_tiling.hpp"
#include "sim/api.hpp"

namespace overlap::sim {
namespace {

struct Case {
  const char* shape;
  int K, V, B, H, T;
};

class PairedKernels : public ::testing::TestWithParam<Case> {};

TEST_P(PairedKernels, ConsumersShareTheRingAsTheLauncherPairsTheUnits) {
  const Case c = GetParam();
  const HardwareProfile hw = load_profile("H100");
  const Prediction p = predict(hw, "gla", "pingpong_materialized", parse_shape("gla", c.shape));
  ASSERT_EQ(p.kernels.size(), 2u);
  const gla::Tiling t = gla::tiling_for(gla::Schedule::Pingpong, gla::StateCarry::Materialized, c.K, c.V);
  const long long slices = (long long)c.B * c.H * (c.V / t.block_v), chunks = (c.T + t.chunk - 1) / t.chunk;
  const long long groups = (chunks + t.chunks_per_cta - 1) / t.chunks_per_cta;
  for (int pass = 0; pass < 2; ++pass) {
    const long long units = slices * (pass == 0 ? 1 : groups);
    const int per_cta = gla::pingpong_units_per_cta(units, int(hw.sm_count));
    const int stages = t.stages / per_cta;
    const KernelPrediction& k = p.kernels[pass];
    EXPECT_EQ(k.ctas, (units + per_cta - 1) / per_cta) << k.name;
    const std::string form = std::to_string(per_cta) + (per_cta > 1 ? " units a CTA, " : " unit a CTA, ") +
                             std::to_string(stages) + (stages > 1 ? " stages each" : " stage each");
    EXPECT_NE(k.name.find(form), std::string::npos) << k.name << " lacks '" << form << "'";
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, PairedKernels,
                         ::testing::Values(Case{"B=8,T=4096,H=16,K=128,V=128,h0=1,hT=1", 128, 128, 8, 16, 4096},
                                           Case{"B=4,T=4096,H=32,K=64,V=64,h0=1,hT=1", 64, 64, 4, 32, 4096},
                                           Case{"B=1,T=4096,H=8,K=64,V=64,h0=1,hT=1", 64, 64, 1, 8, 4096}));

// Eight segments of one walk each at B=1,H=8: the inputs (25 MB) stay in L2, so HBM sees each
// chunk's q, k, g, v once and o once, whatever the segments re-read.
TEST(SegmentedWalk, HbmBytesAreTheInputsOnceWhereTheyStayInL2) {
  const HardwareProfile hw = load_profile("H100");
  const double B = 1, T = 4096, H = 8, K = 64, V = 64;
  const Prediction p = predict(hw, "gla", "pingpong_fused", parse_shape("gla", "B=1,T=4096,H=8,K=64,V=64,h0=0,hT=0"));
  ASSERT_NE(p.kernels.at(0).name.find("segments"), std::string::npos) << p.kernels.at(0).name;
  const double once = B * T * H * (2 * K * 2 + K * 4 + V * 2 + V * 2);
  EXPECT_NEAR(p.hbm_bytes / once, 1.0, 1e-9);
}

// Two segments at B=2,T=16384,H=16,K=128: 671 MB of inputs do not stay in L2, so the second
// segment's state-only prefix (k, g, v of the chunks before its own) is read from HBM again.
TEST(SegmentedWalk, PrefixReReadsReachHbmWhereTheInputsDoNotFitL2) {
  const HardwareProfile hw = load_profile("H100");
  const double B = 2, T = 16384, H = 16, K = 128, V = 128;
  const Prediction p = predict(hw, "gla", "pingpong_fused", parse_shape("gla", "B=2,T=16384,H=16,K=128,V=128,h0=0,hT=0"));
  const double once = B * T * H * (2 * K * 2 + K * 4 + V * 2 + V * 2);
  const double prefix_everything = B * T * H * (K * 2 + K * 4 + V * 2);  // a prefix can be no longer than the walk
  EXPECT_GT(p.hbm_bytes, once * 1.05);
  EXPECT_LT(p.hbm_bytes, once + prefix_everything);
}

}  // namespace
}  // namespace overlap::sim
