// gla_backward through the Workload interface (what vector files, `overlap check` and a GPU
// test of a backward kernel see): its inputs, outputs per state flags, oracle against fast
// reference, and the refusals of bad input.
#include <gtest/gtest.h>

#include <string>

#include "gla/inputs.hpp"
#include "vectors/vectors.hpp"
#include "workloads/workload.hpp"

namespace overlap {
namespace {

class GlaBackwardWorkload : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {
 protected:
  const Workload& w = find_workload("gla_backward");
};

TEST_P(GlaBackwardWorkload, FastReferenceAgreesWithOracleThroughTheInterface) {
  const auto [shape_text, distribution] = GetParam();
  const ShapeArgs shape = w.parse_shape(shape_text);
  const TensorMap inputs = w.make_inputs(shape, 3, distribution);
  EXPECT_NO_THROW(w.validate_inputs(shape, inputs));
  const TensorMap ref = w.oracle(shape, inputs);
  const TensorMap out = w.fast_reference(shape, inputs);
  const auto specs = w.outputs(shape);
  ASSERT_EQ(out.size(), specs.size());
  for (const OutputSpec& spec : specs) {
    SCOPED_TRACE(spec.name);
    EXPECT_EQ(spec.tolerance, 5e-3);
    // dg's fp32 running sum sets this margin (gla_backward_agreement_test.cpp).
    EXPECT_LE(relative_error(out.at(spec.name), ref.at(spec.name)), 1e-4);
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, GlaBackwardWorkload,
                         ::testing::Combine(::testing::Values("", "T=65,K=100,V=60,h0=0", "B=1,T=1,H=3,hT=0"),
                                            ::testing::Values("default", "strong_gates", "mixed_gates")));

TEST(GlaBackwardWorkloadShape, OutputsAndInputsFollowTheStateFlags) {
  const Workload& w = find_workload("gla_backward");
  const ShapeArgs both = w.parse_shape("T=5,h0=1,hT=1"), neither = w.parse_shape("T=5,h0=0,hT=0");
  EXPECT_EQ(w.outputs(both).size(), 5u);     // dq, dk, dv, dg, dh0
  EXPECT_EQ(w.outputs(neither).size(), 4u);  // no h0: no dh0
  EXPECT_TRUE(w.make_inputs(both, 1, "default").count("dhT"));
  EXPECT_FALSE(w.make_inputs(neither, 1, "default").count("dhT"));
  EXPECT_EQ(w.make_inputs(both, 1, "default").at("do").dtype(), DType::BF16);
}

TEST(GlaBackwardWorkloadBadInput, NamesTheTensorAndTheReason) {
  const Workload& w = find_workload("gla_backward");
  const auto message = [&](const ShapeArgs& shape, const TensorMap& in) {
    try {
      w.validate_inputs(shape, in);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const ShapeArgs with_hT = w.parse_shape("T=5"), no_hT = w.parse_shape("T=5,hT=0");
  TensorMap in = w.make_inputs(with_hT, 1, "default");
  EXPECT_NE(message(no_hT, in).find("unexpected input tensor 'dhT' (the shape says hT=0)"), std::string::npos)
      << message(no_hT, in);
  TensorMap missing = in;
  missing.erase("do");
  EXPECT_NE(message(with_hT, missing).find("do"), std::string::npos) << message(with_hT, missing);
  TensorMap wrong = in;
  wrong["do"] = Tensor(DType::F32, wrong.at("do").shape());
  EXPECT_NE(message(with_hT, wrong).find("do"), std::string::npos) << message(with_hT, wrong);
  TensorMap positive = in;
  positive["g"].view<float>()[3] = 0.5f;
  EXPECT_NE(message(with_hT, positive).find("gla_backward: gate g"), std::string::npos) << message(with_hT, positive);
}

}  // namespace
}  // namespace overlap
