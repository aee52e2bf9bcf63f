// Why the sub-chunk anchoring exists, shown on the very inputs the agreement tests use: with
// strong gates the textbook split e^{b_i - b_j} = e^{b_i} * e^{-b_j} over a 64-token chunk
// overflows fp32, so a strong-gate test that passes proves the anchoring works (and would catch
// a kernel or reference that forgot it).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "gla_test_support.hpp"

namespace overlap::gla::testing {
namespace {

struct NaiveChunk {
  bool factor_overflowed = false;  // some e^{-b_j} was inf in fp32
  bool score_broken = false;       // some intra-chunk score came out inf or NaN
};

// Scores of chunk [t0, t0 + C) of (b, h) = (0, 0) by the unanchored split, all in fp32, the
// way a kernel without anchoring would form them: A_ij = <q_i e^{b_i}, k_j e^{-b_j}>.
NaiveChunk naive_chunk(const Problem& p, std::int64_t t0, std::int64_t C) {
  const std::int64_t K = p.shape.K, H = p.shape.H;
  std::vector<float> b(static_cast<std::size_t>(C * K));
  NaiveChunk r;
  for (std::int64_t i = 0; i < C; ++i)
    for (std::int64_t c = 0; c < K; ++c)
      b[i * K + c] = (i ? b[(i - 1) * K + c] : 0.0f) + p.in.g[((t0 + i) * H) * K + c];
  for (std::int64_t i = 0; i < C; ++i)
    for (std::int64_t j = 0; j <= i; ++j) {
      float score = 0;
      for (std::int64_t c = 0; c < K; ++c) {
        const float up = std::exp(-b[j * K + c]);
        r.factor_overflowed |= std::isinf(up);
        score += p.in.q[((t0 + i) * H) * K + c] * std::exp(b[i * K + c]) *
                 (p.in.k[((t0 + j) * H) * K + c] * up);
      }
      r.score_broken |= !std::isfinite(score);
    }
  return r;
}

TEST(GlaAnchoring, UnanchoredSplitOverflowsWithStrongGatesButNotDefaultGates) {
  const GlaShape shape = parse_shape("B=1,T=64,H=1,K=64,V=64");
  const NaiveChunk strong = naive_chunk(Problem(shape, 11, "strong_gates"), 0, 64);
  EXPECT_TRUE(strong.factor_overflowed);
  EXPECT_TRUE(strong.score_broken);
  // The same code is fine with ordinary gates: the failure is the gates', not the test's.
  const NaiveChunk mild = naive_chunk(Problem(shape, 11, "default"), 0, 64);
  EXPECT_FALSE(mild.factor_overflowed);
  EXPECT_FALSE(mild.score_broken);
}

TEST(GlaAnchoring, ChunkedReferenceStaysFiniteAndAccurateOnTheSameInputs) {
  const Problem p(parse_shape("B=1,T=64,H=1,K=64,V=64"), 11, "strong_gates");
  const auto ref = run_oracle(p.shape, p.in.spans());
  const auto out = run_chunked(p.shape, p.in.spans());
  EXPECT_TRUE(all_finite(out.o));
  EXPECT_TRUE(all_finite(out.hT));
  EXPECT_LE(rel_error(out.o, ref.o), 1e-5);
  EXPECT_LE(rel_error(out.hT, ref.hT), 1e-5);
}

TEST(GlaAnchoring, StrongGatesAverageAboutMinusEightPerStep) {
  const Problem p(parse_shape("B=2,T=256,H=2,K=64,V=64"), 1, "strong_gates");
  double sum = 0;
  for (float g : p.in.g) sum += g;
  const double mean = sum / static_cast<double>(p.in.g.size());
  EXPECT_GT(mean, -8.4);  // E[logsigmoid(N(0,1))] / 0.1 = -8.07
  EXPECT_LT(mean, -7.7);
}

}  // namespace
}  // namespace overlap::gla::testing
