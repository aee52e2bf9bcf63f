#pragma once
// Pieces every CPU-reference test shares, whatever the workload: expecting an overlap::Error,
// poking a value into a tensor, the relative-norm comparison of named outputs and test names
// from shape text. Workload-specific helpers live in tests/ref/<workload>/*_test_support.hpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/tensor.hpp"
#include "vectors/vectors.hpp"

namespace overlap::test_support {

// Runs `f`, expecting an overlap::Error whose message contains `expected`.
template <class F>
void expect_error(F&& f, const std::string& expected) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one containing \"" << expected << "\"";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos)
        << "message \"" << e.what() << "\" lacks \"" << expected << "\"";
  }
}

// A table row of a bad-input test: inputs drawn for one shape, edited by `corrupt`, then
// checked against `shape`; the error must contain `expected`.
struct BadInput {
  const char* name;
  const char* shape;  // the shape the inputs are checked against
  std::function<void(TensorMap&)> corrupt;
  const char* expected;
};

// A table row of a bad-shape test: parsing `text` must fail with an error containing `expected`.
struct BadShape {
  const char* name;
  const char* text;
  const char* expected;
};

// Names a parameterised case after its row's `name` (for INSTANTIATE_TEST_SUITE_P).
struct RowName {
  template <class Row>
  std::string operator()(const ::testing::TestParamInfo<Row>& info) const {
    return std::string(info.param.name);
  }
};

// Sets element `index` of `t` to `value`, rounded to t's dtype.
inline void set_value(Tensor& t, std::int64_t index, double value) {
  std::vector<double> v = t.to_f64();
  v[static_cast<std::size_t>(index)] = value;
  t = Tensor::from_f64(v, t.dtype(), t.shape());
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
inline std::string test_name(const std::string& text) {
  std::string out;
  for (char c : text)
    if (c == ',') out += '_';
    else if (c != '=') out += c;
  return out;
}

}  // namespace overlap::test_support
