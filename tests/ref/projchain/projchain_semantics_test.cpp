// What the definition promises beyond agreement between the two implementations: a worked
// example, unit-norm key heads, zero key heads staying zero (the eps of l2normalize), and
// deterministic inputs. Every test runs against both the oracle and the wide-GEMM reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "projchain_test_support.hpp"

namespace overlap::projchain::testing {
namespace {

struct Implementation {
  const char* name;
  TensorMap (*run)(const ProjchainShape&, const TensorMap&);
  double tolerance;  // against exact values worked by hand
};

const Implementation kImplementations[] = {
    {"oracle", [](const ProjchainShape& s, const TensorMap& in) { return oracle(s, in); }, 1e-12},
    // tile 3: several tiles and a ragged last one.
    {"wide_gemm", [](const ProjchainShape& s, const TensorMap& in) { return wide_gemm_reference(s, in, 3); },
     1e-6},
};

class ProjchainSemantics : public ::testing::TestWithParam<Implementation> {};

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

// One token x = [1, 2], d=2, one head of dk=2:
//   q = x·I                   = [1, 2]
//   k = x·diag(3, 2) = [3, 4] → [0.6, 0.8]
//   v = x·[[1, 1], [1, −1]]   = [3, −1]
//   g = silu(x·[[0, 1], [0, 0]]) = [silu(0), silu(1)] = [0, σ(1)]
//   α = σ(x·[1, −1]ᵀ)         = σ(−1)
TEST_P(ProjchainSemantics, MatchesHandWorkedExample) {
  const ProjchainShape shape = parse_shape("B=1,T=1,d=2,H=1,dk=2");
  TensorMap in;
  const auto put = [&](const char* name, std::vector<double> values, const Shape& dims) {
    in.emplace(name, Tensor::from_f64(values, DType::BF16, dims));
  };
  put("x", {1, 2}, shape.x_shape());
  put("W_q", {1, 0, 0, 1}, shape.head_weight_shape());
  put("W_k", {3, 0, 0, 2}, shape.head_weight_shape());
  put("W_v", {1, 1, 1, -1}, shape.head_weight_shape());
  put("W_g", {0, 1, 0, 0}, shape.head_weight_shape());
  put("W_alpha", {1, -1}, shape.alpha_weight_shape());
  const TensorMap out = GetParam().run(shape, in);

  const auto expect = [&](const char* name, std::vector<double> want) {
    const std::vector<double> got = out.at(name).to_f64();
    ASSERT_EQ(got.size(), want.size()) << name;
    for (std::size_t i = 0; i < want.size(); ++i)
      EXPECT_NEAR(got[i], want[i], GetParam().tolerance) << name << "[" << i << "]";
  };
  expect("q", {1, 2});
  expect("k", {0.6, 0.8});
  expect("v", {3, -1});
  expect("g", {0, sigmoid(1)});
  expect("alpha", {sigmoid(-1)});
}

// Norm of key head h of token n.
double head_norm(const std::vector<double>& k, const ProjchainShape& s, std::int64_t n, std::int64_t h) {
  double sum = 0;
  for (std::int64_t i = 0; i < s.dk; ++i) sum += std::pow(k[n * s.heads_width() + h * s.dk + i], 2);
  return std::sqrt(sum);
}

TEST_P(ProjchainSemantics, KeyHeadsHaveUnitNorm) {
  const ProjchainShape shape = parse_shape("B=2,T=5,d=48,H=3,dk=24");
  const std::vector<double> k = GetParam().run(shape, make_inputs(shape, 8, "default")).at("k").to_f64();
  for (std::int64_t n = 0; n < shape.N(); ++n)
    for (std::int64_t h = 0; h < shape.H; ++h) EXPECT_NEAR(head_norm(k, shape, n, h), 1.0, 1e-6);
}

// A key head whose projection is all zeros is divided by eps, not by its zero norm: zeros out.
TEST_P(ProjchainSemantics, ZeroKeyHeadStaysZero) {
  const ProjchainShape shape = parse_shape("B=2,T=5,d=48,H=3,dk=24");
  const std::vector<double> k =
      GetParam().run(shape, make_inputs(shape, 8, "zero_key_head")).at("k").to_f64();
  for (std::int64_t n = 0; n < shape.N(); ++n) {
    for (std::int64_t i = 0; i < shape.dk; ++i) EXPECT_EQ(k[n * shape.heads_width() + i], 0.0);
    for (std::int64_t h = 1; h < shape.H; ++h) EXPECT_NEAR(head_norm(k, shape, n, h), 1.0, 1e-6);
  }
}

INSTANTIATE_TEST_SUITE_P(Implementations, ProjchainSemantics, ::testing::ValuesIn(kImplementations),
                         [](const auto& info) { return std::string(info.param.name); });

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.bytes().data(), b.bytes().data(), a.nbytes()) == 0;
}

TEST(ProjchainInputs, AreDeterministicPerSeed) {
  const ProjchainShape shape = parse_shape("B=2,T=3,d=16,H=2,dk=4");
  for (const char* dist : {"default", "zero_key_head"}) {
    const TensorMap a = make_inputs(shape, 5, dist), b = make_inputs(shape, 5, dist),
                    c = make_inputs(shape, 6, dist);
    ASSERT_EQ(a.size(), 6u);
    for (const auto& [name, t] : a) {
      EXPECT_TRUE(same_bytes(t, b.at(name))) << dist << " " << name;
      EXPECT_FALSE(same_bytes(t, c.at(name))) << dist << " " << name;
    }
  }
}

}  // namespace
}  // namespace overlap::projchain::testing
