#pragma once
// Shared pieces of the linrnn tests: shapes from text, and the relative-norm comparison.
#include <cmath>
#include <string>

#include "linrnn/linrnn.hpp"
#include "vectors/vectors.hpp"

namespace overlap::linrnn::testing {

inline LinrnnShape parse_shape(const std::string& text) {
  return LinrnnShape::from_args(ShapeArgs::parse(text, shape_keys()));
}

inline std::int64_t count_non_finite(const Tensor& t) {
  std::int64_t n = 0;
  for (double v : t.to_f64()) n += std::isfinite(v) ? 0 : 1;
  return n;
}

// ‖out − ref‖ / ‖ref‖ of output `name`, after checking it exists, has the reference's shape
// and holds only finite values (relative_error skips non-finite elements).
inline double output_error(const TensorMap& out, const TensorMap& ref, const std::string& name) {
  const Tensor& o = require_tensor(out, name);
  const Tensor& r = require_tensor(ref, name);
  require_shape(o, name, r.shape());
  OVERLAP_REQUIRE(count_non_finite(o) == 0, "output '{}' has non-finite values", name);
  return relative_error(o, r);
}

// Test names from shape text: "B=2,T=63" -> "B2_T63".
inline std::string test_name(std::string text) {
  std::string out;
  for (char c : text)
    if (c == ',') out += '_';
    else if (c != '=') out += c;
  return out;
}

}  // namespace overlap::linrnn::testing
