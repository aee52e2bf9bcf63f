#pragma once
// gla inputs as tensors: the distributions test vectors are drawn from, and the checks every
// entry point runs on tensors it is handed (from a file, a script, a test).
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "core/tensor.hpp"
#include "gla/reference.hpp"
#include "gla/shape.hpp"
#include "workloads/workload.hpp"

namespace overlap::gla {

// Tensor names and dtypes, as in the vector files: q, k, v BF16; g, h0 F32; o, hT outputs.
inline constexpr DType kQkvDType = DType::BF16;
inline constexpr DType kGateDType = DType::F32;
inline constexpr DType kStateDType = DType::F32;

std::vector<Distribution> distributions();  // "default" first, then "strong_gates"
// Deterministic from (seed, tensor name); throws on an unknown distribution name.
TensorMap make_inputs(const GlaShape& shape, std::uint64_t seed, std::string_view distribution);
// Throws overlap::Error on a missing or unexpected tensor, a wrong shape or dtype, NaN/Inf,
// or a gate g > 0 (naming the index and value).
void validate_inputs(const GlaShape& shape, const TensorMap& inputs);

// The backward's inputs: the forward's plus the gradients flowing into its outputs, "do"
// (BF16, o's shape, N(0,1)) and, when the shape has hT, "dhT" (F32, N(0, 0.1^2)). Validation
// as validate_inputs, plus those two.
TensorMap make_backward_inputs(const GlaShape& shape, std::uint64_t seed, std::string_view distribution);
void validate_backward_inputs(const GlaShape& shape, const TensorMap& inputs);

// Inputs decoded to float (exact) and kept alive for GlaInputs spans into them.
struct DecodedInputs {
  std::vector<float> q, k, v, g, h0;
  GlaInputs spans() const { return {q, k, v, g, h0}; }
};
DecodedInputs decode_inputs(const GlaShape& shape, const TensorMap& inputs);

struct DecodedOutputGrads {
  std::vector<float> do_, dhT;
  GlaOutputGrads spans() const { return {do_, dhT}; }
};
DecodedOutputGrads decode_output_grads(const GlaShape& shape, const TensorMap& inputs);

// The gla Workload (what overlap::make_gla_workload() and find_workload("gla") return).
std::unique_ptr<Workload> make_workload();
// gla_backward: the same shapes and inputs plus do / dhT; outputs dq, dk, dv, dg (and dh0).
std::unique_ptr<Workload> make_backward_workload();

}  // namespace overlap::gla
