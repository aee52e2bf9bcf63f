#pragma once
// The float64 oracle's recurrence step, shared by oracle() and oracle_backward(): the backward
// recomputes the forward's states and gets the very values the forward produced.
#include <cmath>
#include <cstdint>

namespace overlap::gla::detail {

// next = diag(exp(g)) prev + k v^T for one token's rows g, k (K values) and v (V values), the
// K x V state row-major; next may be prev (each element is read before it is written).
inline void oracle_state_step(const float* g, const float* k, const float* v, std::int64_t K, std::int64_t V,
                              const double* prev, double* next) {
  for (std::int64_t c = 0; c < K; ++c) {
    const double decay = std::exp(static_cast<double>(g[c]));
    const double kc = k[c];
    for (std::int64_t j = 0; j < V; ++j) next[c * V + j] = decay * prev[c * V + j] + kc * v[j];
  }
}

}  // namespace overlap::gla::detail
