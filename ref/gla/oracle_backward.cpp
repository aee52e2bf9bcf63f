// The float64 gradients of the gla forward (reference.hpp, oracle_backward): the recurrence
// run backwards one token at a time, per (batch, head), states recomputed from checkpoints.
#include <algorithm>
#include <cmath>
#include <vector>

#include <tbb/parallel_for.h>

#include "gla/oracle_step.hpp"
#include "gla/reference.hpp"

namespace overlap::gla {
void check_backward_sizes(const GlaShape& shape, const GlaInputs& in, const GlaOutputGrads& grads, std::size_t dq,
                          std::size_t dk, std::size_t dg, std::size_t dv, std::size_t dh0) {
  check_sizes(shape, in, std::size_t(shape.v_numel()), shape.want_hT ? std::size_t(shape.state_numel()) : 0);
  check_size("gla backward", "do", grads.do_.size(), shape.v_numel());
  check_size("gla backward", "dhT", grads.dhT.size(), shape.want_hT ? shape.state_numel() : 0);
  check_size("gla backward", "dq", dq, shape.qk_numel());
  check_size("gla backward", "dk", dk, shape.qk_numel());
  check_size("gla backward", "dg", dg, shape.qk_numel());
  check_size("gla backward", "dv", dv, shape.v_numel());
  check_size("gla backward", "dh0", dh0, shape.has_h0 ? shape.state_numel() : 0);
}

void oracle_backward(const GlaShape& shape, const GlaInputs& in, const GlaOutputGrads& grads,
                     const GlaInputGrads<double>& out, int checkpoint) {
  OVERLAP_REQUIRE(checkpoint >= 1, "gla backward: checkpoint = {} must be at least 1", checkpoint);
  check_backward_sizes(shape, in, grads, out.dq.size(), out.dk.size(), out.dg.size(), out.dv.size(), out.dh0.size());
  const std::int64_t T = shape.T, H = shape.H, K = shape.K, V = shape.V, KV = K * V;
  const double s = shape.scale;
  tbb::parallel_for(std::int64_t{0}, shape.B * H, [&](std::int64_t bh) {
    const std::int64_t b = bh / H, h = bh % H;
    const auto qk_row = [&](std::int64_t t) { return ((b * T + t) * H + h) * K; };
    const auto v_row = [&](std::int64_t t) { return ((b * T + t) * H + h) * V; };
    // S <- diag(exp(g_t)) S + k_t v_t^T, the forward oracle's step.
    const auto step = [&](std::int64_t t, const double* prev, double* next) {
      detail::oracle_state_step(&in.g[qk_row(t)], &in.k[qk_row(t)], &in.v[v_row(t)], K, V, prev, next);
    };
    // Forward: the state after every `checkpoint` tokens.
    const std::int64_t segments = (T + checkpoint - 1) / checkpoint;
    std::vector<double> ckpt(static_cast<std::size_t>(segments * KV), 0.0);
    std::vector<double> S(static_cast<std::size_t>(KV), 0.0), next(S.size());
    if (shape.has_h0)
      for (std::int64_t i = 0; i < KV; ++i) S[i] = in.h0[bh * KV + i];
    for (std::int64_t t = 0; t < T; ++t) {
      if (t % checkpoint == 0) std::copy(S.begin(), S.end(), ckpt.begin() + (t / checkpoint) * KV);
      step(t, S.data(), next.data());
      S.swap(next);
    }
    // Backward, one segment at a time, its states recomputed from the checkpoint.
    std::vector<double> dS(static_cast<std::size_t>(KV), 0.0);
    if (shape.want_hT)
      for (std::int64_t i = 0; i < KV; ++i) dS[i] = grads.dhT[bh * KV + i];
    std::vector<double> states(static_cast<std::size_t>((checkpoint + 1) * KV));
    for (std::int64_t n = segments - 1; n >= 0; --n) {
      const std::int64_t t0 = n * checkpoint, t1 = std::min(T, t0 + checkpoint);
      std::copy(ckpt.begin() + n * KV, ckpt.begin() + (n + 1) * KV, states.begin());
      for (std::int64_t t = t0; t < t1; ++t) step(t, &states[(t - t0) * KV], &states[(t - t0 + 1) * KV]);
      for (std::int64_t t = t1 - 1; t >= t0; --t) {
        const double* St = &states[(t - t0 + 1) * KV];
        const double* Sprev = &states[(t - t0) * KV];
        const std::int64_t r = qk_row(t), rv = v_row(t);
        for (std::int64_t c = 0; c < K; ++c) {
          double dq = 0;
          for (std::int64_t j = 0; j < V; ++j) dq += St[c * V + j] * grads.do_[rv + j];
          out.dq[r + c] = s * dq;
        }
        for (std::int64_t c = 0; c < K; ++c)
          for (std::int64_t j = 0; j < V; ++j) dS[c * V + j] += s * in.q[r + c] * grads.do_[rv + j];
        for (std::int64_t j = 0; j < V; ++j) {
          double dv = 0;
          for (std::int64_t c = 0; c < K; ++c) dv += dS[c * V + j] * in.k[r + c];
          out.dv[rv + j] = dv;
        }
        for (std::int64_t c = 0; c < K; ++c) {
          const double decay = std::exp(static_cast<double>(in.g[r + c]));
          double dk = 0, ddecay = 0;
          for (std::int64_t j = 0; j < V; ++j) {
            dk += dS[c * V + j] * in.v[rv + j];
            ddecay += dS[c * V + j] * Sprev[c * V + j];
          }
          out.dk[r + c] = dk;
          out.dg[r + c] = decay * ddecay;
          for (std::int64_t j = 0; j < V; ++j) dS[c * V + j] *= decay;
        }
      }
    }
    if (shape.has_h0)
      for (std::int64_t i = 0; i < KV; ++i) out.dh0[bh * KV + i] = dS[i];
  });
}

}  // namespace overlap::gla
