// linrnn fp32 reference computed the way the kernels compute it: the projection of every
// token as one blocked GEMM (Eigen, parallel over OpenMP threads), then the two-level
// chunked scan and the gate (scan.cpp).
#include <Eigen/Core>

#include "core/error.hpp"
#include "linrnn/linrnn.hpp"

namespace overlap::linrnn {

namespace {
using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
}  // namespace

TensorMap chunked_reference(const LinrnnShape& shape, const TensorMap& inputs, std::int64_t chunk) {
  shape.validate();
  require_input_layout(shape, inputs);
  OVERLAP_REQUIRE(chunk >= 1, "linrnn: scan chunk length {} must be at least 1", chunk);
  const std::int64_t rows = shape.B * shape.T, width = 3 * shape.dv;

  const std::vector<float> x = inputs.at("x").to_f32();
  const std::vector<float> w = inputs.at("W").to_f32();
  std::vector<float> proj(rows * width);
  Eigen::Map<RowMajor>(proj.data(), rows, width).noalias() =
      Eigen::Map<const RowMajor>(x.data(), rows, shape.d) *
      Eigen::Map<const RowMajor>(w.data(), shape.d, width);

  TensorMap out;
  Tensor& y = out.emplace("y", Tensor(DType::F32, shape.y_shape())).first->second;
  Tensor hT(DType::F32, shape.state_shape());
  const std::span<const float> h0 =
      shape.has_h0 ? inputs.at("h0").view<float>() : std::span<const float>{};
  scan_and_gate(shape, proj, h0, y.view<float>(),
                shape.want_hT ? hT.view<float>() : std::span<float>{}, chunk);
  if (shape.want_hT) out.emplace("hT", std::move(hT));
  return out;
}

}  // namespace overlap::linrnn
