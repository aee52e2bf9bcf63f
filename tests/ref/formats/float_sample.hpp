#pragma once
// Deterministic streams of float32 bit patterns for rounding tests, drawn from the project's
// counter-based RNG: uniformly random patterns (every exponent equally likely, so subnormals,
// huge values, infinities and NaNs all occur), or patterns whose exponent lies in a window
// (to concentrate a narrow format's whole range, e.g. e4m3's 2^-9..448).
#include <bit>
#include <cstdint>

#include "core/random.hpp"

namespace overlap::formats::testing {

class FloatPatterns {
 public:
  FloatPatterns(std::uint64_t seed, const char* stream) : rng_(seed, stream_id(stream)) {}

  float operator[](std::uint64_t i) const {
    return std::bit_cast<float>(static_cast<std::uint32_t>(rng_.bits(i) >> 32));
  }

  // Random sign and mantissa, unbiased exponent uniform in [min_exp, max_exp] (normal floats).
  float with_exponent(std::uint64_t i, int min_exp, int max_exp) const {
    const std::uint64_t r = rng_.bits(i);
    const auto span = static_cast<std::uint64_t>(max_exp - min_exp + 1);
    const auto biased =
        static_cast<std::uint32_t>(min_exp + 127 + static_cast<int>((r >> 32) % span));
    const auto bits = (static_cast<std::uint32_t>(r >> 63) << 31) | (biased << 23) |
                      static_cast<std::uint32_t>(r & 0x7fffffu);
    return std::bit_cast<float>(bits);
  }

 private:
  CounterRng rng_;
};

}  // namespace overlap::formats::testing
