// projchain through the generic Workload contract, the way `overlap vectors`, `overlap check`
// and the GPU tests reach it: every declared output is produced with the declared shape, and
// the fast reference passes the checker against the oracle at the declared tolerances.
#include <gtest/gtest.h>

#include "projchain_test_support.hpp"
#include "ref/workload_test_support.hpp"
#include "workloads/workload.hpp"

namespace overlap::projchain::testing {
namespace {

class ProjchainWorkload : public ::testing::TestWithParam<const char*> {};

TEST_P(ProjchainWorkload, FastReferencePassesTheChecker) {
  expect_fast_reference_passes(*make_projchain_workload(), "projchain", GetParam());
}

INSTANTIATE_TEST_SUITE_P(Shapes, ProjchainWorkload,
                         ::testing::Values("", "B=3,T=11,d=40,H=3,dk=16", "B=1,T=5,d=16,H=16,dk=1"),
                         shape_test_name);

}  // namespace
}  // namespace overlap::projchain::testing
