#include "core/tensor.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

namespace overlap {
namespace {

TEST(Tensor, NumelAndBytesFollowShapeAndDtype) {
  Tensor t(DType::BF16, {2, 3, 5});
  EXPECT_EQ(t.numel(), 30);
  EXPECT_EQ(t.nbytes(), 60u);
  EXPECT_EQ(Tensor(DType::F32, {0, 7}).numel(), 0);
  EXPECT_THROW(Tensor(DType::F32, {2, -1}), Error);
}

TEST(Tensor, TypedViewRejectsTheWrongElementSize) {
  Tensor t(DType::F32, {4});
  EXPECT_NO_THROW(t.view<float>());
  EXPECT_THROW(t.view<double>(), Error);
}

class TensorRoundTrip : public ::testing::TestWithParam<DType> {};

// Values exactly representable in every float format round-trip through encode/decode.
TEST_P(TensorRoundTrip, ExactValuesSurviveEncodeDecode) {
  const std::vector<double> values = {0.0, -0.0, 1.0, -2.5, 0.125, 3.0, -448.0, 0.015625};
  const Tensor t = Tensor::from_f64(values, GetParam(), {2, 4});
  const auto back = t.to_f64();
  ASSERT_EQ(back.size(), values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(back[i], values[i]) << dtype_name(GetParam()) << " index " << i;
    EXPECT_EQ(std::signbit(back[i]), std::signbit(values[i]));
  }
}

INSTANTIATE_TEST_SUITE_P(FloatDtypes, TensorRoundTrip,
                         ::testing::Values(DType::F64, DType::F32, DType::F16, DType::BF16, DType::F8_E4M3),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

TEST(Tensor, EncodingRoundsToNearestEven) {
  // 1 + 2^-8 is a tie between bf16 neighbours 1 and 1 + 2^-7: ties go to the even one (1).
  const std::vector<double> tie = {1.0 + std::ldexp(1.0, -8), 1.0 + 3 * std::ldexp(1.0, -8)};
  const auto back = Tensor::from_f64(tie, DType::BF16, {2}).to_f64();
  EXPECT_EQ(back[0], 1.0);
  EXPECT_EQ(back[1], 1.0 + std::ldexp(1.0, -6));
}

TEST(Tensor, RequireHelpersNameTheTensorAndTheValue) {
  TensorMap m;
  m.emplace("q", Tensor::from_f64(std::vector<double>{1.0, NAN}, DType::F32, {2}));
  try {
    require_tensor(m, "k");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "missing tensor 'k' (have: q)");
  }
  try {
    require_shape(m.at("q"), "q", {3});
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "tensor 'q' has shape [2], expected [3]");
  }
  try {
    require_finite(m.at("q"), "q");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "tensor 'q' has a non-finite value (nan) at index 1");
  }
  try {
    require_dtype(m.at("q"), "q", DType::BF16);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "tensor 'q' has dtype F32, expected BF16");
  }
  EXPECT_NO_THROW(require_dtype(m.at("q"), "q", DType::F32));
}

// require_finite decodes each element as to_f64() does, for every float dtype.
TEST(Tensor, RequireFiniteFindsTheFirstNonFiniteValueInEveryFloatDtype) {
  for (DType dtype : {DType::F64, DType::F32, DType::BF16, DType::F16}) {
    const std::vector<double> values = {0.5, -2.0, INFINITY, NAN};
    EXPECT_NO_THROW(require_finite(Tensor::from_f64(std::span(values).first(2), dtype, {2}), "x"));
    try {
      require_finite(Tensor::from_f64(values, dtype, {4}), "x");
      FAIL() << dtype_name(dtype);
    } catch (const Error& e) {
      EXPECT_STREQ(e.what(), "tensor 'x' has a non-finite value (inf) at index 2") << dtype_name(dtype);
    }
  }
  // e4m3 has no infinity; its NaN code is 0x7f.
  Tensor e4m3(DType::F8_E4M3, {3});
  e4m3.view<std::uint8_t>()[1] = 0x7f;
  try {
    require_finite(e4m3, "e");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "tensor 'e' has a non-finite value (nan) at index 1");
  }
  EXPECT_THROW(require_finite(Tensor(DType::U8, {2}), "u"), Error);
}

}  // namespace
}  // namespace overlap
