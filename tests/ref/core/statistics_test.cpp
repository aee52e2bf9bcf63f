#include "core/statistics.hpp"

#include <gtest/gtest.h>

namespace overlap {
namespace {

TEST(Statistics, MedianOfOddEvenAndEmpty) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({}), 0);
}

TEST(Statistics, RanksShareTies) {
  const std::vector<double> r = ranks({10, 30, 20, 30});
  EXPECT_DOUBLE_EQ(r[0], 1);
  EXPECT_DOUBLE_EQ(r[2], 2);
  EXPECT_DOUBLE_EQ(r[1], 3.5);
  EXPECT_DOUBLE_EQ(r[3], 3.5);
}

TEST(Statistics, SpearmanOfMonotoneReversedAndKnownCase) {
  EXPECT_NEAR(spearman({1, 2, 3, 4}, {10, 20, 25, 1000}), 1.0, 1e-12);   // any increasing map
  EXPECT_NEAR(spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0, 1e-12);
  // Without ties: 1 - 6 sum d^2 / (n (n^2 - 1)); ranks (1,2,3,4,5) vs (2,1,4,3,5): sum d^2 = 4.
  EXPECT_NEAR(spearman({1, 2, 3, 4, 5}, {2, 1, 4, 3, 5}), 1.0 - 6.0 * 4 / (5 * 24), 1e-12);
  EXPECT_DOUBLE_EQ(spearman({1, 1, 1}, {1, 2, 3}), 0);  // a constant series has no ranking
  EXPECT_DOUBLE_EQ(spearman({1}, {1}), 0);
}

}  // namespace
}  // namespace overlap
