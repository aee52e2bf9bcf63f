// The oracle itself, checked against the definition written out by hand for the first two
// tokens, and the semantics of scale, initial state and final state (which hold for both
// implementations, so each property runs on both).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "gla_test_support.hpp"

namespace overlap::gla::testing {
namespace {

// S_1 = diag(e^{g_1}) h0 + k_1 v_1^T, S_2 = diag(e^{g_2}) S_1 + k_2 v_2^T, o_t = s S_t^T q_t,
// expanded per element for (b, h) = (0, 0) — independent of the oracle's loop structure.
TEST(GlaOracle, FirstTwoTokensMatchTheRecurrenceExpanded) {
  const Problem p(parse_shape("B=1,T=2,H=1,K=5,V=3"), 3, "default");
  const auto ref = run_oracle(p.shape, p.in.spans());
  const auto& in = p.in;
  const int K = 5, V = 3;
  const double s = 1 / std::sqrt(5.0);
  for (int j = 0; j < V; ++j) {
    double o1 = 0, o2 = 0, h2 = 0;
    for (int c = 0; c < K; ++c) {
      const double s1 = std::exp(double{in.g[c]}) * in.h0[c * V + j] + double{in.k[c]} * in.v[j];
      const double s2 = std::exp(double{in.g[K + c]}) * s1 + double{in.k[K + c]} * in.v[V + j];
      o1 += s * in.q[c] * s1;
      o2 += s * in.q[K + c] * s2;
      if (c == 2) h2 = s2;
    }
    EXPECT_NEAR(ref.o[j], o1, 1e-12 * (1 + std::abs(o1)));
    EXPECT_NEAR(ref.o[V + j], o2, 1e-12 * (1 + std::abs(o2)));
    EXPECT_NEAR(ref.hT[2 * V + j], h2, 1e-12 * (1 + std::abs(h2)));
  }
}

TEST(GlaShapeTest, ScaleIsInverseSquareRootOfK) {
  EXPECT_DOUBLE_EQ(parse_shape("K=100").scale, 0.1);
  EXPECT_DOUBLE_EQ(parse_shape("K=60").scale, 1 / std::sqrt(60.0));
}

// Both implementations, as one parameter, so every property below is checked on each.
enum class Impl { Oracle, Chunked };
struct Outputs {
  std::vector<double> o, hT;
};
Outputs run(Impl impl, const GlaShape& s, const GlaInputs& in) {
  if (impl == Impl::Oracle) {
    auto r = run_oracle(s, in);
    return {r.o, r.hT};
  }
  auto r = run_chunked(s, in);
  return {{r.o.begin(), r.o.end()}, {r.hT.begin(), r.hT.end()}};
}
double tolerance(Impl impl) { return impl == Impl::Oracle ? 1e-12 : 1e-5; }

class GlaSemantics : public ::testing::TestWithParam<std::tuple<Impl, const char*>> {};

// o is linear in s; the state does not depend on it.
TEST_P(GlaSemantics, OutputIsLinearInScaleAndStateIsNot) {
  const auto [impl, distribution] = GetParam();
  const Problem p(parse_shape("B=1,T=100,H=2,K=64,V=64"), 5, distribution);
  GlaShape unit = p.shape;
  unit.scale = 1.0;
  const auto scaled = run(impl, p.shape, p.in.spans());
  const auto plain = run(impl, unit, p.in.spans());
  std::vector<double> rescaled = plain.o;
  for (double& x : rescaled) x *= p.shape.scale;
  EXPECT_LE(rel_error(scaled.o, rescaled), tolerance(impl));
  EXPECT_LE(rel_error(scaled.hT, plain.hT), tolerance(impl));
}

// Running tokens [0, split) and then [split, T) from the first run's hT equals one run over
// [0, T): h0 and hT are the same state, carried across a split anywhere in a chunk.
TEST_P(GlaSemantics, FinalStateResumesTheSequence) {
  const auto [impl, distribution] = GetParam();
  const std::int64_t T = 150, H = 2, K = 60, V = 64;
  const Problem whole(parse_shape("B=1,T=150,H=2,K=60,V=64"), 9, distribution);
  const auto full = run(impl, whole.shape, whole.in.spans());
  for (const std::int64_t split : {1, 37, 64, 100}) {
    SCOPED_TRACE("split at token " + std::to_string(split));
    const auto part = [&](const std::vector<float>& x, std::int64_t t0, std::int64_t t1, std::int64_t width) {
      return std::vector<float>(x.begin() + t0 * H * width, x.begin() + t1 * H * width);
    };
    GlaShape first = whole.shape, second = whole.shape;
    first.T = split;
    second.T = T - split;
    const auto& in = whole.in;
    const DecodedInputs a{part(in.q, 0, split, K), part(in.k, 0, split, K), part(in.v, 0, split, V),
                          part(in.g, 0, split, K), in.h0};
    const auto out_a = run(impl, first, a.spans());
    const DecodedInputs b{part(in.q, split, T, K), part(in.k, split, T, K), part(in.v, split, T, V),
                          part(in.g, split, T, K),
                          std::vector<float>(out_a.hT.begin(), out_a.hT.end())};
    const auto out_b = run(impl, second, b.spans());
    std::vector<double> o = out_a.o;
    o.insert(o.end(), out_b.o.begin(), out_b.o.end());
    // The state crosses the split as fp32 (h0 is fp32 by definition), which costs the float64
    // oracle its extra digits: fp32 rounding of the state, not 1e-12, bounds its error here.
    const double bound = impl == Impl::Oracle ? 1e-7 : tolerance(impl);
    EXPECT_LE(rel_error(o, full.o), bound);
    EXPECT_LE(rel_error(out_b.hT, full.hT), bound);
  }
}

// h0 = 0 given as a tensor equals no h0; a nonzero h0 changes o.
TEST_P(GlaSemantics, MissingInitialStateIsZero) {
  const auto [impl, distribution] = GetParam();
  const Problem p(parse_shape("B=2,T=70,H=1,K=64,V=100"), 13, distribution);
  GlaShape without = p.shape;
  without.has_h0 = false;
  DecodedInputs zero_h0 = p.in;
  std::fill(zero_h0.h0.begin(), zero_h0.h0.end(), 0.0f);
  DecodedInputs no_h0 = p.in;
  no_h0.h0.clear();
  const auto with_zero = run(impl, p.shape, zero_h0.spans());
  const auto with_none = run(impl, without, no_h0.spans());
  const auto with_h0 = run(impl, p.shape, p.in.spans());
  EXPECT_LE(rel_error(with_none.o, with_zero.o), tolerance(impl));
  EXPECT_LE(rel_error(with_none.hT, with_zero.hT), tolerance(impl));
  // Under strong gates h0 has decayed by e^{-7 T} before T steps: its effect is real only here.
  if (std::string(distribution) == "default") {
    EXPECT_GT(rel_error(with_h0.hT, with_zero.hT), 1e-4);
  }
}

INSTANTIATE_TEST_SUITE_P(Impls, GlaSemantics,
                         ::testing::Combine(::testing::Values(Impl::Oracle, Impl::Chunked),
                                            ::testing::Values("default", "strong_gates", "mixed_gates")),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param) == Impl::Oracle ? "oracle" : "chunked") +
                                  "_" + std::get<1>(info.param);
                         });

}  // namespace
}  // namespace overlap::gla::testing
