// NVFP4 matrices (ref/formats/nvfp4.hpp): nibble packing, quantization against an independent
// restatement of the definition (via format_reference.hpp), exact round trips of representable
// matrices, the blocked scale placement with padding, and rejection of bad values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <tuple>
#include <vector>

#include "core/error.hpp"
#include "core/random.hpp"
#include "format_reference.hpp"
#include "formats/blocked_scale_layout.hpp"
#include "formats/e2m1.hpp"
#include "formats/fp8_e4m3.hpp"
#include "formats/nvfp4.hpp"

namespace overlap::formats {
namespace {

using testing::kE2m1;
using testing::kE4m3;
using testing::OnOverflow;
using testing::reference_decode;
using testing::reference_round;

TEST(Nvfp4Packing, EvenElementGoesToTheLowNibble) {
  std::vector<std::uint8_t> row(2, 0);
  set_nvfp4_code(row, 0, 0x3);  // 1.5
  set_nvfp4_code(row, 1, 0xa);  // -1.0
  set_nvfp4_code(row, 2, 0xf);
  set_nvfp4_code(row, 3, 0x1);
  EXPECT_EQ(row[0], 0xa3);
  EXPECT_EQ(row[1], 0x1f);
  EXPECT_EQ(nvfp4_code(row, 0), 0x3);
  EXPECT_EQ(nvfp4_code(row, 1), 0xa);
  EXPECT_EQ(nvfp4_code(row, 2), 0xf);
  EXPECT_EQ(nvfp4_code(row, 3), 0x1);
  set_nvfp4_code(row, 1, 0x0);  // overwriting one nibble keeps the other
  EXPECT_EQ(row[0], 0x03);
}

TEST(Nvfp4Packing, RandomCodesReadBackInAnyWriteOrder) {
  const CounterRng rng(7, stream_id("codes"));
  const std::int64_t n = 4096;
  std::vector<std::uint8_t> row(n / 2, 0xff), codes(n);
  for (std::int64_t k = 0; k < n; ++k) codes[k] = static_cast<std::uint8_t>(rng.bits(k) & 0xf);
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t k = (i * 1237) % n;  // a permutation of 0..n-1 (1237 is odd)
    set_nvfp4_code(row, k, codes[k]);
  }
  for (std::int64_t k = 0; k < n; ++k) ASSERT_EQ(nvfp4_code(row, k), codes[k]) << k;
}

// Quantizes `values` and returns the dequantized matrix plus the raw buffers.
struct Quantized {
  std::vector<std::uint8_t> packed, scales;
  std::vector<float> dequantized;
};
Quantized quantize(const std::vector<float>& values, const Nvfp4Shape& shape) {
  Quantized q{std::vector<std::uint8_t>(shape.packed_bytes()),
              std::vector<std::uint8_t>(shape.scale_bytes(), 0xee),
              std::vector<float>(values.size())};
  nvfp4_quantize(values, shape, q.packed, q.scales);
  nvfp4_dequantize(q.packed, q.scales, shape, q.dequantized);
  return q;
}

class Nvfp4Quantize
    : public ::testing::TestWithParam<std::tuple<std::int64_t, std::int64_t, std::uint64_t>> {
 protected:
  Nvfp4Shape shape() const { return {std::get<0>(GetParam()), std::get<1>(GetParam())}; }
  std::uint64_t seed() const { return std::get<2>(GetParam()); }
};

// The definition restated in double with the model's rounding: scale = rne_e4m3(amax / 6),
// value = rne_e2m1(x / scale) * scale, both divisions done in float as the definition says.
TEST_P(Nvfp4Quantize, MatchesTheDefinitionElementByElement) {
  const Nvfp4Shape s = shape();
  std::vector<float> x(s.rows * s.cols);
  // Log-uniform magnitudes over 2^-14..2^12 so blocks hit subnormal, normal and saturating
  // scales; some blocks are all zero.
  const CounterRng rng(seed(), stream_id("nvfp4"));
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::int64_t block = static_cast<std::int64_t>(i) / 16;
    const double block_exp = -14.0 + 26.0 * CounterRng(seed(), block).uniform(0);
    x[i] = block % 13 == 5 ? 0.0f : static_cast<float>(rng.normal(i) * std::exp2(block_exp));
  }
  const Quantized q = quantize(x, s);
  const std::int64_t k_blocks = s.cols / 16;
  for (std::int64_t r = 0; r < s.rows; ++r)
    for (std::int64_t b = 0; b < k_blocks; ++b) {
      float amax = 0;
      for (std::int64_t k = b * 16; k < b * 16 + 16; ++k)
        amax = std::max(amax, std::fabs(x[r * s.cols + k]));
      const double scale = reference_round(amax / 6.0f, kE4m3, OnOverflow::Saturate);
      const std::uint8_t stored = q.scales[scale_offset(r, b, s.rows, k_blocks)];
      ASSERT_EQ(e4m3_to_float(stored), scale) << "scale of row " << r << ", block " << b;
      for (std::int64_t k = b * 16; k < b * 16 + 16; ++k) {
        const float xi = x[r * s.cols + k];
        const double want =
            scale == 0 ? 0.0
                       : reference_round(static_cast<float>(xi / static_cast<float>(scale)), kE2m1,
                                         OnOverflow::Saturate) *
                             scale;
        ASSERT_EQ(q.dequantized[r * s.cols + k], want)
            << "row " << r << ", column " << k << ", x " << xi;
      }
    }
}

