// linrnn float64 oracle: the definition, one token after another. Batches are independent,
// so they run in parallel; each output is computed by the same sequence of operations
// whatever the thread count, so the oracle is deterministic.
#include <algorithm>
#include <cmath>
#include <vector>

#include "linrnn/linrnn.hpp"

namespace overlap::linrnn {

namespace {
double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

// Tokens whose projections are computed together, so W streams from memory once per block
// rather than once per token (W is 25 MB in float64 at d=1024, dv=1024).
constexpr std::int64_t kTokenBlock = 16;
}  // namespace

TensorMap oracle(const LinrnnShape& shape, const TensorMap& inputs) {
  shape.validate();
  require_input_layout(shape, inputs);
  const std::int64_t B = shape.B, T = shape.T, d = shape.d, dv = shape.dv, width = 3 * dv;
  const std::vector<double> x = inputs.at("x").to_f64();
  const std::vector<double> w = inputs.at("W").to_f64();
  const std::vector<double> h0 =
      shape.has_h0 ? inputs.at("h0").to_f64() : std::vector<double>(B * dv, 0.0);

  std::vector<double> y(B * T * dv), hT(B * dv);
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t b = 0; b < B; ++b) {
    std::vector<double> h(h0.begin() + b * dv, h0.begin() + (b + 1) * dv);
    std::vector<double> proj(kTokenBlock * width);  // rows (u | a_pre | z) of a token block
    for (std::int64_t t0 = 0; t0 < T; t0 += kTokenBlock) {
      const std::int64_t n = std::min(kTokenBlock, T - t0);
      // The projection does not depend on h, so a block of tokens shares each pass over W;
      // every element is still summed over k = 0..d−1 in order.
      std::fill(proj.begin(), proj.end(), 0.0);
      for (std::int64_t k = 0; k < d; ++k)
        for (std::int64_t i = 0; i < n; ++i) {
          const double xk = x[(b * T + t0 + i) * d + k];
          for (std::int64_t c = 0; c < width; ++c) proj[i * width + c] += xk * w[k * width + c];
        }
      for (std::int64_t i = 0; i < n; ++i) {
        const double* p = &proj[i * width];
        double* yt = &y[(b * T + t0 + i) * dv];
        for (std::int64_t c = 0; c < dv; ++c) {
          const double u = p[c], a = sigmoid(p[dv + c]), z = p[2 * dv + c];
          h[c] = a * h[c] + (1.0 - a) * u;
          yt[c] = h[c] * z * sigmoid(z);
        }
      }
    }
    std::copy(h.begin(), h.end(), hT.begin() + b * dv);
  }

  TensorMap out;
  out.emplace("y", Tensor::from_f64(y, DType::F64, shape.y_shape()));
  if (shape.want_hT) out.emplace("hT", Tensor::from_f64(hT, DType::F64, shape.state_shape()));
  return out;
}

}  // namespace overlap::linrnn
