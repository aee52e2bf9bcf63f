// overlap tune: every variant ranked by the same predictions `predict` makes, refusals last.
#include "sim/tune.hpp"

#include <gtest/gtest.h>

#include "sim/api.hpp"

namespace overlap::sim {
namespace {

TEST(Tune, RanksEveryVariantByPredictedTimeAndPicksTheFastest) {
  const HardwareProfile hw = load_profile("H100");
  const ShapeArgs shape = parse_shape("dualgemm", "M=256,N=4096,K=7168,fmt=1");
  const TuneResult t = tune(hw, "dualgemm", shape);
  ASSERT_EQ(t.ranked.size(), list_variants("dualgemm").size());
  ASSERT_TRUE(t.has_pick());
  for (std::size_t i = 1; i < t.ranked.size(); ++i) {
    if (t.ranked[i].cannot_run.empty()) {
      EXPECT_LE(t.ranked[i - 1].time_us, t.ranked[i].time_us) << t.ranked[i].variant;
    }
  }
  // The pick's time is what `predict` says for it.
  EXPECT_DOUBLE_EQ(t.ranked[0].time_us, predict(hw, "dualgemm", t.ranked[0].variant, shape).time_us);
  const std::string text = format_tune(t);
  EXPECT_NE(text.find("pick: " + t.ranked[0].variant), std::string::npos) << text;
  EXPECT_EQ(tune_json(t)["pick"], t.ranked[0].variant);
}

TEST(Tune, RefusedVariantsComeLastWithTheirReason) {
  // NVFP4 on an H100: every dualgemm variant refuses, so there is no pick.
  const TuneResult t = tune(load_profile("H100"), "dualgemm", parse_shape("dualgemm", "M=256,N=4096,K=7168,fmt=2"));
  ASSERT_FALSE(t.ranked.empty());
  EXPECT_FALSE(t.has_pick());
  EXPECT_NE(t.ranked.back().cannot_run.find("NVFP4"), std::string::npos);
  EXPECT_NE(format_tune(t).find("pick: none"), std::string::npos);
  EXPECT_TRUE(tune_json(t)["pick"].is_null());
}

}  // namespace
}  // namespace overlap::sim
