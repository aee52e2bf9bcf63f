// The gla Workload: binds shape keys, inputs, oracle and chunked reference to the interface the
// vector files, `overlap check` and the GPU tests use.
#include "workloads/workload.hpp"

#include "gla/inputs.hpp"
#include "gla/reference.hpp"
#include "gla/shape.hpp"

namespace overlap {
namespace {

// Bound on ||o - oracle|| / ||oracle|| for GPU kernels with bf16 operands and fp32
// accumulation (issue 4); the fp32 chunked reference meets 1e-5.
constexpr double kTolerance = 5e-3;

class GlaWorkload final : public Workload {
 public:
  std::string_view name() const override { return "gla"; }
  std::string_view summary() const override {
    return "chunkwise gated linear attention forward (flash-linear-attention chunk_gla layout)";
  }
  const std::vector<ShapeKey>& shape_keys() const override { return gla::GlaShape::keys(); }
  std::vector<Distribution> distributions() const override { return gla::distributions(); }

  void validate_shape(const ShapeArgs& shape) const override { gla::GlaShape::from_args(shape); }

  TensorMap make_inputs(const ShapeArgs& shape, std::uint64_t seed,
                        std::string_view distribution) const override {
    return gla::make_inputs(gla::GlaShape::from_args(shape), seed, distribution);
  }

  void validate_inputs(const ShapeArgs& shape, const TensorMap& inputs) const override {
    gla::validate_inputs(gla::GlaShape::from_args(shape), inputs);
  }

  TensorMap oracle(const ShapeArgs& args, const TensorMap& inputs) const override {
    return run<double>(args, inputs, [](const auto& s, const auto& in, const auto& out) {
      gla::oracle(s, in, out);
    });
  }

  TensorMap fast_reference(const ShapeArgs& args, const TensorMap& inputs) const override {
    return run<float>(args, inputs, [](const auto& s, const auto& in, const auto& out) {
      gla::chunked_reference(s, in, out);
    });
  }

  std::vector<OutputSpec> outputs(const ShapeArgs& args) const override {
    std::vector<OutputSpec> specs = {{"o", kTolerance}};
    if (gla::GlaShape::from_args(args).want_hT) specs.push_back({"hT", kTolerance});
    return specs;
  }

 private:
  static Tensor wrap(const std::vector<double>& v, Shape shape) {
    return Tensor::from_f64(v, DType::F64, std::move(shape));
  }
  static Tensor wrap(const std::vector<float>& v, Shape shape) {
    return Tensor::from_f32(v, DType::F32, std::move(shape));
  }

  // Validates, decodes, runs `compute` into T arrays and wraps them as F64 / F32 tensors.
  template <class T, class Compute>
  static TensorMap run(const ShapeArgs& args, const TensorMap& inputs, Compute compute) {
    const auto shape = gla::GlaShape::from_args(args);
    gla::validate_inputs(shape, inputs);
    const gla::DecodedInputs decoded = gla::decode_inputs(shape, inputs);
    std::vector<T> o(static_cast<std::size_t>(shape.v_numel()));
    std::vector<T> hT(shape.want_hT ? static_cast<std::size_t>(shape.state_numel()) : 0);
    compute(shape, decoded.spans(), gla::GlaOutputs<T>{o, hT});
    TensorMap out;
    out["o"] = wrap(o, shape.v_shape());
    if (shape.want_hT) out["hT"] = wrap(hT, shape.state_shape());
    return out;
  }
};

}  // namespace

std::unique_ptr<Workload> gla::make_workload() { return std::make_unique<GlaWorkload>(); }

std::unique_ptr<Workload> make_gla_workload() { return gla::make_workload(); }

}  // namespace overlap
