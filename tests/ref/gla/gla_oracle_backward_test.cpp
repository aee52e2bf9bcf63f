// The float64 gradients of the gla forward against central finite differences of the forward
// oracle, element by element, on small shapes: T = 1, odd lengths, a length crossing the
// backward's checkpoint, with and without h0 / hT, default and strong gates. Inputs are
// multiples of 2^-8 and the step is 2^-10, so x +- step is exact in the float inputs and the
// difference quotient is computed on exactly the perturbed problem.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "core/random.hpp"
#include "gla_test_support.hpp"

namespace overlap::gla::testing {
namespace {

constexpr double kStep = 1.0 / 1024;

void quantize(std::vector<float>& x) {
  for (float& v : x) v = static_cast<float>(std::round(double{v} * 256) / 256);
}

// The loss whose gradient the backward computes: sum(do * o) + sum(dhT * hT).
double loss(const GlaShape& s, const DecodedInputs& in, const std::vector<float>& d_o, const std::vector<float>& dhT) {
  const auto r = run_oracle(s, in.spans());
  double l = 0;
  for (std::size_t i = 0; i < r.o.size(); ++i) l += double{d_o[i]} * r.o[i];
  for (std::size_t i = 0; i < r.hT.size(); ++i) l += double{dhT[i]} * r.hT[i];
  return l;
}

std::vector<float> random_floats(std::size_t n, std::uint64_t seed) {
  std::vector<float> x(n);
  fill_normal(std::span<float>(x), seed, "grad");
  quantize(x);
  return x;
}

// "B=1,T=9" -> "B_1_T_9": a gtest name.
std::string identifier(std::string text) {
  for (char& c : text)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return text;
}

class GlaOracleBackward : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {};

TEST_P(GlaOracleBackward, MatchesCentralDifferencesOfTheForward) {
  const auto& [shape_text, distribution] = GetParam();
  Problem p(parse_shape(shape_text), 11, distribution);
  const GlaShape& s = p.shape;
  DecodedInputs& in = p.in;
  for (auto* x : {&in.q, &in.k, &in.v, &in.g, &in.h0}) quantize(*x);
  const std::vector<float> d_o = random_floats(std::size_t(s.v_numel()), 101);
  const std::vector<float> dhT = s.want_hT ? random_floats(std::size_t(s.state_numel()), 102) : std::vector<float>{};

  Gradients<double> g(s);
  oracle_backward(s, in.spans(), {d_o, dhT}, g.spans());
  const std::vector<std::tuple<const char*, std::vector<float>*, const std::vector<double>*>> tensors = {
      {"dq", &in.q, &g.dq}, {"dk", &in.k, &g.dk}, {"dv", &in.v, &g.dv}, {"dg", &in.g, &g.dg}, {"dh0", &in.h0, &g.dh0}};
  for (const auto& [name, x, grad] : tensors) {
    std::vector<double> fd(x->size());
    for (std::size_t i = 0; i < x->size(); ++i) {
      const float keep = (*x)[i];
      (*x)[i] = static_cast<float>(keep + kStep);
      const double up = loss(s, in, d_o, dhT);
      (*x)[i] = static_cast<float>(keep - kStep);
      const double down = loss(s, in, d_o, dhT);
      (*x)[i] = keep;
      fd[i] = (up - down) / (2 * kStep);
    }
    // q, k, v, h0 enter the loss linearly (the difference is exact up to rounding); g through
    // exp, where the step leaves an O(step^2) truncation.
    EXPECT_LE(rel_error(*grad, fd), 1e-6) << name << " at " << shape_text << " " << distribution;
    EXPECT_TRUE(all_finite(*grad)) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(
    SmallShapes, GlaOracleBackward,
    ::testing::Combine(::testing::Values("B=1,T=1,H=1,K=3,V=2", "B=2,T=5,H=2,K=4,V=3,h0=0",
                                         "B=1,T=9,H=1,K=3,V=2,hT=0", "B=1,T=70,H=2,K=4,V=3",
                                         "B=1,T=13,H=1,K=2,V=5,h0=0,hT=0"),
                       ::testing::Values("default", "strong_gates")),
    [](const auto& info) {
      return identifier(std::string(std::get<0>(info.param)) + "_" + std::get<1>(info.param));
    });

// The checkpoint interval only decides what is recomputed: the same float64 operations in the
// same order, so the gradients are identical, not just close.
TEST(GlaOracleBackwardCheckpoints, EveryIntervalGivesIdenticalGradients) {
  const Problem p(parse_shape("B=2,T=37,H=2,K=5,V=4"), 5, "strong_gates");
  const std::vector<float> d_o = random_floats(std::size_t(p.shape.v_numel()), 7);
  const std::vector<float> dhT = random_floats(std::size_t(p.shape.state_numel()), 8);
  Gradients<double> base(p.shape);
  oracle_backward(p.shape, p.in.spans(), {d_o, dhT}, base.spans(), 64);
  for (int interval : {1, 4, 36, 37}) {
    Gradients<double> g(p.shape);
    oracle_backward(p.shape, p.in.spans(), {d_o, dhT}, g.spans(), interval);
    EXPECT_EQ(g.dq, base.dq) << interval;
    EXPECT_EQ(g.dk, base.dk) << interval;
    EXPECT_EQ(g.dv, base.dv) << interval;
    EXPECT_EQ(g.dg, base.dg) << interval;
    EXPECT_EQ(g.dh0, base.dh0) << interval;
  }
}

TEST(GlaOracleBackwardBadInput, NamesTheArrayOfTheWrongSize) {
  const Problem p(parse_shape("B=1,T=4,H=1,K=2,V=2"), 1, "default");
  const std::vector<float> d_o(7), dhT(4);  // o has 8 elements
  Gradients<double> g(p.shape);
  try {
    oracle_backward(p.shape, p.in.spans(), {d_o, dhT}, g.spans());
    FAIL() << "accepted a 7-element do";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'do' has 7 elements"), std::string::npos) << e.what();
  }
  const std::vector<float> ok(8);
  EXPECT_THROW(oracle_backward(p.shape, p.in.spans(), {ok, dhT}, g.spans(), 0), Error);
}

}  // namespace
}  // namespace overlap::gla::testing
