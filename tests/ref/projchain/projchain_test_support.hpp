#pragma once
// Shared pieces of the projchain tests: shapes from text; the workload-independent helpers
// (expect_error, output_error, test_name, ...) come from tests/ref/test_support.hpp.
#include <string>

#include "projchain/projchain.hpp"
#include "ref/test_support.hpp"

namespace overlap::projchain::testing {

using namespace overlap::test_support;

inline ProjchainShape parse_shape(const std::string& text) {
  return ProjchainShape::from_args(ShapeArgs::parse(text, shape_keys()));
}

}  // namespace overlap::projchain::testing
