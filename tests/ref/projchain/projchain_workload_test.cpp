// projchain through the generic Workload contract, the way `overlap vectors`, `overlap check`
// and the GPU tests reach it: every declared output is produced with the declared shape, and
// the fast reference passes the checker against the oracle at the declared tolerances.
#include <gtest/gtest.h>

#include "projchain_test_support.hpp"
#include "workloads/workload.hpp"

namespace overlap::projchain::testing {
namespace {

class ProjchainWorkload : public ::testing::TestWithParam<const char*> {};

TEST_P(ProjchainWorkload, FastReferencePassesTheChecker) {
  const auto workload = make_projchain_workload();
  EXPECT_EQ(workload->name(), "projchain");
  const ShapeArgs shape = workload->parse_shape(GetParam());
  for (const Distribution& dist : workload->distributions()) {
    VectorSet set;
    set.workload = workload.get();
    set.shape = shape;
    set.seed = 4;
    set.distribution = dist.name;
    set.inputs = workload->make_inputs(shape, set.seed, dist.name);
    workload->validate_inputs(shape, set.inputs);
    set.expected = workload->oracle(shape, set.inputs);
    set.outputs = workload->outputs(shape);
    ASSERT_EQ(set.expected.size(), set.outputs.size());
    for (const auto& [name, t] : set.expected) EXPECT_EQ(t.dtype(), DType::F64) << name;

    const TensorMap result = workload->fast_reference(shape, set.inputs);
    ASSERT_EQ(result.size(), set.outputs.size());
    for (const OutputCheck& check : check_outputs(set, result)) {
      EXPECT_TRUE(check.pass()) << dist.name << " " << check.name << ": " << check.problem
                                << " rel_error " << check.rel_error;
      EXPECT_EQ(result.at(check.name).dtype(), DType::F32);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, ProjchainWorkload,
                         ::testing::Values("", "B=3,T=11,d=40,H=3,dk=16", "B=1,T=5,d=16,H=16,dk=1"),
                         [](const auto& info) {
                           const std::string text = info.param;
                           return text.empty() ? std::string("defaults") : test_name(text);
                         });

}  // namespace
}  // namespace overlap::projchain::testing
