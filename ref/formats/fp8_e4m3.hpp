#pragma once
// OCP fp8 e4m3fn: 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinities; 0x7f and 0xff
// are NaN; largest finite 448; subnormals down to 2^-9.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace overlap::formats {

enum class Fp8Overflow {
  Saturate,  // values beyond ±448 clamp to ±448 (CUDA's __NV_SATFINITE)
  ToNaN,     // values beyond the rounding range become NaN (PyTorch's .to(float8_e4m3fn))
};

inline float e4m3_to_float(std::uint8_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x80u) << 24;
  const std::uint32_t exp = (bits >> 3) & 0xfu;
  const std::uint32_t man = bits & 0x7u;
  if (exp == 0xf && man == 0x7) return std::bit_cast<float>(sign | 0x7fc00000u);  // NaN
  if (exp == 0) {
    const float magnitude = static_cast<float>(man) * 0x1p-9f;  // subnormal: exact
    return sign ? -magnitude : magnitude;
  }
  // Normal: rebias the exponent (7 -> 127) and widen the mantissa (3 -> 23 bits).
  return std::bit_cast<float>(sign | ((exp + 120u) << 23) | (man << 20));
}

// Round to nearest, ties to even; out-of-range values follow `overflow`; NaN stays NaN.
inline std::uint8_t e4m3_from_float(float value, Fp8Overflow overflow = Fp8Overflow::Saturate) {
  const std::uint8_t sign = std::signbit(value) ? 0x80u : 0x00u;
  if (std::isnan(value)) return static_cast<std::uint8_t>(sign | 0x7fu);
  const float a = std::fabs(value);
  // 464 is the midpoint between 448 and the next step 480 (whose code 0x7f is NaN). Ties round
  // to even and 448 = 1.110b * 2^8 has an even mantissa, so 464 itself rounds down to 448 (as
  // PyTorch's float8_e4m3fn cast does); anything above 464 (and infinity) is out of range.
  if (a > 464.0f) {
    return overflow == Fp8Overflow::Saturate ? static_cast<std::uint8_t>(sign | 0x7eu)
                                             : static_cast<std::uint8_t>(sign | 0x7fu);
  }
  if (a < 0x1p-6f) {
    // Subnormal range: a step of 2^-9. nearbyint rounds half to even in the default mode.
    const auto steps = static_cast<unsigned>(std::nearbyint(a * 512.0f));  // 0..8
    return static_cast<std::uint8_t>(sign | steps);  // steps == 8 is exactly the smallest normal
  }
  int exp2 = 0;
  const float frac = std::frexp(a, &exp2);  // a = frac * 2^exp2, frac in [0.5, 1)
  int exponent = exp2 - 1;                  // a = (2 frac) * 2^exponent
  auto mant = static_cast<unsigned>(std::nearbyint((2.0f * frac - 1.0f) * 8.0f));
  if (mant == 8) {
    mant = 0;
    ++exponent;
  }
  const unsigned biased = static_cast<unsigned>(exponent + 7);
  const auto out = static_cast<std::uint8_t>(sign | (biased << 3) | mant);
  return out;  // a <= 464 never rounds to 480 here, so 0x7f (NaN) is never produced
}

inline float round_to_e4m3(float value) { return e4m3_to_float(e4m3_from_float(value)); }

}  // namespace overlap::formats
