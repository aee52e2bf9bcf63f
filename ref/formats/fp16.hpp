#pragma once
// IEEE binary16: 1 sign, 5 exponent (bias 15), 10 mantissa bits; subnormals; RNE.
#include <bit>
#include <cstdint>

namespace overlap::formats {

inline float fp16_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  const std::uint32_t man = h & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (man << 13));
  if (exp == 0) {
    // Subnormal (or zero): man * 2^-24, exact in float.
    const float magnitude = static_cast<float>(man) * 0x1p-24f;
    return sign ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (man << 13));
}

// Round to nearest, ties to even; overflow goes to infinity; NaN stays NaN.
inline std::uint16_t fp16_from_float(float value) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(value);
  const std::uint16_t sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
  const std::uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
  if (a >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds past 65504
  if (a < 0x38800000u) {
    // Result is subnormal or zero: add 0.5 so the float adder does the RNE shift for us.
    const float shifted = std::bit_cast<float>(a) + 0.5f;
    return static_cast<std::uint16_t>(sign | (std::bit_cast<std::uint32_t>(shifted) - 0x3f000000u));
  }
  const std::uint32_t lsb = (a >> 13) & 1u;
  const std::uint32_t rounded = a + 0xc8000fffu + lsb;  // rebias exponent (-112 << 23) and round
  return static_cast<std::uint16_t>(sign | (rounded >> 13));
}

inline float round_to_fp16(float value) { return fp16_to_float(fp16_from_float(value)); }

}  // namespace overlap::formats