TEST_P(Nvfp4Quantize, PaddingScalesAreZeroAndEveryLogicalScaleIsPositive) {
  const Nvfp4Shape s = shape();
  std::vector<float> x(s.rows * s.cols);
  fill_normal<float>(x, seed(), "x");
  const Quantized q = quantize(x, s);
  const BlockedScaleLayout layout = s.scale_layout();
  std::vector<bool> logical(layout.size(), false);
  for (std::int64_t r = 0; r < s.rows; ++r)
    for (std::int64_t b = 0; b < layout.k_blocks; ++b) {
      const auto off = scale_offset(r, b, layout.rows, layout.k_blocks);
      logical[off] = true;
      EXPECT_GT(e4m3_to_float(q.scales[off]), 0.0f);
    }
  for (std::size_t i = 0; i < logical.size(); ++i)
    if (!logical[i]) {
      ASSERT_EQ(q.scales[i], 0) << "padding byte " << i;
    }
}

// A matrix built from e2m1 codes and e4m3 scales, with one +-6 per block so amax / 6 is the
// scale exactly, quantizes back to itself: values and scale bytes.
TEST_P(Nvfp4Quantize, RepresentableMatricesRoundTripExactly) {
  const Nvfp4Shape s = shape();
  const std::int64_t k_blocks = s.cols / 16;
  const CounterRng rng(seed(), stream_id("representable"));
  std::vector<float> x(s.rows * s.cols);
  std::vector<std::uint8_t> want_scale(s.rows * k_blocks);
  for (std::int64_t r = 0; r < s.rows; ++r)
    for (std::int64_t b = 0; b < k_blocks; ++b) {
      const std::uint64_t id = static_cast<std::uint64_t>(r * k_blocks + b);
      const auto scale_code = static_cast<std::uint8_t>(1 + rng.bits(id) % 0x7e);  // 0x01..0x7e
      want_scale[id] = scale_code;
      const float scale = e4m3_to_float(scale_code);
      for (std::int64_t j = 0; j < 16; ++j) {
        const auto code = static_cast<std::uint8_t>(rng.bits(1'000'000 + id * 16 + j) & 0xf);
        const float v = j == (static_cast<std::int64_t>(id) % 16) ? (code & 8 ? -6.0f : 6.0f)
                                                                  : e2m1_to_float(code);
        x[r * s.cols + b * 16 + j] = v * scale;
      }
    }
  const Quantized q = quantize(x, s);
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(q.dequantized[i], x[i]) << "element " << i;
  for (std::int64_t r = 0; r < s.rows; ++r)
    for (std::int64_t b = 0; b < k_blocks; ++b)
      ASSERT_EQ(q.scales[scale_offset(r, b, s.rows, k_blocks)], want_scale[r * k_blocks + b]);
}

// rows not a multiple of 128, k-blocks not a multiple of 4, and the aligned case.
INSTANTIATE_TEST_SUITE_P(Shapes, Nvfp4Quantize,
                         ::testing::Combine(::testing::Values(1, 100, 128, 200),
                                            ::testing::Values(16, 96, 256),
                                            ::testing::Values(1u, 2u)));

TEST(Nvfp4QuantizeEdges, ZeroBlockHasZeroScaleAndZeroCodes) {
  const Nvfp4Shape s{1, 16};
  std::vector<float> x(16, 0.0f);
  x[3] = 0x1p-12f;  // amax / 6 rounds to e4m3 zero
  const Quantized q = quantize(x, s);
  EXPECT_EQ(q.scales[0], 0);
  for (float v : q.dequantized) EXPECT_EQ(v, 0.0f);
}

TEST(Nvfp4QuantizeEdges, HugeBlocksSaturateScaleAndValues) {
  const Nvfp4Shape s{1, 16};
  std::vector<float> x(16, 1e6f);
  x[0] = -1e6f;
  const Quantized q = quantize(x, s);
  EXPECT_EQ(q.scales[0], 0x7e);  // 448
  EXPECT_EQ(q.dequantized[0], -6.0f * 448.0f);
  EXPECT_EQ(q.dequantized[1], 6.0f * 448.0f);
}

TEST(Nvfp4QuantizeEdges, BadInputsAreErrorsNamingTheValue) {
  const Nvfp4Shape s{2, 32};
  std::vector<float> x(64, 1.0f);
  std::vector<std::uint8_t> packed(s.packed_bytes()), scales(s.scale_bytes());
  x[35] = std::numeric_limits<float>::quiet_NaN();
  try {
    nvfp4_quantize(x, s, packed, scales);
    FAIL() << "NaN accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("row 1, column 3"), std::string::npos) << e.what();
  }
  x[35] = 1.0f;
  EXPECT_THROW(nvfp4_quantize(x, {2, 24}, packed, scales), Error);  // K not a multiple of 16
  std::vector<std::uint8_t> short_scales(100);
  EXPECT_THROW(nvfp4_quantize(x, s, packed, short_scales), Error);

  nvfp4_quantize(x, s, packed, scales);
  std::vector<float> out(64);
  const auto off = scale_offset(1, 1, 2, 2);
  scales[off] = 0x7f;  // NaN scale
  try {
    nvfp4_dequantize(packed, scales, s, out);
    FAIL() << "NaN scale accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("row 1, k-block 1"), std::string::npos) << e.what();
  }
  scales[off] = 0xb8;  // -1.0: scales are unsigned
  EXPECT_THROW(nvfp4_dequantize(packed, scales, s, out), Error);
}

}  // namespace
}  // namespace overlap::formats
