// gla_backward as a Workload: the gradients of the gla forward (dq, dk, dv, dg, dh0) from the
// forward's inputs and the incoming do / dhT, behind the interface test vectors, `overlap
// check` and the GPU tests use. Oracle: oracle_backward (float64); fast reference:
// chunked_reference_backward (fp32).
#include "workloads/workload.hpp"

#include "gla/inputs.hpp"
#include "gla/reference.hpp"
#include "gla/shape.hpp"

namespace overlap {
namespace {

// Bound on ||grad - oracle|| / ||oracle|| for kernels with bf16 inputs (issue 18).
constexpr double kTolerance = 5e-3;

class GlaBackwardWorkload final : public Workload {
 public:
  std::string_view name() const override { return "gla_backward"; }
  std::string_view summary() const override {
    return "gradients of the gla forward: dq, dk, dv, dg, dh0 from do and dhT (chunk_gla's backward)";
  }
  const std::vector<ShapeKey>& shape_keys() const override { return gla::GlaShape::keys(); }
  std::vector<Distribution> distributions() const override { return gla::distributions(); }
  void validate_shape(const ShapeArgs& shape) const override { gla::GlaShape::from_args(shape); }

  TensorMap make_inputs(const ShapeArgs& shape, std::uint64_t seed, std::string_view distribution) const override {
    return gla::make_backward_inputs(gla::GlaShape::from_args(shape), seed, distribution);
  }
  void validate_inputs(const ShapeArgs& shape, const TensorMap& inputs) const override {
    gla::validate_backward_inputs(gla::GlaShape::from_args(shape), inputs);
  }

  TensorMap oracle(const ShapeArgs& args, const TensorMap& inputs) const override {
    return run<double>(args, inputs, [](const auto& s, const auto& in, const auto& grads, const auto& out) {
      gla::oracle_backward(s, in, grads, out);
    });
  }
  TensorMap fast_reference(const ShapeArgs& args, const TensorMap& inputs) const override {
    return run<float>(args, inputs, [](const auto& s, const auto& in, const auto& grads, const auto& out) {
      gla::chunked_reference_backward(s, in, grads, out);
    });
  }

  std::vector<OutputSpec> outputs(const ShapeArgs& args) const override {
    std::vector<OutputSpec> specs = {{"dq", kTolerance}, {"dk", kTolerance}, {"dv", kTolerance}, {"dg", kTolerance}};
    if (gla::GlaShape::from_args(args).has_h0) specs.push_back({"dh0", kTolerance});
    return specs;
  }

 private:
  static Tensor wrap(const std::vector<double>& v, Shape shape) { return Tensor::from_f64(v, DType::F64, std::move(shape)); }
  static Tensor wrap(const std::vector<float>& v, Shape shape) { return Tensor::from_f32(v, DType::F32, std::move(shape)); }

  template <class T, class Compute>
  static TensorMap run(const ShapeArgs& args, const TensorMap& inputs, Compute compute) {
    const auto shape = gla::GlaShape::from_args(args);
    gla::validate_backward_inputs(shape, inputs);
    const gla::DecodedInputs in = gla::decode_inputs(shape, inputs);
    const gla::DecodedOutputGrads grads = gla::decode_output_grads(shape, inputs);
    std::vector<T> dq(std::size_t(shape.qk_numel())), dk(dq.size()), dg(dq.size()), dv(std::size_t(shape.v_numel()));
    std::vector<T> dh0(shape.has_h0 ? std::size_t(shape.state_numel()) : 0);
    compute(shape, in.spans(), grads.spans(), gla::GlaInputGrads<T>{dq, dk, dg, dv, dh0});
    TensorMap out;
    out["dq"] = wrap(dq, shape.qk_shape());
    out["dk"] = wrap(dk, shape.qk_shape());
    out["dv"] = wrap(dv, shape.v_shape());
    out["dg"] = wrap(dg, shape.qk_shape());
    if (shape.has_h0) out["dh0"] = wrap(dh0, shape.state_shape());
    return out;
  }
};

}  // namespace

std::unique_ptr<Workload> gla::make_backward_workload() { return std::make_unique<GlaBackwardWorkload>(); }

std::unique_ptr<Workload> make_gla_backward_workload() { return gla::make_backward_workload(); }

}  // namespace overlap
