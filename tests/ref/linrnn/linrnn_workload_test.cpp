// linrnn through the generic Workload contract, the way `overlap vectors`, `overlap check`
// and the GPU tests reach it: every declared output is produced with the declared shape, and
// the fast reference passes the checker against the oracle at the declared tolerances.
#include <gtest/gtest.h>

#include "linrnn_test_support.hpp"
#include "ref/workload_test_support.hpp"
#include "workloads/workload.hpp"

namespace overlap::linrnn::testing {
namespace {

class LinrnnWorkload : public ::testing::TestWithParam<const char*> {};

TEST_P(LinrnnWorkload, FastReferencePassesTheChecker) {
  expect_fast_reference_passes(*make_linrnn_workload(), "linrnn", GetParam());
}

INSTANTIATE_TEST_SUITE_P(Shapes, LinrnnWorkload,
                         ::testing::Values("", "B=3,T=31,d=40,dv=24,h0=0,hT=1", "B=1,T=7,d=8,dv=8,hT=0"),
                         shape_test_name);

}  // namespace
}  // namespace overlap::linrnn::testing
