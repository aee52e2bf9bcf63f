#include "core/random.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace overlap {
namespace {

TEST(CounterRng, SameSeedAndNameGiveTheSameNumbers) {
  std::vector<double> a(1000), b(1000);
  fill_normal<double>(a, 42, "q");
  fill_normal<double>(b, 42, "q");
  EXPECT_EQ(a, b);
}

TEST(CounterRng, SeedsAndNamesGiveIndependentStreams) {
  std::vector<double> a(1000), b(1000), c(1000);
  fill_normal<double>(a, 42, "q");
  fill_normal<double>(b, 43, "q");
  fill_normal<double>(c, 42, "k");
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
}

TEST(CounterRng, NormalHasUnitMomentsAndUniformStaysInsideTheInterval) {
  constexpr int n = 200000;
  std::vector<double> x(n);
  fill_normal<double>(x, 7, "x");
  double mean = 0, var = 0;
  for (double v : x) mean += v;
  mean /= n;
  for (double v : x) var += (v - mean) * (v - mean);
  var /= n;
  EXPECT_NEAR(mean, 0.0, 0.01);
  EXPECT_NEAR(var, 1.0, 0.02);
  std::vector<float> u(n);
  fill_uniform<float>(u, 7, "u", -2.0, 3.0);
  for (float v : u) {
    ASSERT_GE(v, -2.0f);
    ASSERT_LE(v, 3.0f);
  }
}

}  // namespace
}  // namespace overlap
