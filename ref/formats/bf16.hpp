#pragma once
// bfloat16: the top 16 bits of an IEEE float32, rounded to nearest even.
#include <bit>
#include <cstdint>

namespace overlap::formats {

inline float bf16_to_float(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

// Round to nearest, ties to even; NaN stays NaN (quietened), infinities stay infinite.
inline std::uint16_t bf16_from_float(float value) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(value);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x0040u);
  const std::uint32_t lsb = (u >> 16) & 1u;
  return static_cast<std::uint16_t>((u + 0x7fffu + lsb) >> 16);
}

inline float round_to_bf16(float value) { return bf16_to_float(bf16_from_float(value)); }

}  // namespace overlap::formats
