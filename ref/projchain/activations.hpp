#pragma once
// The activations of projchain, one definition for both precisions (the float64 oracle and
// the fp32 reference instantiate the same templates).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "projchain/projchain.hpp"

namespace overlap::projchain {

template <class F>
F sigmoid(F v) {
  return F(1) / (F(1) + std::exp(-v));
}

template <class F>
F silu(F v) {
  return v * sigmoid(v);
}

// Scales each dk-long head of `row` to unit L2 norm; a head of norm below kNormEps is
// divided by kNormEps instead (torch.nn.functional.normalize), so all zeros stay zeros.
template <class F>
void l2normalize_heads(F* row, std::int64_t heads, std::int64_t dk) {
  for (std::int64_t h = 0; h < heads; ++h) {
    F* head = row + h * dk;
    F sum_sq = 0;
    for (std::int64_t i = 0; i < dk; ++i) sum_sq += head[i] * head[i];
    const F inv = F(1) / std::max(std::sqrt(sum_sq), static_cast<F>(kNormEps));
    for (std::int64_t i = 0; i < dk; ++i) head[i] *= inv;
  }
}

}  // namespace overlap::projchain
