#pragma once
// Shared pieces of the linrnn tests: shapes from text; the workload-independent helpers
// (expect_error, output_error, test_name, ...) come from tests/ref/test_support.hpp.
#include <string>

#include "linrnn/linrnn.hpp"
#include "ref/test_support.hpp"

namespace overlap::linrnn::testing {

using namespace overlap::test_support;

inline LinrnnShape parse_shape(const std::string& text) {
  return LinrnnShape::from_args(ShapeArgs::parse(text, shape_keys()));
}

}  // namespace overlap::linrnn::testing
