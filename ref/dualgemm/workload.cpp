// dualgemm as a Workload: shape keys, inputs, oracle and fast reference behind the common
// interface that test vectors, `overlap check` and the GPU tests use.
#include "workloads/workload.hpp"

#include "dualgemm/dualgemm.hpp"

namespace overlap {
namespace {

class DualGemmWorkload final : public Workload {
 public:
  std::string_view name() const override { return "dualgemm"; }
  std::string_view summary() const override {
    return "gated dual GEMM C = silu(A B1^T) * (A B2^T); bf16, fp8 e4m3 or nvfp4 in, fp16 out";
  }
  const std::vector<ShapeKey>& shape_keys() const override { return dualgemm::shape_keys(); }
  std::vector<Distribution> distributions() const override {
    return {{"default",
             "a, b1, b2 ~ N(0, 1/sqrt(K)) (A B^T ~ N(0,1)); bf16: round to nearest even; fp8: e4m3 "
             "codes with fp32 per-row scale amax/448; nvfp4: e2m1 codes with e4m3 scale amax/6 per "
             "16 along K, 128x4 blocked scale layout"}};
  }
  void validate_shape(const ShapeArgs& shape) const override { dualgemm::shape_from_args(shape); }
  TensorMap make_inputs(const ShapeArgs& shape, std::uint64_t seed,
                        std::string_view distribution) const override {
    OVERLAP_REQUIRE(distribution == "default",
                    "dualgemm: unknown distribution '{}' (known: default)", distribution);
    return dualgemm::make_inputs(dualgemm::shape_from_args(shape), seed);
  }
  void validate_inputs(const ShapeArgs& shape, const TensorMap& inputs) const override {
    dualgemm::validate_inputs(dualgemm::shape_from_args(shape), inputs);
  }
  TensorMap oracle(const ShapeArgs& shape, const TensorMap& inputs) const override {
    const auto ops = dualgemm::decode_operands(dualgemm::shape_from_args(shape), inputs);
    TensorMap out;
    out.emplace("c", dualgemm::oracle(ops));
    return out;
  }
  TensorMap fast_reference(const ShapeArgs& shape, const TensorMap& inputs) const override {
    const auto ops = dualgemm::decode_operands(dualgemm::shape_from_args(shape), inputs);
    TensorMap out;
    out.emplace("c", dualgemm::fast_reference(ops));
    return out;
  }
  std::vector<OutputSpec> outputs(const ShapeArgs& shape) const override {
    return {{"c", dualgemm::output_tolerance(dualgemm::shape_from_args(shape).format)}};
  }
};

}  // namespace

std::unique_ptr<Workload> make_dualgemm_workload() { return std::make_unique<DualGemmWorkload>(); }

}  // namespace overlap
