#pragma once
// Shared pieces of the projchain tests: shapes from text, and the relative-norm comparison.
#include <cmath>
#include <string>

#include "projchain/projchain.hpp"
#include "vectors/vectors.hpp"

namespace overlap::projchain::testing {

inline ProjchainShape parse_shape(const std::string& text) {
  return ProjchainShape::from_args(ShapeArgs::parse(text, shape_keys()));
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

// Test names from shape text: "B=2,T=33" -> "B2_T33".
inline std::string test_name(std::string text) {
  std::string out;
  for (char c : text)
    if (c == ',') out += '_';
    else if (c != '=') out += c;
  return out;
}

}  // namespace overlap::projchain::testing
