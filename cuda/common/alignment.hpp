#pragma once
// The one check of a device pointer's alignment the entry points make before a kernel copies
// pieces of `bytes` from it: "<who>: <what> must be 16-byte aligned (its address ends in 0x8)".
#include <cstdint>
#include <string_view>

#include "core/error.hpp"

namespace overlap::cuda {

inline void require_aligned(std::string_view who, std::string_view what, const void* ptr, std::uintptr_t bytes) {
  const std::uintptr_t rest = reinterpret_cast<std::uintptr_t>(ptr) % bytes;
  OVERLAP_REQUIRE(rest == 0, "{}: {} must be {}-byte aligned (its address ends in {:#x})", who, what, bytes, rest);
}

}  // namespace overlap::cuda
