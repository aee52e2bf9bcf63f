// projchain inputs: drawing them deterministically, and checking untrusted ones.
#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/random.hpp"
#include "projchain/projchain.hpp"

namespace overlap::projchain {

std::vector<Distribution> distributions() {
  return {
      {"default", "x ~ N(0,1), W_q, W_k, W_v, W_g, W_alpha ~ N(0,1)/sqrt(d), all bf16"},
      {"zero_key_head",
       "as default, but W_k's head-0 columns are 0, so k's head 0 has norm 0 and must be 0"},
  };
}

namespace {

Shape weight_shape(const ProjchainShape& shape, std::string_view name) {
  return name == "W_alpha" ? shape.alpha_weight_shape() : shape.head_weight_shape();
}

std::vector<double> normal(const Shape& dims, std::uint64_t seed, std::string_view name, double scale) {
  std::vector<double> v(static_cast<std::size_t>(shape_numel(dims)));
  fill_normal(std::span<double>(v), seed, name, scale);
  return v;
}

}  // namespace

TensorMap make_inputs(const ProjchainShape& shape, std::uint64_t seed, std::string_view distribution) {
  shape.validate();
  const bool zero_key_head = distribution == "zero_key_head";
  OVERLAP_REQUIRE(zero_key_head || distribution == "default",
                  "projchain: unknown distribution '{}' (known: default, zero_key_head)", distribution);

  TensorMap inputs;
  inputs.emplace("x", Tensor::from_f64(normal(shape.x_shape(), seed, "x", 1.0), DType::BF16,
                                       shape.x_shape()));
  const double scale = 1.0 / std::sqrt(static_cast<double>(shape.d));
  for (std::string_view name : kWeightNames) {
    const Shape dims = weight_shape(shape, name);
    std::vector<double> w = normal(dims, seed, name, scale);
    if (zero_key_head && name == "W_k")
      for (std::int64_t k = 0; k < shape.d; ++k)
        std::fill_n(w.begin() + k * shape.heads_width(), shape.dk, 0.0);
    inputs.emplace(std::string(name), Tensor::from_f64(w, DType::BF16, dims));
  }
  return inputs;
}

void require_input_layout(const ProjchainShape& shape, const TensorMap& inputs) {
  for (const auto& [name, t] : inputs) {
    bool known = name == "x";
    for (std::string_view w : kWeightNames) known = known || name == w;
    OVERLAP_REQUIRE(known,
                    "projchain: unexpected input tensor '{}' (expected x, W_q, W_k, W_v, W_g, W_alpha)",
                    name);
  }
  const auto expect = [&](const std::string& name, const Shape& dims) {
    const Tensor& t = require_tensor(inputs, name);
    require_dtype(t, name, DType::BF16);
    require_shape(t, name, dims);
  };
  expect("x", shape.x_shape());
  for (std::string_view name : kWeightNames) expect(std::string(name), weight_shape(shape, name));
}

void validate_inputs(const ProjchainShape& shape, const TensorMap& inputs) {
  shape.validate();
  require_input_layout(shape, inputs);
  for (const auto& [name, t] : inputs) require_finite(t, name);
}

}  // namespace overlap::projchain
