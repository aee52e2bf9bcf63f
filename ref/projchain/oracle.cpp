// projchain float64 oracle: each of the five projections as its own dot products, then the
// activations. Tokens are independent, so they run in parallel; each output element is the
// same sequence of operations whatever the thread count.
#include <algorithm>
#include <string>
#include <vector>

#include "projchain/activations.hpp"
#include "projchain/projchain.hpp"

namespace overlap::projchain {

namespace {

// Tokens whose projections are computed together, so a weight streams from memory once per
// block rather than once per token (W_q is 32 MB in float64 at d=2048, H·dk=2048).
constexpr std::int64_t kTokenBlock = 16;

// out[n, c] = Σ_k x[n, k] · w[k, c] in float64, summed over k = 0..d−1 in order.
std::vector<double> project(const std::vector<double>& x, const Tensor& weight, std::int64_t N,
                            std::int64_t d) {
  const std::vector<double> w = weight.to_f64();
  const std::int64_t width = weight.shape()[1];
  std::vector<double> out(N * width, 0.0);
  const std::int64_t blocks = (N + kTokenBlock - 1) / kTokenBlock;
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t blk = 0; blk < blocks; ++blk) {
    const std::int64_t n0 = blk * kTokenBlock, n1 = std::min(N, n0 + kTokenBlock);
    for (std::int64_t k = 0; k < d; ++k)
      for (std::int64_t n = n0; n < n1; ++n) {
        const double xk = x[n * d + k];
        for (std::int64_t c = 0; c < width; ++c) out[n * width + c] += xk * w[k * width + c];
      }
  }
  return out;
}

}  // namespace

TensorMap oracle(const ProjchainShape& shape, const TensorMap& inputs) {
  shape.validate();
  require_input_layout(shape, inputs);
  const std::int64_t N = shape.N(), d = shape.d;
  const std::vector<double> x = inputs.at("x").to_f64();
  const auto proj = [&](const char* weight) { return project(x, inputs.at(weight), N, d); };

  std::vector<double> q = proj("W_q"), k = proj("W_k"), v = proj("W_v"), g = proj("W_g"),
                      alpha = proj("W_alpha");
#pragma omp parallel for schedule(static)
  for (std::int64_t n = 0; n < N; ++n) l2normalize_heads(&k[n * shape.heads_width()], shape.H, shape.dk);
  for (double& e : g) e = silu(e);
  for (double& e : alpha) e = sigmoid(e);

  TensorMap out;
  const auto put = [&](const char* name, const std::vector<double>& values, const Shape& dims) {
    out.emplace(name, Tensor::from_f64(values, DType::F64, dims));
  };
  put("q", q, shape.head_output_shape());
  put("k", k, shape.head_output_shape());
  put("v", v, shape.head_output_shape());
  put("g", g, shape.head_output_shape());
  put("alpha", alpha, shape.alpha_output_shape());
  return out;
}

}  // namespace overlap::projchain
