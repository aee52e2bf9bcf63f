// What the definition promises beyond agreement between the two implementations: a worked
// example, the state carried across a split sequence, h0=0 meaning a zero state, and inputs
// that are deterministic and drawn as their distribution says. Every test runs against both
// the oracle and the chunked reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "linrnn_test_support.hpp"

namespace overlap::linrnn::testing {
namespace {

struct Implementation {
  const char* name;
  TensorMap (*run)(const LinrnnShape&, const TensorMap&);
  double tolerance;  // against exact values worked by hand or by float64
};

const Implementation kImplementations[] = {
    {"oracle", [](const LinrnnShape& s, const TensorMap& in) { return oracle(s, in); }, 1e-12},
    // chunk 16: the splits below cross chunk boundaries mid-chunk.
    {"chunked", [](const LinrnnShape& s, const TensorMap& in) { return chunked_reference(s, in, 16); },
     1e-6},
};

class LinrnnSemantics : public ::testing::TestWithParam<Implementation> {};

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

// B=1, T=2, d=1, dv=1, W = [w_u, w_a, w_z] = [2, 0, 1] so a = sigmoid(0) = 1/2 at every step;
// x = [1, −2], h0 = 1/2:
//   t=0: u=2,  z=1:  h = ½·½ + ½·2      =  1.25,  y = 1.25·silu(1)  = 1.25·σ(1)
//   t=1: u=−4, z=−2: h = ½·1.25 + ½·(−4) = −1.375, y = −1.375·silu(−2) = 2.75·σ(−2)
TEST_P(LinrnnSemantics, MatchesHandWorkedSteps) {
  const LinrnnShape shape = parse_shape("B=1,T=2,d=1,dv=1,h0=1,hT=1");
  TensorMap in;
  in.emplace("x", Tensor::from_f64(std::vector<double>{1, -2}, DType::BF16, shape.x_shape()));
  in.emplace("W", Tensor::from_f64(std::vector<double>{2, 0, 1}, DType::BF16, shape.w_shape()));
  in.emplace("h0", Tensor::from_f64(std::vector<double>{0.5}, DType::F32, shape.state_shape()));
  const TensorMap out = GetParam().run(shape, in);
  const std::vector<double> y = out.at("y").to_f64(), hT = out.at("hT").to_f64();
  const double tol = GetParam().tolerance;
  EXPECT_NEAR(y[0], 1.25 * sigmoid(1), tol);
  EXPECT_NEAR(y[1], 2.75 * sigmoid(-2), tol);
  EXPECT_NEAR(hT[0], -1.375, tol);
}

// Copies timesteps [begin, end) of a [B,T,d] tensor.
Tensor slice_time(const Tensor& x, std::int64_t begin, std::int64_t end) {
  const std::int64_t B = x.shape()[0], T = x.shape()[1], d = x.shape()[2];
  Tensor out(x.dtype(), {B, end - begin, d});
  const std::size_t esize = dtype_size(x.dtype());
  for (std::int64_t b = 0; b < B; ++b)
    std::memcpy(out.bytes().data() + b * (end - begin) * d * esize,
                x.bytes().data() + (b * T + begin) * d * esize, (end - begin) * d * esize);
  return out;
}

// Running T steps at once equals running T1 steps, then the rest from the first part's hT:
// h0 and hT are the same state, which is what lets kernels split sequences.
TEST_P(LinrnnSemantics, StateCarriesAcrossASplit) {
  const LinrnnShape full = parse_shape("B=2,T=50,d=16,dv=8,h0=1,hT=1");
  const std::int64_t split = 23;
  const TensorMap in = make_inputs(full, 7, "long_memory");
  const TensorMap whole = GetParam().run(full, in);

  LinrnnShape first = full, second = full;
  first.T = split;
  second.T = full.T - split;
  const TensorMap out1 =
      GetParam().run(first, {{"x", slice_time(in.at("x"), 0, split)}, {"W", in.at("W")}, {"h0", in.at("h0")}});
  const Tensor carried = Tensor::from_f64(out1.at("hT").to_f64(), DType::F32, full.state_shape());
  const TensorMap out2 =
      GetParam().run(second, {{"x", slice_time(in.at("x"), split, full.T)}, {"W", in.at("W")}, {"h0", carried}});

  const Tensor y_whole = Tensor::from_f64(whole.at("y").to_f64(), DType::F64, full.y_shape());
  EXPECT_LE(relative_error(slice_time(y_whole, 0, split), out1.at("y")), 1e-6);
  EXPECT_LE(relative_error(slice_time(y_whole, split, full.T), out2.at("y")), 1e-6);
  EXPECT_LE(relative_error(whole.at("hT"), out2.at("hT")), 1e-6);
}

// h0=0 means the state starts at zero: the same as passing an all-zero h0.
TEST_P(LinrnnSemantics, AbsentInitialStateIsZero) {
  const LinrnnShape with_h0 = parse_shape("B=3,T=40,d=24,dv=12,h0=1,hT=1");
  LinrnnShape without_h0 = with_h0;
  without_h0.has_h0 = false;
  const TensorMap in = make_inputs(without_h0, 3, "default");
  TensorMap zero_h0 = in;
  zero_h0.emplace("h0", Tensor(DType::F32, with_h0.state_shape()));

  const TensorMap a = GetParam().run(without_h0, in), b = GetParam().run(with_h0, zero_h0);
  EXPECT_EQ(relative_error(a.at("y"), b.at("y")), 0.0);
  EXPECT_EQ(relative_error(a.at("hT"), b.at("hT")), 0.0);
}

INSTANTIATE_TEST_SUITE_P(Implementations, LinrnnSemantics, ::testing::ValuesIn(kImplementations),
                         [](const auto& info) { return std::string(info.param.name); });

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.bytes().data(), b.bytes().data(), a.nbytes()) == 0;
}

TEST(LinrnnInputs, AreDeterministicPerSeed) {
  const LinrnnShape shape = parse_shape("B=2,T=9,d=12,dv=5");
  for (const char* dist : {"default", "long_memory"}) {
    const TensorMap a = make_inputs(shape, 5, dist), b = make_inputs(shape, 5, dist),
                    c = make_inputs(shape, 6, dist);
    for (const char* name : {"x", "W", "h0"}) {
      EXPECT_TRUE(same_bytes(a.at(name), b.at(name))) << dist << " " << name;
      EXPECT_FALSE(same_bytes(a.at(name), c.at(name))) << dist << " " << name;
    }
  }
}

// long_memory must really give a ≈ 0.99 (state living ~100 steps), else its tests test nothing.
TEST(LinrnnInputs, LongMemoryGatesAreNearOne) {
  const LinrnnShape shape = parse_shape("B=2,T=64,d=128,dv=16");
  const TensorMap in = make_inputs(shape, 9, "long_memory");
  const std::vector<double> x = in.at("x").to_f64(), w = in.at("W").to_f64();
  double sum = 0, lo = 1;
  for (std::int64_t row = 0; row < shape.B * shape.T; ++row)
    for (std::int64_t c = 0; c < shape.dv; ++c) {
      double a_pre = 0;
      for (std::int64_t k = 0; k < shape.d; ++k) a_pre += x[row * shape.d + k] * w[k * 3 * shape.dv + shape.dv + c];
      sum += sigmoid(a_pre);
      lo = std::min(lo, sigmoid(a_pre));
    }
  EXPECT_NEAR(sum / (shape.B * shape.T * shape.dv), 0.99, 0.002);
  EXPECT_GT(lo, 0.97);
}

}  // namespace
}  // namespace overlap::linrnn::testing
