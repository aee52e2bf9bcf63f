#pragma once
// What the gla models share: the shape of a gla call as the kernel models take it.
#include <cstdint>

namespace overlap::sim {

struct GlaKernelShape {
  std::int64_t B, T, H, K, V;
  bool h0, hT;
  int segments = 0;  // pingpong_fused: CTAs per walk along T (0: the launcher's rule)
};

}  // namespace overlap::sim
