// linrnn as a Workload: the adapter between the generic contract (ShapeArgs, TensorMap) and
// the typed functions of linrnn.hpp.
#include <memory>

#include "linrnn/linrnn.hpp"
#include "workloads/workload.hpp"

namespace overlap {

namespace {

class LinrnnWorkload final : public Workload {
 public:
  std::string_view name() const override { return "linrnn"; }
  std::string_view summary() const override {
    return "linear-RNN layer: x W projection -> gated scan h = a*h + (1-a)*u -> y = h*silu(z)";
  }
  const std::vector<ShapeKey>& shape_keys() const override { return linrnn::shape_keys(); }
  std::vector<Distribution> distributions() const override { return linrnn::distributions(); }

  void validate_shape(const ShapeArgs& shape) const override { typed(shape); }
  TensorMap make_inputs(const ShapeArgs& shape, std::uint64_t seed,
                        std::string_view distribution) const override {
    return linrnn::make_inputs(typed(shape), seed, distribution);
  }
  void validate_inputs(const ShapeArgs& shape, const TensorMap& inputs) const override {
    linrnn::validate_inputs(typed(shape), inputs);
  }
  TensorMap oracle(const ShapeArgs& shape, const TensorMap& inputs) const override {
    return linrnn::oracle(typed(shape), inputs);
  }
  TensorMap fast_reference(const ShapeArgs& shape, const TensorMap& inputs) const override {
    return linrnn::chunked_reference(typed(shape), inputs);
  }
  std::vector<OutputSpec> outputs(const ShapeArgs& shape) const override {
    // y: kernels store bf16 (relative rounding ~2^-9 per element). hT stays fp32, but a
    // variant may keep its intermediates in bf16 (three_kernel's projection in HBM), which
    // the state inherits.
    std::vector<OutputSpec> specs = {{"y", 1e-2}};
    if (typed(shape).want_hT) specs.push_back({"hT", 1e-2});
    return specs;
  }

 private:
  static linrnn::LinrnnShape typed(const ShapeArgs& shape) {
    return linrnn::LinrnnShape::from_args(shape);
  }
};

}  // namespace

std::unique_ptr<Workload> make_linrnn_workload() { return std::make_unique<LinrnnWorkload>(); }

}  // namespace overlap
