#pragma once
// What the gla models share: the shape of a gla call as the kernel models take it.
#include <cstdint>

namespace overlap::sim {

struct GlaKernelShape {
  std::int64_t B, T, H, K, V;
  bool h0, hT;
};

}  // namespace overlap::sim
