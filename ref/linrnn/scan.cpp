// linrnn second stage: gated scan and SiLU gate over a projection already computed, as a
// two-level scan in chunks of timesteps (what a GPU scan kernel does instead of walking T
// one dependent load at a time):
//   1. per (batch, chunk): compose the chunk's steps h ↦ a·h + b into one pair (A, Bc);
//   2. per batch: walk the chunk pairs to get each chunk's incoming state (and hT);
//   3. per (batch, chunk): rescan the chunk from its incoming state and apply the gate.
// Steps 1 and 3 are parallel over batches × chunks; step 2 is short (T / chunk pairs).
#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "linrnn/linrnn.hpp"

namespace overlap::linrnn {

namespace {

float sigmoid(float v) { return 1.0f / (1.0f + std::exp(-v)); }

// Rewrites each row (u | a_pre | z) in place as (b | a | gate) with a = sigmoid(a_pre),
// b = (1 − a)·u and gate = silu(z), so the recurrence becomes h ↦ a·h + b. 1 − a is taken as
// sigmoid(−a_pre): subtracting a ≈ 0.99 from 1 in fp32 would cancel two digits away.
void activate_rows(std::span<float> proj, std::int64_t rows, std::int64_t dv) {
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < rows; ++r) {
    float* row = proj.data() + r * 3 * dv;
    for (std::int64_t c = 0; c < dv; ++c) {
      const float a_pre = row[dv + c], z = row[2 * dv + c];
      row[c] = sigmoid(-a_pre) * row[c];
      row[dv + c] = sigmoid(a_pre);
      row[2 * dv + c] = z * sigmoid(z);
    }
  }
}

}  // namespace

void scan_and_gate(const LinrnnShape& shape, std::span<float> proj, std::span<const float> h0,
                   std::span<float> y, std::span<float> hT, std::int64_t chunk) {
  shape.validate();
  const std::int64_t B = shape.B, T = shape.T, dv = shape.dv, width = 3 * dv;
  OVERLAP_REQUIRE(chunk >= 1, "linrnn: scan chunk length {} must be at least 1", chunk);
  OVERLAP_REQUIRE(static_cast<std::int64_t>(proj.size()) == B * T * width,
                  "linrnn: projection has {} values, expected {}", proj.size(), B * T * width);
  OVERLAP_REQUIRE(h0.empty() || static_cast<std::int64_t>(h0.size()) == B * dv,
                  "linrnn: h0 has {} values, expected {} or none", h0.size(), B * dv);
  OVERLAP_REQUIRE(static_cast<std::int64_t>(y.size()) == B * T * dv,
                  "linrnn: y has {} values, expected {}", y.size(), B * T * dv);
  OVERLAP_REQUIRE(hT.empty() || static_cast<std::int64_t>(hT.size()) == B * dv,
                  "linrnn: hT has {} values, expected {} or none", hT.size(), B * dv);

  activate_rows(proj, B * T, dv);
  const std::int64_t chunks = (T + chunk - 1) / chunk;
  const auto row = [&](std::int64_t b, std::int64_t t) { return proj.data() + (b * T + t) * width; };

  // 1. Chunk pairs: (A, Bc) with h_out = A·h_in + Bc over the chunk.
  std::vector<float> carry_a(B * chunks * dv), carry_b(B * chunks * dv);
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t n = 0; n < chunks; ++n) {
      float* A = &carry_a[(b * chunks + n) * dv];
      float* Bc = &carry_b[(b * chunks + n) * dv];
      std::fill(A, A + dv, 1.0f);
      std::fill(Bc, Bc + dv, 0.0f);
      for (std::int64_t t = n * chunk; t < std::min(T, (n + 1) * chunk); ++t) {
        const float* step = row(b, t);
        for (std::int64_t c = 0; c < dv; ++c) {
          A[c] *= step[dv + c];
          Bc[c] = step[dv + c] * Bc[c] + step[c];
        }
      }
    }

  // 2. Incoming state of every chunk, walking the chunk pairs in order.
  std::vector<float> incoming(B * chunks * dv);
#pragma omp parallel for schedule(static)
  for (std::int64_t b = 0; b < B; ++b) {
    std::vector<float> h(dv, 0.0f);
    if (!h0.empty()) std::copy(h0.begin() + b * dv, h0.begin() + (b + 1) * dv, h.begin());
    for (std::int64_t n = 0; n < chunks; ++n) {
      const std::int64_t at = (b * chunks + n) * dv;
      for (std::int64_t c = 0; c < dv; ++c) {
        incoming[at + c] = h[c];
        h[c] = carry_a[at + c] * h[c] + carry_b[at + c];
      }
    }
    if (!hT.empty()) std::copy(h.begin(), h.end(), hT.begin() + b * dv);
  }

  // 3. Rescan each chunk from its true incoming state and gate.
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t n = 0; n < chunks; ++n) {
      std::vector<float> h(incoming.begin() + (b * chunks + n) * dv,
                           incoming.begin() + (b * chunks + n + 1) * dv);
      for (std::int64_t t = n * chunk; t < std::min(T, (n + 1) * chunk); ++t) {
        const float* step = row(b, t);
        float* yt = y.data() + (b * T + t) * dv;
        for (std::int64_t c = 0; c < dv; ++c) {
          h[c] = step[dv + c] * h[c] + step[c];
          yt[c] = h[c] * step[2 * dv + c];
        }
      }
    }
}

}  // namespace overlap::linrnn
