// OCP fp8 e4m3fn (ref/formats/fp8_e4m3.hpp): all 256 decodes against a hand table of key
// values and the field model; encoding of every value, of every midpoint and its neighbours,
// and of random floats in both overflow modes, against format_reference.hpp.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <ostream>
#include <string>

#include "float_sample.hpp"
#include "format_reference.hpp"
#include "formats/fp8_e4m3.hpp"

namespace overlap::formats {
// Readable parameter values in test output.
inline void PrintTo(Fp8Overflow m, std::ostream* os) {
  *os << (m == Fp8Overflow::Saturate ? "Saturate" : "ToNaN");
}
}  // namespace overlap::formats

namespace overlap::formats::testing {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Values written out from the OCP spec (S.EEEE.MMM, bias 7): subnormals are M * 2^-9.
TEST(E4m3Decode, KeyValuesMatchHandTable) {
  const struct {
    std::uint8_t code;
    float value;
  } table[] = {
      {0x00, 0.0f},
      {0x80, -0.0f},
      {0x01, 0x1p-9f},      // smallest subnormal, 0.001953125
      {0x07, 7 * 0x1p-9f},  // largest subnormal, 0.013671875
      {0x08, 0x1p-6f},      // smallest normal, 0.015625
      {0x0f, 1.875f * 0x1p-6f},
      {0x30, 0.5f},
      {0x38, 1.0f},
      {0x39, 1.125f},
      {0x3f, 1.875f},
      {0x40, 2.0f},
      {0x48, 4.0f},
      {0x50, 8.0f},
      {0x70, 128.0f},
      {0x77, 240.0f},
      {0x78, 256.0f},
      {0x7d, 416.0f},
      {0x7e, 448.0f},  // largest finite
      {0xb8, -1.0f},
      {0xc0, -2.0f},
      {0xfe, -448.0f},
      {0x81, -0x1p-9f},
  };
  for (const auto& [code, value] : table) {
    const float got = e4m3_to_float(code);
    EXPECT_EQ(got, value) << fmt::format("code 0x{:02x}", code);
    EXPECT_EQ(std::signbit(got), std::signbit(value)) << fmt::format("code 0x{:02x}", code);
  }
  EXPECT_TRUE(std::isnan(e4m3_to_float(0x7f)));
  EXPECT_TRUE(std::isnan(e4m3_to_float(0xff)));
}

TEST(E4m3Decode, AllCodesMatchTheFieldModel) {
  int nans = 0;
  for (unsigned code = 0; code < 256; ++code) {
    const double got = e4m3_to_float(static_cast<std::uint8_t>(code));
    EXPECT_TRUE(same_value(got, reference_decode(code, kE4m3)))
        << fmt::format("code 0x{:02x}", code);
    nans += std::isnan(got);
    EXPECT_FALSE(std::isinf(got)) << "e4m3fn has no infinity, code " << code;
  }
  EXPECT_EQ(nans, 2);  // only 0x7f and 0xff
}

class E4m3Encode : public ::testing::TestWithParam<Fp8Overflow> {
 protected:
  OnOverflow model_overflow() const {
    return GetParam() == Fp8Overflow::Saturate ? OnOverflow::Saturate : OnOverflow::NaN;
  }
  // Compares encode(x) with the model; returns a description of the disagreement or "".
  std::string disagreement(float x) const {
    const std::uint8_t code = e4m3_from_float(x, GetParam());
    const double got = e4m3_to_float(code);
    const double want = reference_round(x, kE4m3, model_overflow());
    if (same_value(got, want)) return "";
    return fmt::format("x={:a}: code 0x{:02x} = {}, model {}", x, code, got, want);
  }
};

TEST_P(E4m3Encode, EveryValueRoundTrips) {
  for (unsigned c = 0; c < 256; ++c) {
    const auto code = static_cast<std::uint8_t>(c);
    const float x = e4m3_to_float(code);
    if (std::isnan(x)) continue;
    EXPECT_EQ(e4m3_from_float(x, GetParam()), code) << fmt::format("code 0x{:02x}", c);
  }
}

TEST_P(E4m3Encode, NaNStaysNaNWithItsSign) {
  EXPECT_EQ(e4m3_from_float(kNaN, GetParam()), 0x7f);
  EXPECT_EQ(e4m3_from_float(-kNaN, GetParam()), 0xff);
}

// Midpoints between all neighbouring positive values, including 448 and the first step past
// it (480, whose code is NaN), and the floats either side of each.
TEST_P(E4m3Encode, MidpointsTieToEvenAndNeighboursRoundToNearest) {
  for (unsigned c = 0; c < 0x7e + 1; ++c) {
    const double lo = e4m3_to_float(static_cast<std::uint8_t>(c));
    const double hi = c < 0x7e ? e4m3_to_float(static_cast<std::uint8_t>(c + 1)) : 480.0;
    const auto mid = static_cast<float>((lo + hi) / 2);
    for (float x : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, kInf)}) {
      EXPECT_EQ(disagreement(x), "");
      EXPECT_EQ(disagreement(-x), "");
    }
  }
}

