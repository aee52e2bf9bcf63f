#pragma once
// fp4 e2m1, the element type of NVFP4: 1 sign, 2 exponent (bias 1), 1 mantissa bit. A code is
// the low 4 bits of a byte; bit 3 is the sign, codes 0-7 are 0, 0.5, 1, 1.5, 2, 3, 4, 6. There
// is no infinity and no NaN.
#include <cmath>
#include <cstdint>

namespace overlap::formats {

inline constexpr float kE2m1Max = 6.0f;

inline float e2m1_to_float(std::uint8_t code) {
  // Magnitudes of codes 0-7: one subnormal step (0.5), then 1.m * 2^(e-1).
  constexpr float kMagnitude[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  const float m = kMagnitude[code & 0x7u];
  return (code & 0x8u) ? -m : m;
}

// Round to nearest, ties to even (the even code has mantissa bit 0); magnitudes beyond 6
// saturate to 6, as cvt.rn.satfinite does. NaN has no e2m1 code: it maps to +6 here, and
// every caller that can meet one (nvfp4 quantization) rejects it first.
inline std::uint8_t e2m1_from_float(float value) {
  if (std::isnan(value)) return 0x7u;
  const std::uint8_t sign = std::signbit(value) ? 0x8u : 0x0u;
  const float a = std::fabs(value);
  // Midpoint between magnitude codes c and c + 1. Above it the value rounds up; exactly on it
  // the tie goes to the even code (mantissa bit 0); magnitudes past 5 go to code 7 (6.0).
  constexpr float kMidpoint[7] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f};
  std::uint8_t code = 0;
  while (code < 7 && (a > kMidpoint[code] || (a == kMidpoint[code] && code % 2 == 1))) ++code;
  return static_cast<std::uint8_t>(sign | code);
}

}  // namespace overlap::formats
