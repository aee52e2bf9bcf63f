// Bad inputs and shapes: each is refused with an overlap::Error whose message names the
// problem and the offending value.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "linrnn_test_support.hpp"
#include "workloads/workload.hpp"

namespace overlap::linrnn::testing {
namespace {

const LinrnnShape kDrawn = parse_shape("B=2,T=5,d=6,dv=3,h0=1,hT=1");

const BadInput kBadInputs[] = {
    {"missing_x", "B=2,T=5,d=6,dv=3", [](TensorMap& in) { in.erase("x"); }, "missing tensor 'x'"},
    {"missing_h0", "B=2,T=5,d=6,dv=3", [](TensorMap& in) { in.erase("h0"); }, "missing tensor 'h0'"},
    {"h0_given_when_shape_says_none", "B=2,T=5,d=6,dv=3,h0=0", [](TensorMap&) {},
     "unexpected input tensor 'h0'"},
    {"stray_tensor", "B=2,T=5,d=6,dv=3", [](TensorMap& in) { in.emplace("bias", Tensor(DType::F32, {3})); },
     "unexpected input tensor 'bias'"},
    {"x_wrong_T", "B=2,T=6,d=6,dv=3", [](TensorMap&) {}, "tensor 'x' has shape [2, 5, 6], expected [2, 6, 6]"},
    {"W_wrong_width", "B=2,T=5,d=6,dv=3",
     [](TensorMap& in) { in["W"] = Tensor(DType::BF16, {6, 8}); }, "tensor 'W' has shape [6, 8], expected [6, 9]"},
    {"W_wrong_dtype", "B=2,T=5,d=6,dv=3",
     [](TensorMap& in) { in["W"] = Tensor(DType::F32, {6, 9}); }, "tensor 'W' has dtype F32, expected BF16"},
    {"h0_wrong_dtype", "B=2,T=5,d=6,dv=3",
     [](TensorMap& in) { in["h0"] = Tensor(DType::BF16, {2, 3}); }, "tensor 'h0' has dtype BF16, expected F32"},
    {"nan_in_x", "B=2,T=5,d=6,dv=3", [](TensorMap& in) { set_value(in["x"], 17, NAN); },
     "tensor 'x' has a non-finite value (nan) at index 17"},
    {"inf_in_W", "B=2,T=5,d=6,dv=3", [](TensorMap& in) { set_value(in["W"], 4, INFINITY); },
     "tensor 'W' has a non-finite value (inf) at index 4"},
    {"minus_inf_in_h0", "B=2,T=5,d=6,dv=3", [](TensorMap& in) { set_value(in["h0"], 5, -INFINITY); },
     "tensor 'h0' has a non-finite value (-inf) at index 5"},
};

class LinrnnBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(LinrnnBadInput, IsRefusedWithItsValue) {
  TensorMap in = make_inputs(kDrawn, 1, "default");
  GetParam().corrupt(in);
  const LinrnnShape shape = parse_shape(GetParam().shape);
  expect_error([&] { validate_inputs(shape, in); }, GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(Cases, LinrnnBadInput, ::testing::ValuesIn(kBadInputs), RowName{});

// Layout errors are caught by the computations themselves too (not just validate_inputs),
// so a caller skipping validation gets an error, not a read past the end of a buffer.
TEST(LinrnnBadInput, ComputationsCheckTheLayout) {
  TensorMap in = make_inputs(kDrawn, 1, "default");
  in["x"] = Tensor(DType::BF16, {2, 4, 6});
  expect_error([&] { oracle(kDrawn, in); }, "tensor 'x' has shape");
  expect_error([&] { chunked_reference(kDrawn, in); }, "tensor 'x' has shape");
  expect_error([&] { chunked_reference(kDrawn, make_inputs(kDrawn, 1, "default"), 0); },
               "chunk length 0 must be at least 1");
}

const BadShape kBadShapes[] = {
    {"flag_not_boolean", "h0=2", "shape key 'h0' = 2 must be 0 or 1"},
    {"zero_width", "d=0", "shape key 'd' = 0 is below its minimum 1"},
    {"negative_batch", "B=-3", "shape key 'B' = -3 is below its minimum 1"},
    {"unknown_key", "H=4", "unknown shape key 'H'"},
    {"overflowing", "B=4000000000,T=4000000000,d=4000000000", "too large"},
    {"not_a_number", "T=1e3", "shape key 'T' has value '1e3', expected an integer"},
};

class LinrnnBadShape : public ::testing::TestWithParam<BadShape> {};

TEST_P(LinrnnBadShape, IsRefusedWithItsValue) {
  const auto workload = make_linrnn_workload();
  expect_error([&] { workload->parse_shape(GetParam().text); }, GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(Cases, LinrnnBadShape, ::testing::ValuesIn(kBadShapes), RowName{});

// A shape built in code bypasses the key minimums; validate() still refuses it.
TEST(LinrnnBadShape, StructWithZeroSizeIsRefused) {
  LinrnnShape shape;
  shape.dv = 0;
  expect_error([&] { shape.validate(); }, "shape key 'dv' = 0 must be at least 1");
  expect_error([&] { make_inputs(parse_shape("B=1"), 1, "uniform"); }, "unknown distribution 'uniform'");
}

}  // namespace
}  // namespace overlap::linrnn::testing
