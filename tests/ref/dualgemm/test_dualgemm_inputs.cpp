// dualgemm shapes and inputs: bad shapes and bad tensors are clear errors naming the value;
// inputs are deterministic per seed; a vector set checks a kernel-like fp16 result as PASS
// and a plausible kernel bug (B1 and B2 swapped) as FAIL.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <utility>

#include "core/error.hpp"
#include "core/random.hpp"
#include "dualgemm/dualgemm.hpp"
#include "dualgemm_test_shapes.hpp"
#include "formats/bf16.hpp"
#include "formats/blocked_scale_layout.hpp"
#include "ref/test_support.hpp"
#include "vectors/vectors.hpp"
#include "workloads/workload.hpp"

namespace overlap::dualgemm::testing {
namespace {

// Made directly, not through the registry, so these tests do not depend on other workloads.
const Workload& dualgemm_workload() {
  static const std::unique_ptr<Workload> w = make_dualgemm_workload();
  return *w;
}

using test_support::expect_error;  // an overlap::Error whose message contains a piece

class BadShape : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(BadShape, IsAnErrorNamingTheValue) {
  const auto& [text, needle] = GetParam();
  expect_error([&] { dualgemm_workload().parse_shape(text); }, needle);
}

INSTANTIATE_TEST_SUITE_P(Shapes, BadShape,
                         ::testing::Values(std::tuple{"K=100", "K=100 is not a multiple of 256"},
                                           std::tuple{"K=7000", "K=7000"}, std::tuple{"M=0", "M"},
                                           std::tuple{"N=0", "N"}, std::tuple{"L=0", "L"},
                                           std::tuple{"K=-256", "K"}, std::tuple{"fmt=3", "fmt=3"},
                                           std::tuple{"Q=1", "Q"}));

TEST(DualGemmShape, ZeroSizesSetDirectlyAreRejected) {
  ShapeArgs args = dualgemm_workload().default_shape();
  args.set("N", 0);
  expect_error([&] { dualgemm_workload().validate_shape(args); }, "shape key 'N' = 0 must be at least 1");
}

class DualGemmInputs : public ::testing::TestWithParam<Format> {
 protected:
  DualGemmShape shape() const {
    return shape_from_args(
        dualgemm_workload().parse_shape(TestShape{2, 100, 200, 256}.args(GetParam())));
  }
};

TEST_P(DualGemmInputs, AreDeterministicPerSeed) {
  const DualGemmShape s = shape();
  const TensorMap a = make_inputs(s, 5), b = make_inputs(s, 5), c = make_inputs(s, 6);
  for (const auto& [name, t] : a) {
    const auto bytes = [](const Tensor& x) {
      return std::vector<std::byte>(x.bytes().begin(), x.bytes().end());
    };
    EXPECT_EQ(bytes(t), bytes(b.at(name))) << name;
    EXPECT_NE(bytes(t), bytes(c.at(name))) << name;
  }
}

TEST(DualGemmInputsBf16, AreTheDocumentedNormalsRoundedToBf16) {
  const DualGemmShape s =
      shape_from_args(dualgemm_workload().parse_shape("L=2,M=100,N=200,K=256,fmt=0"));
  const TensorMap in = make_inputs(s, 9);
  for (const auto& [name, rows] : {std::pair{"a", s.M}, {"b1", s.N}, {"b2", s.N}}) {
    std::vector<float> x(static_cast<std::size_t>(s.L * rows * s.K));
    fill_normal<float>(x, 9, name, std::pow(256.0, -0.25));
    const Tensor want = Tensor::from_f32(x, DType::BF16, {s.L, rows, s.K});
    EXPECT_TRUE(std::equal(want.bytes().begin(), want.bytes().end(), in.at(name).bytes().begin()))
        << name;
  }
}

TEST_P(DualGemmInputs, HaveTheDocumentedNamesDtypesAndShapes) {
  const DualGemmShape s = shape();
  const TensorMap in = make_inputs(s, 1);
  switch (s.format) {
    case Format::Bf16:
      EXPECT_EQ(in.size(), 3u);
      EXPECT_EQ(in.at("a").dtype(), DType::BF16);
      EXPECT_EQ(in.at("b2").shape(), (overlap::Shape{2, 200, 256}));
      break;
    case Format::Fp8E4m3:
      EXPECT_EQ(in.size(), 6u);
      EXPECT_EQ(in.at("b1").dtype(), DType::F8_E4M3);
      EXPECT_EQ(in.at("a_scale").shape(), (overlap::Shape{2, 100}));
      EXPECT_EQ(in.at("b2_scale").dtype(), DType::F32);
      break;
    case Format::Nvfp4:
      EXPECT_EQ(in.size(), 6u);
      EXPECT_EQ(in.at("a").dtype(), DType::U8);
      EXPECT_EQ(in.at("a").shape(), (overlap::Shape{2, 100, 128}));
      // 100 and 200 rows pad to 1 and 2 row tiles; 256 / 16 = 16 k-blocks = 4 k-tiles.
      EXPECT_EQ(in.at("a_scale").shape(), (overlap::Shape{2, 1, 4, 512}));
      EXPECT_EQ(in.at("b1_scale").shape(), (overlap::Shape{2, 2, 4, 512}));
      EXPECT_EQ(in.at("b1_scale").dtype(), DType::F8_E4M3);
      break;
  }
  EXPECT_NO_THROW(validate_inputs(s, in));
}

TEST_P(DualGemmInputs, MissingMisshapenAndMistypedTensorsAreErrors) {
  const DualGemmShape s = shape();
  const TensorMap good = make_inputs(s, 1);
  TensorMap in = good;
  in.erase("b2");
  expect_error([&] { validate_inputs(s, in); }, "missing tensor 'b2'");

  in = good;
  in.at("a") = Tensor(in.at("a").dtype(), {2, 100, 8});
  expect_error([&] { validate_inputs(s, in); }, "tensor 'a' has shape [2, 100, 8]");

  in = good;
  in.at("b1") = Tensor(DType::F32, good.at("b1").shape());
  expect_error([&] { validate_inputs(s, in); }, "tensor 'b1' has dtype F32");

  // Inputs drawn for one shape do not pass for another.
  DualGemmShape other = s;
  other.K = 512;
  expect_error([&] { validate_inputs(other, good); }, "expected");
}

TEST_P(DualGemmInputs, NonFiniteValuesAndScalesAreErrors) {
  const DualGemmShape s = shape();
  TensorMap in = make_inputs(s, 1);
  switch (s.format) {
    case Format::Bf16:
      in.at("a").view<std::uint16_t>()[17] = formats::bf16_from_float(NAN);
      expect_error([&] { validate_inputs(s, in); },
                   "tensor 'a' has a non-finite value (nan) at index 17");
      break;
    case Format::Fp8E4m3:
      in.at("b2").view<std::uint8_t>()[3] = 0x7f;  // the e4m3fn NaN code
      expect_error([&] { validate_inputs(s, in); },
                   "tensor 'b2' has a non-finite value (nan) at index 3");
      in = make_inputs(s, 1);
      in.at("a_scale").view<float>()[9] = INFINITY;
      expect_error([&] { validate_inputs(s, in); },
                   "tensor 'a_scale' has a non-finite value (inf) at index 9");
      break;
    case Format::Nvfp4: {
      const auto layout = formats::BlockedScaleLayout{200, 16};
      // Batch 1, row 150, k-block 6.
      const auto off = layout.size() + formats::scale_offset(150, 6, 200, 16);
      in.at("b2_scale").view<std::uint8_t>()[off] = 0xff;
      expect_error([&] { validate_inputs(s, in); },
                   "tensor 'b2_scale' has a NaN scale (0xff) at batch 1, row 150, k-block 6");
      in = make_inputs(s, 1);
      in.at("b2_scale").view<std::uint8_t>()[off] = 0xb8;
      expect_error([&] { validate_inputs(s, in); }, "negative scale (0xb8)");
      // Padding (rows 200..255) is never read: any byte is accepted there.
      in = make_inputs(s, 1);
      in.at("b2_scale").view<std::uint8_t>()[formats::scale_offset(250, 0, 200, 16)] = 0xff;
      EXPECT_NO_THROW(validate_inputs(s, in));
      break;
    }
  }
}

// The check a GPU test makes against the vectors: an fp16 result of the right function
// passes, the same with B1 and B2 swapped fails.
TEST_P(DualGemmInputs, ToleranceAcceptsACorrectResultAndRejectsASwappedOne) {
  const Workload& w = dualgemm_workload();
  VectorSet set;
  set.workload = &w;
  set.shape = w.parse_shape(TestShape{1, 256, 512, 256}.args(GetParam()));
  set.inputs = w.make_inputs(set.shape, 3, "default");
  set.expected = w.oracle(set.shape, set.inputs);
  set.outputs = w.outputs(set.shape);
  const DualGemmShape s = shape_from_args(set.shape);

  const auto fp16_result = [&](const TensorMap& inputs) {
    const auto values = fast_reference(decode_operands(s, inputs)).to_f32();
    TensorMap result;
    result.emplace("c", Tensor::from_f32(values, DType::F16, {s.L, s.M, s.N}));
    return result;
  };
  const auto good = check_outputs(set, fp16_result(set.inputs));
  ASSERT_EQ(good.size(), 1u);
  EXPECT_TRUE(good[0].pass()) << "rel error " << good[0].rel_error << " > " << good[0].tolerance;

  TensorMap swapped = set.inputs;
  std::swap(swapped.at("b1"), swapped.at("b2"));
  if (swapped.contains("b1_scale")) std::swap(swapped.at("b1_scale"), swapped.at("b2_scale"));
  const auto bad = check_outputs(set, fp16_result(swapped));
  EXPECT_FALSE(bad[0].pass()) << "rel error " << bad[0].rel_error;
}

INSTANTIATE_TEST_SUITE_P(Formats, DualGemmInputs, ::testing::ValuesIn(kFormats),
                         [](const auto& info) { return std::string(format_name(info.param)); });

}  // namespace
}  // namespace overlap::dualgemm::testing