TEST_P(E4m3Encode, OverflowSaturatesOrBecomesNaN) {
  const bool saturate = GetParam() == Fp8Overflow::Saturate;
  const std::uint8_t over = saturate ? 0x7e : 0x7f;
  const struct {
    float x;
    std::uint8_t code;
  } table[] = {
      {448.0f, 0x7e},
      {460.0f, 0x7e},                        // nearer 448 than 480
      {464.0f, 0x7e},                        // tie: 448 (mantissa 110) is even
      {std::nextafter(464.0f, kInf), over},  // nearer 480: out of range
      {480.0f, over},
      {1e9f, over},
      {kInf, over},
  };
  for (const auto& [x, code] : table) {
    EXPECT_EQ(e4m3_from_float(x, GetParam()), code) << "x=" << x;
    EXPECT_EQ(e4m3_from_float(-x, GetParam()), code | 0x80) << "x=" << -x;
  }
}

// Random floats: full bit patterns (mostly far outside e4m3's range, plus NaN/inf) and
// patterns concentrated on exponents -12..9, which cover underflow, subnormals and overflow.
class E4m3EncodeSample : public ::testing::TestWithParam<std::tuple<Fp8Overflow, std::uint64_t>> {};

TEST_P(E4m3EncodeSample, RandomFloatsRoundToNearestEven) {
  const auto& [mode, seed] = GetParam();
  const OnOverflow model = mode == Fp8Overflow::Saturate ? OnOverflow::Saturate : OnOverflow::NaN;
  const FloatPatterns patterns(seed, "e4m3");
  std::int64_t wrong = 0;
  std::string first;
  const std::uint64_t n = std::uint64_t{1} << 22;
  for (std::uint64_t i = 0; i < 2 * n; ++i) {
    const float x = i < n ? patterns[i] : patterns.with_exponent(i, -12, 9);
    const double got = e4m3_to_float(e4m3_from_float(x, mode));
    if (same_value(got, reference_round(x, kE4m3, model))) continue;
    if (wrong++ == 0) first = fmt::format("x={:a} -> {}", x, got);
  }
  EXPECT_EQ(wrong, 0) << "first: " << first;
}

std::string mode_name(Fp8Overflow m) { return m == Fp8Overflow::Saturate ? "saturate" : "to_nan"; }

INSTANTIATE_TEST_SUITE_P(Modes, E4m3Encode,
                         ::testing::Values(Fp8Overflow::Saturate, Fp8Overflow::ToNaN),
                         [](const auto& info) { return mode_name(info.param); });
INSTANTIATE_TEST_SUITE_P(Modes, E4m3EncodeSample,
                         ::testing::Combine(::testing::Values(Fp8Overflow::Saturate,
                                                              Fp8Overflow::ToNaN),
                                            ::testing::Values(1u, 2u)),
                         [](const auto& info) {
                           return mode_name(std::get<0>(info.param)) + "_seed" +
                                  std::to_string(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace overlap::formats::testing
