// The Workload adapter: what vector files, `overlap check` and the GPU tests see.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "gla/inputs.hpp"
#include "vectors/vectors.hpp"
#include "workloads/workload.hpp"

namespace overlap {
namespace {

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::equal(a.bytes().begin(), a.bytes().end(), b.bytes().begin(), b.bytes().end());
}

class GlaWorkloadTest : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {
 protected:
  std::unique_ptr<Workload> w = gla::make_workload();
};

TEST_P(GlaWorkloadTest, InputsAreDeterministicPerSeedAndFreshAcrossSeeds) {
  const auto [shape_text, distribution] = GetParam();
  const ShapeArgs shape = w->parse_shape(shape_text);
  const TensorMap a = w->make_inputs(shape, 7, distribution);
  const TensorMap b = w->make_inputs(shape, 7, distribution);
  const TensorMap c = w->make_inputs(shape, 8, distribution);
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, t] : a) {
    EXPECT_TRUE(same_bytes(t, b.at(name))) << name;
    EXPECT_FALSE(same_bytes(t, c.at(name))) << name;
  }
  EXPECT_NO_THROW(w->validate_inputs(shape, a));
}

TEST_P(GlaWorkloadTest, FastReferenceAgreesWithOracleThroughTheInterface) {
  const auto [shape_text, distribution] = GetParam();
  const ShapeArgs shape = w->parse_shape(shape_text);
  const TensorMap inputs = w->make_inputs(shape, 3, distribution);
  const TensorMap ref = w->oracle(shape, inputs);
  const TensorMap out = w->fast_reference(shape, inputs);
  const auto specs = w->outputs(shape);
  ASSERT_EQ(out.size(), specs.size());
  for (const OutputSpec& spec : specs) {
    SCOPED_TRACE(spec.name);
    EXPECT_EQ(ref.at(spec.name).dtype(), DType::F64);
    EXPECT_EQ(out.at(spec.name).dtype(), DType::F32);
    EXPECT_EQ(spec.tolerance, 5e-3);
    EXPECT_LE(relative_error(out.at(spec.name), ref.at(spec.name)), 1e-5);
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, GlaWorkloadTest,
                         ::testing::Combine(::testing::Values("", "T=65,K=100,V=60,h0=0",
                                                              "B=1,T=1,H=3,hT=0"),
                                            ::testing::Values("default", "strong_gates", "mixed_gates")));

TEST(GlaWorkload, DescribesItself) {
  const auto w = gla::make_workload();
  EXPECT_EQ(make_gla_workload()->name(), "gla");  // the factory the registry calls
  EXPECT_EQ(w->name(), "gla");
  EXPECT_EQ(w->default_shape().to_string(), "B=2,T=63,H=2,K=64,V=64,h0=1,hT=1");
  ASSERT_EQ(w->distributions().size(), 3u);
  EXPECT_EQ(w->distributions()[0].name, "default");
  EXPECT_EQ(w->distributions()[1].name, "strong_gates");
  EXPECT_EQ(w->distributions()[2].name, "mixed_gates");
  EXPECT_EQ(w->outputs(w->parse_shape("hT=0")).size(), 1u);
}

}  // namespace
}  // namespace overlap
