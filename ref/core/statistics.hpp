#pragma once
// Small order statistics shared by timing (medians of event times) and reports (median error,
// rank agreement of predicted and measured times).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace overlap {

// The median of `values` (the mean of the middle two for an even count); 0 when empty.
inline double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// Ranks 1..n of `values`, ties sharing the mean of the ranks they span.
inline std::vector<double> ranks(const std::vector<double>& values) {
  std::vector<std::size_t> order(values.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
  std::vector<double> r(values.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]]) ++j;
    for (std::size_t k = i; k <= j; ++k) r[order[k]] = 0.5 * double(i + j) + 1.0;
    i = j + 1;
  }
  return r;
}

// Spearman's rank correlation of two equally long series (the Pearson correlation of their
// ranks, so ties are handled); 0 when fewer than two values or either series is constant.
inline double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 2) return 0;
  const std::vector<double> rx = ranks(x), ry = ranks(y);
  const double mean = 0.5 * double(x.size() + 1);
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (rx[i] - mean) * (ry[i] - mean);
    sxx += (rx[i] - mean) * (rx[i] - mean);
    syy += (ry[i] - mean) * (ry[i] - mean);
  }
  return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : 0;
}

}  // namespace overlap
