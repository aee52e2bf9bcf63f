// linrnn inputs: drawing them deterministically, and checking untrusted ones.
#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "core/random.hpp"
#include "linrnn/linrnn.hpp"

namespace overlap::linrnn {

std::vector<Distribution> distributions() {
  return {
      {"default", "x ~ N(0,1), W ~ N(0,1)/sqrt(d), both bf16; h0 ~ N(0,1) fp32"},
      {"long_memory",
       "as default, but x[...,0] = 1 (bias feature) and W_a ~ N(0,0.01)/sqrt(d) with row 0 = 4.6, "
       "so a ~= sigmoid(4.6) ~= 0.99 (state lives ~100 steps)"},
  };
}

namespace {

// logit(0.99) ≈ 4.595; stored as bf16 it becomes 4.59375, and sigmoid(4.59375) ≈ 0.990.
constexpr double kLongMemoryBias = 4.6;
constexpr double kLongMemoryNoise = 0.1;

std::vector<double> normal(std::int64_t n, std::uint64_t seed, std::string_view name, double scale) {
  std::vector<double> v(static_cast<std::size_t>(n));
  fill_normal(std::span<double>(v), seed, name, scale);
  return v;
}

std::vector<std::string> expected_names(const LinrnnShape& shape) {
  std::vector<std::string> names = {"W", "x"};
  if (shape.has_h0) names.push_back("h0");
  return names;
}

}  // namespace

TensorMap make_inputs(const LinrnnShape& shape, std::uint64_t seed, std::string_view distribution) {
  shape.validate();
  const bool long_memory = distribution == "long_memory";
  OVERLAP_REQUIRE(long_memory || distribution == "default",
                  "linrnn: unknown distribution '{}' (known: default, long_memory)", distribution);

  std::vector<double> x = normal(shape_numel(shape.x_shape()), seed, "x", 1.0);
  std::vector<double> w =
      normal(shape_numel(shape.w_shape()), seed, "W", 1.0 / std::sqrt(static_cast<double>(shape.d)));
  if (long_memory) {
    for (std::int64_t row = 0; row < shape.B * shape.T; ++row) x[row * shape.d] = 1.0;
    const std::int64_t width = 3 * shape.dv;
    for (std::int64_t k = 0; k < shape.d; ++k)
      for (std::int64_t c = shape.dv; c < 2 * shape.dv; ++c)
        w[k * width + c] = k == 0 ? kLongMemoryBias : w[k * width + c] * kLongMemoryNoise;
  }

  TensorMap inputs;
  inputs.emplace("x", Tensor::from_f64(x, DType::BF16, shape.x_shape()));
  inputs.emplace("W", Tensor::from_f64(w, DType::BF16, shape.w_shape()));
  if (shape.has_h0)
    inputs.emplace("h0", Tensor::from_f64(normal(shape.B * shape.dv, seed, "h0", 1.0), DType::F32,
                                          shape.state_shape()));
  return inputs;
}

void require_input_layout(const LinrnnShape& shape, const TensorMap& inputs) {
  const std::vector<std::string> names = expected_names(shape);
  for (const auto& [name, t] : inputs) {
    bool known = false;
    for (const auto& n : names) known = known || n == name;
    OVERLAP_REQUIRE(known, "linrnn: unexpected input tensor '{}' (shape {} expects only {}{})", name,
                    shape.to_args().to_string(), "W, x", shape.has_h0 ? ", h0" : "");
  }
  const auto expect = [&](const std::string& name, DType dtype, const Shape& dims) {
    const Tensor& t = require_tensor(inputs, name);
    require_dtype(t, name, dtype);
    require_shape(t, name, dims);
  };
  expect("x", DType::BF16, shape.x_shape());
  expect("W", DType::BF16, shape.w_shape());
  if (shape.has_h0) expect("h0", DType::F32, shape.state_shape());
}

void validate_inputs(const LinrnnShape& shape, const TensorMap& inputs) {
  shape.validate();
  require_input_layout(shape, inputs);
  for (const auto& name : expected_names(shape)) require_finite(inputs.at(name), name);
}

}  // namespace overlap::linrnn
