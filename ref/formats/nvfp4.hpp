#pragma once
// NVFP4 matrices as the sm_100 block-scaled GEMMs consume them: a rows x cols (cols = K)
// matrix of e2m1 codes, two per byte (element k in byte k/2, even k in the low nibble), with
// one e4m3 scale per 16 consecutive elements along K, stored in the 128x4 blocked layout
// (blocked_scale_layout.hpp). Value = e2m1(code) * e4m3(scale). This project uses no second,
// per-tensor fp32 scale.
//
// Quantization of one 16-element block (our definition; kernels only ever read the result):
//   scale = e4m3_rne(amax / 6)        (float division, saturating at 448)
//   code  = e2m1_rne(x / e4m3(scale)) (float division, saturating at 6)
// A block whose scale rounds to zero (amax <= 6 * 2^-10) quantizes to all zeros.
// Padding bytes of the scale layout are zero.
#include <cstdint>
#include <span>

#include "formats/blocked_scale_layout.hpp"

namespace overlap::formats {

inline constexpr std::int64_t kNvfp4BlockSize = 16;  // elements per scale, along K

// 4-bit code of element k of a packed row.
inline std::uint8_t nvfp4_code(std::span<const std::uint8_t> packed_row, std::int64_t k) {
  const std::uint8_t byte = packed_row[static_cast<std::size_t>(k / 2)];
  return static_cast<std::uint8_t>((k % 2 == 0) ? (byte & 0x0fu) : (byte >> 4));
}

inline void set_nvfp4_code(std::span<std::uint8_t> packed_row, std::int64_t k, std::uint8_t code) {
  std::uint8_t& byte = packed_row[static_cast<std::size_t>(k / 2)];
  byte = (k % 2 == 0) ? static_cast<std::uint8_t>((byte & 0xf0u) | (code & 0x0fu))
                      : static_cast<std::uint8_t>((byte & 0x0fu) | ((code & 0x0fu) << 4));
}

// Shape of one NVFP4 matrix: byte sizes of its packed values and its blocked scales.
struct Nvfp4Shape {
  std::int64_t rows = 0;
  std::int64_t cols = 0;  // K, a multiple of 16

  BlockedScaleLayout scale_layout() const { return {rows, cols / kNvfp4BlockSize}; }
  std::int64_t packed_bytes() const { return rows * cols / 2; }
  std::int64_t scale_bytes() const { return scale_layout().size(); }
};

// Quantizes a row-major rows x cols float matrix. `packed` holds packed_bytes(), `scales`
// holds scale_bytes() (fully written, padding zeroed). Throws on a non-finite input (naming
// row and column), cols not a multiple of 16, or a wrongly sized output span.
void nvfp4_quantize(std::span<const float> values, const Nvfp4Shape& shape,
                    std::span<std::uint8_t> packed, std::span<std::uint8_t> scales);

// Decodes into a row-major rows x cols float matrix (exact: e2m1 x e4m3 needs 6 significant
// bits). Throws on wrongly sized spans or a scale that is NaN (0x7f/0xff) or negative (the
// hardware reads scales as unsigned ue4m3), naming row and k-block.
void nvfp4_dequantize(std::span<const std::uint8_t> packed, std::span<const std::uint8_t> scales,
                      const Nvfp4Shape& shape, std::span<float> out);

}  // namespace overlap::formats
