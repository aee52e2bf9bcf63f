// The float64 oracle: the recurrence of SPEC section 1, one token at a time, per (batch, head).
//   S_t = diag(exp(g_t)) S_{t-1} + k_t v_t^T,   o_t = s * S_t^T q_t,   S_0 = h0 (or 0).
#include <algorithm>
#include <cmath>
#include <vector>

#include <tbb/parallel_for.h>

#include "gla/oracle_step.hpp"
#include "gla/reference.hpp"

namespace overlap::gla {

void check_size(std::string_view what, const char* name, std::size_t have, std::int64_t want) {
  OVERLAP_REQUIRE(have == static_cast<std::size_t>(want), "{}: array '{}' has {} elements, the shape needs {}", what,
                  name, have, want);
}

void check_sizes(const GlaShape& shape, const GlaInputs& in, std::size_t o_size,
                 std::size_t hT_size) {
  check_size("gla", "q", in.q.size(), shape.qk_numel());
  check_size("gla", "k", in.k.size(), shape.qk_numel());
  check_size("gla", "g", in.g.size(), shape.qk_numel());
  check_size("gla", "v", in.v.size(), shape.v_numel());
  check_size("gla", "h0", in.h0.size(), shape.has_h0 ? shape.state_numel() : 0);
  check_size("gla", "o", o_size, shape.v_numel());
  check_size("gla", "hT", hT_size, shape.want_hT ? shape.state_numel() : 0);
}

void oracle(const GlaShape& shape, const GlaInputs& in, const GlaOutputs<double>& out) {
  check_sizes(shape, in, out.o.size(), out.hT.size());
  const std::int64_t T = shape.T, H = shape.H, K = shape.K, V = shape.V;
  tbb::parallel_for(std::int64_t{0}, shape.B * H, [&](std::int64_t bh) {
    const std::int64_t b = bh / H, h = bh % H;
    std::vector<double> S(static_cast<std::size_t>(K * V), 0.0);  // S[c][j], row c of K
    std::vector<double> o_t(static_cast<std::size_t>(V));
    if (shape.has_h0)
      for (std::int64_t i = 0; i < K * V; ++i) S[i] = in.h0[bh * K * V + i];
    for (std::int64_t t = 0; t < T; ++t) {
      const std::int64_t qk_row = ((b * T + t) * H + h) * K;
      const std::int64_t v_row = ((b * T + t) * H + h) * V;
      detail::oracle_state_step(&in.g[qk_row], &in.k[qk_row], &in.v[v_row], K, V, S.data(), S.data());
      std::fill(o_t.begin(), o_t.end(), 0.0);
      for (std::int64_t c = 0; c < K; ++c) {
        const double qc = in.q[qk_row + c];
        for (std::int64_t j = 0; j < V; ++j) o_t[j] += S[c * V + j] * qc;
      }
      for (std::int64_t j = 0; j < V; ++j) out.o[v_row + j] = shape.scale * o_t[j];
    }
    if (shape.want_hT)
      for (std::int64_t i = 0; i < K * V; ++i) out.hT[bh * K * V + i] = S[i];
  });
}

}  // namespace overlap::gla
