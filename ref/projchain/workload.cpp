// projchain as a Workload: the adapter between the generic contract (ShapeArgs, TensorMap)
// and the typed functions of projchain.hpp.
#include <memory>

#include "projchain/projchain.hpp"
#include "workloads/workload.hpp"

namespace overlap {

namespace {

class ProjchainWorkload final : public Workload {
 public:
  std::string_view name() const override { return "projchain"; }
  std::string_view summary() const override {
    return "GLA input projections: q, l2norm(k), v, silu(g), sigmoid(alpha) from one x";
  }
  const std::vector<ShapeKey>& shape_keys() const override { return projchain::shape_keys(); }
  std::vector<Distribution> distributions() const override { return projchain::distributions(); }

  void validate_shape(const ShapeArgs& shape) const override { typed(shape); }
  TensorMap make_inputs(const ShapeArgs& shape, std::uint64_t seed,
                        std::string_view distribution) const override {
    return projchain::make_inputs(typed(shape), seed, distribution);
  }
  void validate_inputs(const ShapeArgs& shape, const TensorMap& inputs) const override {
    projchain::validate_inputs(typed(shape), inputs);
  }
  TensorMap oracle(const ShapeArgs& shape, const TensorMap& inputs) const override {
    return projchain::oracle(typed(shape), inputs);
  }
  TensorMap fast_reference(const ShapeArgs& shape, const TensorMap& inputs) const override {
    return projchain::wide_gemm_reference(typed(shape), inputs);
  }
  std::vector<OutputSpec> outputs(const ShapeArgs&) const override {
    // Every output is stored as bf16 by the kernels (relative rounding ~2^-9 per element).
    std::vector<OutputSpec> specs;
    for (std::string_view name : projchain::kOutputNames) specs.push_back({std::string(name), 1e-2});
    return specs;
  }

 private:
  static projchain::ProjchainShape typed(const ShapeArgs& shape) {
    return projchain::ProjchainShape::from_args(shape);
  }
};

}  // namespace

std::unique_ptr<Workload> make_projchain_workload() { return std::make_unique<ProjchainWorkload>(); }

}  // namespace overlap
