#pragma once
// An independent model of the small float formats, written differently from ref/formats on
// purpose: values are decoded from their bit fields with ldexp, and rounding works on exact
// double arithmetic (scale to an integer count of ulps, floor, compare the remainder with 1/2,
// break ties towards the even count). No bit tricks, no float adder tricks, no lookup tables.
#include <cmath>
#include <cstdint>
#include <limits>

namespace overlap::formats::testing {

enum class Specials {
  Ieee,    // all-ones exponent: infinity (mantissa 0) or NaN
  E4m3fn,  // only S.1111.111 is NaN, no infinity
  None,    // every code is a finite number (e2m1)
};

enum class OnOverflow { Infinity, Saturate, NaN };

struct FloatFormat {
  const char* name;
  int exponent_bits;
  int mantissa_bits;
  Specials specials;

  int bias() const { return (1 << (exponent_bits - 1)) - 1; }
  int min_exponent() const { return 1 - bias(); }  // exponent of the smallest normal
  int code_bits() const { return 1 + exponent_bits + mantissa_bits; }
  double max_finite() const {
    const int top_exp = (1 << exponent_bits) - 1;  // biased
    switch (specials) {
      case Specials::Ieee:  // largest exponent below all-ones, full mantissa
        return std::ldexp(2.0 - std::ldexp(1.0, -mantissa_bits), top_exp - 1 - bias());
      case Specials::E4m3fn:  // all-ones exponent, mantissa all-ones minus one
        return std::ldexp(2.0 - std::ldexp(2.0, -mantissa_bits), top_exp - bias());
      case Specials::None:
        return std::ldexp(2.0 - std::ldexp(1.0, -mantissa_bits), top_exp - bias());
    }
    return 0;
  }
};

inline constexpr FloatFormat kBf16{"bf16", 8, 7, Specials::Ieee};
inline constexpr FloatFormat kFp16{"fp16", 5, 10, Specials::Ieee};
inline constexpr FloatFormat kE4m3{"e4m3", 4, 3, Specials::E4m3fn};
inline constexpr FloatFormat kE2m1{"e2m1", 2, 1, Specials::None};

// Value of a code from its fields.
inline double reference_decode(std::uint32_t code, const FloatFormat& f) {
  const std::uint32_t man_mask = (1u << f.mantissa_bits) - 1;
  const std::uint32_t exp_mask = (1u << f.exponent_bits) - 1;
  const bool negative = (code >> (f.exponent_bits + f.mantissa_bits)) & 1u;
  const std::uint32_t exp = (code >> f.mantissa_bits) & exp_mask;
  const std::uint32_t man = code & man_mask;
  double magnitude;
  if (f.specials == Specials::Ieee && exp == exp_mask) {
    magnitude = man == 0 ? std::numeric_limits<double>::infinity()
                         : std::numeric_limits<double>::quiet_NaN();
  } else if (f.specials == Specials::E4m3fn && exp == exp_mask && man == man_mask) {
    magnitude = std::numeric_limits<double>::quiet_NaN();
  } else if (exp == 0) {
    magnitude = std::ldexp(static_cast<double>(man), f.min_exponent() - f.mantissa_bits);
  } else {
    magnitude = std::ldexp(1.0 + std::ldexp(static_cast<double>(man), -f.mantissa_bits),
                           static_cast<int>(exp) - f.bias());
  }
  return negative ? -magnitude : magnitude;
}

// x rounded to the nearest value of the format, ties to the even significand; a result beyond
// the largest finite value (after rounding with an unbounded exponent) follows `overflow`.
inline double reference_round(double x, const FloatFormat& f, OnOverflow overflow) {
  if (std::isnan(x)) return std::numeric_limits<double>::quiet_NaN();
  const double a = std::fabs(x);
  if (a == 0) return x;
  double rounded = std::numeric_limits<double>::infinity();
  if (!std::isinf(a)) {
    const int exponent = std::max(std::ilogb(a), f.min_exponent());
    const double ulp = std::ldexp(1.0, exponent - f.mantissa_bits);
    const double steps = a / ulp;  // exact: division by a power of two
    double whole = std::floor(steps);
    const double remainder = steps - whole;  // exact
    const bool odd = std::fmod(whole, 2.0) != 0.0;
    if (remainder > 0.5 || (remainder == 0.5 && odd)) whole += 1.0;
    rounded = whole * ulp;
  }
  if (rounded > f.max_finite()) {
    switch (overflow) {
      case OnOverflow::Infinity:
        rounded = std::numeric_limits<double>::infinity();
        break;
      case OnOverflow::Saturate:
        rounded = f.max_finite();
        break;
      case OnOverflow::NaN:
        return std::numeric_limits<double>::quiet_NaN();
    }
  }
  return std::copysign(rounded, x);
}

// Same value, same sign (so +0 and -0 differ), or both NaN.
inline bool same_value(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

}  // namespace overlap::formats::testing
