// The validation set is data the GPU run depends on: a typo there would surface only on the
// lent GPU. Every shape must parse with its workload's keys, and the H100 model must predict
// every modelled variant there (the predicted half of each validation row).
#include <gtest/gtest.h>

#include <string>

#include "app/validate/validation_set.hpp"
#include "sim/api.hpp"

namespace overlap::app {
namespace {

class ValidationSet : public ::testing::TestWithParam<std::string> {};

TEST_P(ValidationSet, EveryShapeParsesAndEveryVariantIsPredicted) {
  const std::string workload = GetParam();
  const sim::HardwareProfile hw = sim::load_profile("H100");
  for (bool quick : {true, false}) {
    const auto shapes = validation_shapes(workload, quick);
    ASSERT_FALSE(shapes.empty()) << workload << (quick ? " quick" : " full");
    for (const auto& text : shapes) {
      SCOPED_TRACE(text);
      const ShapeArgs shape = sim::parse_shape(workload, text);
      for (const auto& v : sim::list_variants(workload)) {
        if (!sim::cannot_run(hw, workload, v.name, shape).empty()) continue;
        const sim::Prediction p = sim::predict(hw, workload, v.name, shape);
        EXPECT_GT(p.time_us, 0.0) << v.name;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Workloads, ValidationSet, ::testing::Values("gla", "gla_backward", "linrnn", "projchain", "dualgemm"),
                         [](const auto& info) { return info.param; });

TEST(ValidationSet, UnknownWorkloadHasNoShapes) { EXPECT_TRUE(validation_shapes("nope", false).empty()); }

}  // namespace
}  // namespace overlap::app
