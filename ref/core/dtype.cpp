#include "core/dtype.hpp"

#include <array>
#include <utility>

#include "core/error.hpp"

namespace overlap {
namespace {
struct DTypeInfo {
  DType type;
  std::string_view name;
  std::size_t size;
  bool is_float;
};
constexpr std::array<DTypeInfo, 8> kInfo{{
    {DType::F64, "F64", 8, true},
    {DType::F32, "F32", 4, true},
    {DType::F16, "F16", 2, true},
    {DType::BF16, "BF16", 2, true},
    {DType::F8_E4M3, "F8_E4M3", 1, true},
    {DType::U8, "U8", 1, false},
    {DType::I32, "I32", 4, false},
    {DType::I64, "I64", 8, false},
}};
const DTypeInfo& info(DType t) {
  for (const auto& i : kInfo)
    if (i.type == t) return i;
  fail("internal: unknown dtype enum {}", static_cast<int>(t));
}
}  // namespace

std::size_t dtype_size(DType t) { return info(t).size; }
std::string_view dtype_name(DType t) { return info(t).name; }
bool dtype_is_float(DType t) { return info(t).is_float; }

DType dtype_from_name(std::string_view name) {
  for (const auto& i : kInfo)
    if (i.name == name) return i.type;
  fail("unknown dtype '{}' (known: F64, F32, F16, BF16, F8_E4M3, U8, I32, I64)", name);
}

}  // namespace overlap
