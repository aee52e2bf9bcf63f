// The validation set is data the GPU run depends on: a typo there would surface only on the
// lent GPU. Every shape must parse with its workload's keys, and the H100 model must predict
// every modelled variant there (the predicted half of each validation row).
#include <gtest/gtest.h>

#include <string>

#include "app/validate/validation_set.hpp"
#include "core/error.hpp"
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

TEST(ValidationSet, SelectsTheNamedShapesWhateverTheKeysOrder) {
  EXPECT_EQ(select_validation_shapes("projchain", false, {}), validation_shapes("projchain", false));
  const auto picked = select_validation_shapes("projchain", false, {"dk=128,H=16,d=2048,T=4096,B=8", "T=512,B=4,d=2048,H=16,dk=128"});
  ASSERT_EQ(picked.size(), 2u);
  EXPECT_EQ(picked[0], "B=8,T=4096,d=2048,H=16,dk=128");
  EXPECT_EQ(picked[1], "B=4,T=512,d=2048,H=16,dk=128");
  // Another workload's shape, or one its keys do not parse, selects nothing here.
  EXPECT_TRUE(select_validation_shapes("projchain", false, {"M=256,N=4096,K=7168,fmt=1"}).empty());
  EXPECT_EQ(select_validation_shapes("dualgemm", false, {"M=256,N=4096,K=7168,fmt=1"}).size(), 1u);
}

TEST(ValidationSet, AShapeOutsideTheSetIsRefusedByName) {
  EXPECT_NO_THROW(require_validation_shapes({"projchain", "dualgemm"}, false, {"M=512,N=3072,K=7168,fmt=0"}));
  try {
    require_validation_shapes({"projchain"}, false, {"B=8,T=4096,d=2048,H=16,dk=128", "B=8,T=4096,d=2048,H=16,dk=64"});
    FAIL() << "a shape outside the set was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'B=8,T=4096,d=2048,H=16,dk=64'"), std::string::npos) << e.what();
  }
  // The quick set is its own: the full set's reference shape is not in it.
  EXPECT_THROW(require_validation_shapes({"projchain"}, true, {"B=8,T=4096,d=2048,H=16,dk=128"}), Error);
}

}  // namespace
}  // namespace overlap::app
