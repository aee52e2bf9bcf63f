#include "vectors/poison.hpp"

#include <algorithm>

namespace overlap {
namespace {
template <class T>
std::int64_t count_equal(const Tensor& t, T pattern) {
  const auto v = t.view<T>();
  return std::count(v.begin(), v.end(), pattern);
}
}  // namespace

void poison(Tensor& t) {
  switch (t.dtype()) {
    case DType::F64: std::ranges::fill(t.view<std::uint64_t>(), kPoisonF64); return;
    case DType::F32: std::ranges::fill(t.view<std::uint32_t>(), kPoisonF32); return;
    case DType::F16: std::ranges::fill(t.view<std::uint16_t>(), kPoisonHalf); return;
    case DType::BF16: std::ranges::fill(t.view<std::uint16_t>(), kPoisonBF16); return;
    default: fail("cannot poison a {} tensor", dtype_name(t.dtype()));
  }
}

std::int64_t count_poisoned(const Tensor& t) {
  switch (t.dtype()) {
    case DType::F64: return count_equal<std::uint64_t>(t, kPoisonF64);
    case DType::F32: return count_equal<std::uint32_t>(t, kPoisonF32);
    case DType::F16: return count_equal<std::uint16_t>(t, kPoisonHalf);
    case DType::BF16: return count_equal<std::uint16_t>(t, kPoisonBF16);
    default: return 0;
  }
}

}  // namespace overlap
