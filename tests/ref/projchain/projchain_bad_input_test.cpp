// Bad inputs and shapes: each is refused with an overlap::Error whose message names the
// problem and the offending value.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "projchain_test_support.hpp"
#include "workloads/workload.hpp"

namespace overlap::projchain::testing {
namespace {

const char* const kDrawn = "B=2,T=3,d=8,H=2,dk=4";

const BadInput kBadInputs[] = {
    {"missing_W_alpha", kDrawn, [](TensorMap& in) { in.erase("W_alpha"); }, "missing tensor 'W_alpha'"},
    {"stray_tensor", kDrawn, [](TensorMap& in) { in.emplace("W_o", Tensor(DType::BF16, {8, 8})); },
     "unexpected input tensor 'W_o'"},
    {"x_wrong_N", "B=2,T=4,d=8,H=2,dk=4", [](TensorMap&) {}, "tensor 'x' has shape [6, 8], expected [8, 8]"},
    {"W_alpha_padded", kDrawn, [](TensorMap& in) { in["W_alpha"] = Tensor(DType::BF16, {8, 3}); },
     "tensor 'W_alpha' has shape [8, 3], expected [8, 2]"},
    {"W_k_wrong_dtype", kDrawn, [](TensorMap& in) { in["W_k"] = Tensor(DType::F16, {8, 8}); },
     "tensor 'W_k' has dtype F16, expected BF16"},
    {"nan_in_W_g", kDrawn, [](TensorMap& in) { set_value(in["W_g"], 9, NAN); },
     "tensor 'W_g' has a non-finite value (nan) at index 9"},
    {"inf_in_x", kDrawn, [](TensorMap& in) { set_value(in["x"], 47, INFINITY); },
     "tensor 'x' has a non-finite value (inf) at index 47"},
};

class ProjchainBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(ProjchainBadInput, IsRefusedWithItsValue) {
  TensorMap in = make_inputs(parse_shape(kDrawn), 1, "default");
  GetParam().corrupt(in);
  expect_error([&] { validate_inputs(parse_shape(GetParam().shape), in); }, GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(Cases, ProjchainBadInput, ::testing::ValuesIn(kBadInputs), RowName{});

// Layout errors are caught by the computations themselves too (not just validate_inputs),
// so a caller skipping validation gets an error, not a read past the end of a buffer.
TEST(ProjchainBadInput, ComputationsCheckTheLayout) {
  const ProjchainShape shape = parse_shape(kDrawn);
  TensorMap in = make_inputs(shape, 1, "default");
  in["W_v"] = Tensor(DType::BF16, {8, 7});
  expect_error([&] { oracle(shape, in); }, "tensor 'W_v' has shape");
  expect_error([&] { wide_gemm_reference(shape, in); }, "tensor 'W_v' has shape");
  expect_error([&] { wide_gemm_reference(shape, make_inputs(shape, 1, "default"), 0); },
               "token tile 0 must be at least 1");
}

const BadShape kBadShapes[] = {
    {"zero_heads", "H=0", "shape key 'H' = 0 is below its minimum 1"},
    {"negative_dk", "dk=-128", "shape key 'dk' = -128 is below its minimum 1"},
    {"unknown_key", "dv=4", "unknown shape key 'dv'"},
    {"overflowing", "B=4000000000,T=4000000000", "too large"},
    {"overflowing_width", "H=4000000000,dk=4000000000", "too large"},
};

class ProjchainBadShape : public ::testing::TestWithParam<BadShape> {};

TEST_P(ProjchainBadShape, IsRefusedWithItsValue) {
  const auto workload = make_projchain_workload();
  expect_error([&] { workload->parse_shape(GetParam().text); }, GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(Cases, ProjchainBadShape, ::testing::ValuesIn(kBadShapes), RowName{});

// A shape built in code bypasses the key minimums; validate() still refuses it.
TEST(ProjchainBadShape, StructWithZeroSizeIsRefused) {
  ProjchainShape shape;
  shape.T = 0;
  expect_error([&] { shape.validate(); }, "shape key 'T' = 0 must be at least 1");
  expect_error([&] { make_inputs(ProjchainShape{}, 1, "ones"); }, "unknown distribution 'ones'");
}

}  // namespace
}  // namespace overlap::projchain::testing
