#include "formats/nvfp4.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "formats/e2m1.hpp"
#include "formats/fp8_e4m3.hpp"

namespace overlap::formats {
namespace {

void check_sizes(const Nvfp4Shape& shape, std::size_t values, std::size_t packed,
                 std::size_t scales) {
  OVERLAP_REQUIRE(shape.rows > 0 && shape.cols > 0, "nvfp4: empty matrix {} x {}", shape.rows,
                  shape.cols);
  OVERLAP_REQUIRE(shape.cols % kNvfp4BlockSize == 0,
                  "nvfp4: K={} is not a multiple of the 16-element scale block", shape.cols);
  OVERLAP_REQUIRE(values == static_cast<std::size_t>(shape.rows * shape.cols),
                  "nvfp4: {} values for a {} x {} matrix", values, shape.rows, shape.cols);
  OVERLAP_REQUIRE(packed == static_cast<std::size_t>(shape.packed_bytes()),
                  "nvfp4: {} packed bytes, expected {}", packed, shape.packed_bytes());
  OVERLAP_REQUIRE(scales == static_cast<std::size_t>(shape.scale_bytes()),
                  "nvfp4: {} scale bytes, expected {} (128x4 blocked layout)", scales,
                  shape.scale_bytes());
}

}  // namespace

void nvfp4_quantize(std::span<const float> values, const Nvfp4Shape& shape,
                    std::span<std::uint8_t> packed, std::span<std::uint8_t> scales) {
  check_sizes(shape, values.size(), packed.size(), scales.size());
  const std::int64_t k_blocks = shape.cols / kNvfp4BlockSize;
  const std::int64_t k_tiles = shape.scale_layout().k_tiles();
  std::fill(scales.begin(), scales.end(), std::uint8_t{0});
  for (std::int64_t r = 0; r < shape.rows; ++r) {
    const auto row = values.subspan(static_cast<std::size_t>(r * shape.cols),
                                    static_cast<std::size_t>(shape.cols));
    const auto packed_row = packed.subspan(static_cast<std::size_t>(r * shape.cols / 2),
                                           static_cast<std::size_t>(shape.cols / 2));
    for (std::int64_t b = 0; b < k_blocks; ++b) {
      const std::int64_t k0 = b * kNvfp4BlockSize;
      float amax = 0.0f;
      for (std::int64_t k = k0; k < k0 + kNvfp4BlockSize; ++k) {
        const float x = row[static_cast<std::size_t>(k)];
        OVERLAP_REQUIRE(std::isfinite(x), "nvfp4: non-finite value {} at row {}, column {}", x, r,
                        k);
        amax = std::max(amax, std::fabs(x));
      }
      const std::uint8_t scale_code = e4m3_from_float(amax / kE2m1Max, Fp8Overflow::Saturate);
      const float scale = e4m3_to_float(scale_code);
      scales[static_cast<std::size_t>(scale_offset_unchecked(r, b, k_tiles))] = scale_code;
      for (std::int64_t k = k0; k < k0 + kNvfp4BlockSize; ++k) {
        const float x = row[static_cast<std::size_t>(k)];
        set_nvfp4_code(packed_row, k, scale == 0.0f ? std::uint8_t{0} : e2m1_from_float(x / scale));
      }
    }
  }
}

void nvfp4_dequantize(std::span<const std::uint8_t> packed, std::span<const std::uint8_t> scales,
                      const Nvfp4Shape& shape, std::span<float> out) {
  check_sizes(shape, out.size(), packed.size(), scales.size());
  const std::int64_t k_blocks = shape.cols / kNvfp4BlockSize;
  const std::int64_t k_tiles = shape.scale_layout().k_tiles();
  for (std::int64_t r = 0; r < shape.rows; ++r) {
    const auto packed_row = packed.subspan(static_cast<std::size_t>(r * shape.cols / 2),
                                           static_cast<std::size_t>(shape.cols / 2));
    for (std::int64_t b = 0; b < k_blocks; ++b) {
      const std::uint8_t scale_code =
          scales[static_cast<std::size_t>(scale_offset_unchecked(r, b, k_tiles))];
      OVERLAP_REQUIRE((scale_code & 0x7fu) != 0x7fu,
                      "nvfp4: scale of row {}, k-block {} is NaN (0x{:02x})", r, b, scale_code);
      OVERLAP_REQUIRE(
          (scale_code & 0x80u) == 0,
          "nvfp4: scale of row {}, k-block {} is negative (0x{:02x}); scales are unsigned ue4m3", r,
          b, scale_code);
      const float scale = e4m3_to_float(scale_code);
      for (std::int64_t k = b * kNvfp4BlockSize; k < (b + 1) * kNvfp4BlockSize; ++k)
        out[static_cast<std::size_t>(r * shape.cols + k)] =
            e2m1_to_float(nvfp4_code(packed_row, k)) * scale;
    }
  }
}

}  // namespace overlap::formats
