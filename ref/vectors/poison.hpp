#pragma once
// Output poisoning: before a kernel runs, every output element is set to a NaN with a
// recognisable payload. After the run, an element still holding that exact bit pattern was
// never written; any other NaN/Inf is a computed non-finite value. Both fail a check.
#include <cstdint>

#include "core/tensor.hpp"

namespace overlap {

constexpr std::uint64_t kPoisonF64 = 0x7ff8deaddeaddeadull;
constexpr std::uint32_t kPoisonF32 = 0x7fc0dead;
constexpr std::uint16_t kPoisonHalf = 0x7ead;  // F16 NaN with payload 0x2ad
constexpr std::uint16_t kPoisonBF16 = 0x7fad;  // BF16 NaN with payload 0x2d

void poison(Tensor& t);                     // float dtypes only
std::int64_t count_poisoned(const Tensor& t);  // elements still holding the poison pattern

}  // namespace overlap
