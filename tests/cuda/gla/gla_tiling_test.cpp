// The launch rules of gla_tiling.hpp that the kernels and the model share (host-only, no GPU):
// how the pingpong fused carry splits a walk along T.
#include <gtest/gtest.h>

#include <algorithm>

#include "gla/gla_tiling.hpp"

namespace overlap::gla {
namespace {

using Segments = PingpongFusedSegments;

// Every segment owns at least one chunk, in order, and together they cover the sequence.
TEST(PingpongFusedSegments, SplitCoversTheChunksInOrder) {
  for (int chunks = 1; chunks <= 300; ++chunks)
    for (int count = 1; count <= std::min(chunks, Segments::kMax); ++count) {
      const Segments s = Segments::split(chunks, count);
      ASSERT_EQ(s.count, count);
      EXPECT_EQ(s.bounds[0], 0);
      EXPECT_EQ(s.bounds[count], chunks);
      for (int i = 0; i < count; ++i) EXPECT_LT(s.bounds[i], s.bounds[i + 1]) << chunks << " chunks, segment " << i;
    }
}

// Segment i walks bounds[i] chunks state-only (cost r each) and owns the rest of its span: the
// split gives every CTA the same cost, up to rounding to whole chunks (each bound off by at
// most half a chunk: a cost by at most 0.5 + 0.5 (1 - r), two costs apart by at most 1.42),
// and a chunk more where the last segments are so short that each must keep one.
TEST(PingpongFusedSegments, SplitBalancesTheWalks) {
  const double r = Segments::kStateOnlyCost;
  for (int chunks : {16, 64, 100, 256, 1000})
    for (int count = 2; count <= Segments::kMax && count * Segments::kMinChunks <= chunks; ++count) {
      const Segments s = Segments::split(chunks, count);
      double lo = 1e300, hi = 0;
      for (int i = 0; i < count; ++i) {
        const double cost = r * s.bounds[i] + (s.bounds[i + 1] - s.bounds[i]);
        lo = std::min(lo, cost), hi = std::max(hi, cost);
      }
      EXPECT_LE(hi - lo, 1.0 + (1.0 - r) + (chunks < 16 * count ? 1.0 : 0.0)) << chunks << " chunks in " << count;
      EXPECT_LT(hi, chunks) << "splitting must shorten the longest walk";
    }
}

// As many segments as fit beside the other CTAs in one wave, none shorter than kMinChunks on
// average, at most kMax.
TEST(PingpongFusedSegments, CountFillsTheSmsInOneWave) {
  EXPECT_EQ(Segments::count_for(64, 132, 256), 2);   // B=2, H=16, two v-blocks, T=16384
  EXPECT_EQ(Segments::count_for(128, 132, 64), 1);   // B=4, H=32, T=4096: the SMs are full
  EXPECT_EQ(Segments::count_for(16, 132, 64), Segments::kMax);
  EXPECT_EQ(Segments::count_for(4, 132, 7), 1);      // too few chunks to split
  EXPECT_EQ(Segments::count_for(4, 132, 8), 2);
  EXPECT_EQ(Segments::count_for(0, 132, 64), 1);
  for (long long walks = 1; walks <= 300; ++walks)
    EXPECT_LE(walks * Segments::count_for(walks, 132, 1 << 20), std::max(walks, 132LL));
}

}  // namespace
}  // namespace overlap::gla
