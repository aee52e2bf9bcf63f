// bf16 and fp16 (ref/formats/bf16.hpp, fp16.hpp) against the independent model in
// format_reference.hpp: every 16-bit pattern decodes and round-trips, every midpoint between
// neighbours (and the float values either side of it) rounds as the model says, and so does a
// large deterministic sample of float32 patterns.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "float_sample.hpp"
#include "format_reference.hpp"
#include "formats/bf16.hpp"
#include "formats/fp16.hpp"

namespace overlap::formats::testing {
namespace {

struct HalfCodec {
  FloatFormat format;
  float (*decode)(std::uint16_t);
  std::uint16_t (*encode)(float);
};

void PrintTo(const HalfCodec& c, std::ostream* os) { *os << c.format.name; }

const HalfCodec kBf16Codec{kBf16, bf16_to_float, bf16_from_float};
const HalfCodec kFp16Codec{kFp16, fp16_to_float, fp16_from_float};

// Counts disagreements with the model, keeping the first few for the failure message.
class Mismatches {
 public:
  void check(const HalfCodec& c, float x) {
    ++checked_;
    const double got = c.decode(c.encode(x));
    const double want = reference_round(x, c.format, OnOverflow::Infinity);
    if (same_value(got, want)) return;
    if (++count_ <= 5)
      examples_ += fmt::format("\n  x={:a} (0x{:08x}): got {:a}, model {:a}", x,
                               std::bit_cast<std::uint32_t>(x), got, want);
  }
  void expect_none() const {
    EXPECT_EQ(count_, 0) << count_ << " of " << checked_ << " values rounded wrongly" << examples_;
    EXPECT_GT(checked_, 0);
  }

 private:
  std::int64_t checked_ = 0, count_ = 0;
  std::string examples_;
};

class HalfFormat : public ::testing::TestWithParam<HalfCodec> {};

TEST_P(HalfFormat, EveryPatternDecodesAsItsFields) {
  const HalfCodec& c = GetParam();
  for (std::uint32_t h = 0; h <= 0xffff; ++h) {
    const double got = c.decode(static_cast<std::uint16_t>(h));
    ASSERT_TRUE(same_value(got, reference_decode(h, c.format))) << std::hex << "code 0x" << h;
  }
}

TEST_P(HalfFormat, EveryPatternRoundTripsExactly) {
  const HalfCodec& c = GetParam();
  for (std::uint32_t h = 0; h <= 0xffff; ++h) {
    const auto code = static_cast<std::uint16_t>(h);
    const float x = c.decode(code);
    if (std::isnan(x)) {
      ASSERT_TRUE(std::isnan(c.decode(c.encode(x)))) << std::hex << "NaN code 0x" << h;
      ASSERT_EQ(c.encode(x) & 0x8000u, h & 0x8000u) << std::hex << "NaN sign, code 0x" << h;
    } else {
      ASSERT_EQ(c.encode(x), code) << std::hex << "code 0x" << h;
    }
  }
}

// Midpoints between every pair of neighbouring finite values (including the largest finite
// value and the first value past it, where overflow starts), and the floats just either side.
TEST_P(HalfFormat, MidpointsTieToEvenAndNeighboursRoundToNearest) {
  const HalfCodec& c = GetParam();
  Mismatches m;
  for (std::uint32_t h = 0; h < 0x7fff; ++h) {
    const double lo = c.decode(static_cast<std::uint16_t>(h));
    if (!std::isfinite(lo)) break;
    double hi = c.decode(static_cast<std::uint16_t>(h + 1));
    if (std::isinf(hi)) hi = 2 * lo - c.decode(static_cast<std::uint16_t>(h - 1));  // next step
    const double mid = (lo + hi) / 2;
    const auto midf = static_cast<float>(mid);
    ASSERT_EQ(static_cast<double>(midf), mid) << "midpoint not a float, code 0x" << std::hex << h;
    for (float x : {midf, std::nextafter(midf, 0.0f), std::nextafter(midf, INFINITY)}) {
      m.check(c, x);
      m.check(c, -x);
    }
  }
  m.expect_none();
}

TEST_P(HalfFormat, SpecialValuesRoundAsTheModelSays) {
  const HalfCodec& c = GetParam();
  Mismatches m;
  const float inf = std::numeric_limits<float>::infinity();
  for (float x : {0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(),
                  std::numeric_limits<float>::max(), std::numeric_limits<float>::min(),
                  std::numeric_limits<float>::denorm_min(), 0x1p-130f, 0x1.8p-149f, 65504.0f,
                  65519.998f, 65520.0f, 0x1.fep127f, 0x1.ff0000p127f})
    for (float s : {1.0f, -1.0f}) m.check(c, s * x);
  m.expect_none();
}

// Tens of millions of uniformly random float32 patterns per seed.
class HalfFormatSample : public ::testing::TestWithParam<std::tuple<HalfCodec, std::uint64_t>> {};

TEST_P(HalfFormatSample, RandomFloatPatternsRoundToNearestEven) {
  const auto& [c, seed] = GetParam();
  const FloatPatterns patterns(seed, c.format.name);
  Mismatches m;
  for (std::uint64_t i = 0; i < (std::uint64_t{1} << 24); ++i) m.check(c, patterns[i]);
  m.expect_none();
}

std::string codec_name(const HalfCodec& c) { return c.format.name; }

INSTANTIATE_TEST_SUITE_P(Formats, HalfFormat, ::testing::Values(kBf16Codec, kFp16Codec),
                         [](const auto& info) { return codec_name(info.param); });
INSTANTIATE_TEST_SUITE_P(Formats, HalfFormatSample,
                         ::testing::Combine(::testing::Values(kBf16Codec, kFp16Codec),
                                            ::testing::Values(1u, 2u)),
                         [](const auto& info) {
                           return codec_name(std::get<0>(info.param)) + "_seed" +
                                  std::to_string(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace overlap::formats::testing
