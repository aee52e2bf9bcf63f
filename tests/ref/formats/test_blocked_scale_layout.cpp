// The 128x4 blocked scale layout (ref/formats/blocked_scale_layout.hpp). Hand-worked cases
// come straight from the layout's definition (cuBLAS "1D Block Scaling Factors Layout",
// CUTLASS SfKMajorAtom = ((32,4),(16,4)) : ((16,4),(0,1)) tiled k-first):
//   tile   = (row / 128) * k_tiles + k_block / 4,   k_tiles = ceil(k_blocks / 4)
//   inner  = (row % 32) * 16 + ((row % 128) / 32) * 4 + k_block % 4
//   offset = tile * 512 + inner
#include <gtest/gtest.h>

#include <cstdint>
#include <tuple>
#include <vector>

#include "core/error.hpp"
#include "formats/blocked_scale_layout.hpp"

namespace overlap::formats {
namespace {

struct Case {
  std::int64_t row, k_block, rows, k_blocks, offset;
};

TEST(BlockedScaleLayout, HandWorkedOffsets) {
  const Case cases[] = {
      // One tile (rows <= 128, k_blocks <= 4): offset = inner.
      {0, 0, 128, 4, 0},
      {0, 1, 128, 4, 1},  // k-blocks of one row are adjacent bytes (one 32-bit word)
      {0, 3, 128, 4, 3},
      {1, 0, 128, 4, 16},     // next row: next 16-byte line
      {31, 0, 128, 4, 496},   // 31 * 16
      {32, 0, 128, 4, 4},     // row 32 shares line 0 with row 0, second word: (32/32) * 4
      {64, 0, 128, 4, 8},     // third word
      {96, 0, 128, 4, 12},    // fourth word
      {33, 2, 128, 4, 22},    // 1 * 16 + 1 * 4 + 2
      {127, 3, 128, 4, 511},  // 31 * 16 + 3 * 4 + 3: last byte of the tile
      // Two k-tiles (k_blocks = 8): the k-tile index runs fastest.
      {0, 4, 128, 8, 512},     // tile (0, 1)
      {5, 6, 128, 8, 594},     // 512 + 5 * 16 + 0 * 4 + 2
      {128, 0, 256, 8, 1024},  // tile (1, 0) = 1 * 2 + 0 -> 2 * 512
      {130, 5, 256, 8, 1569},  // tile (1, 1) = 3 -> 1536; inner 2 * 16 + 0 + 1 = 33
      // Padding: k_blocks = 6 pads to 8 (k_tiles 2), rows = 200 pads to 256.
      {128, 5, 200, 6, 1537},  // tile 3 -> 1536; inner 0 + 0 + 1
      {199, 4, 200, 6, 1656},  // row 199 -> r = 71: 7 * 16 + 2 * 4 + 0 = 120; tile 3 -> 1536 + 120
      {255, 7, 200, 6, 2047},  // last padded byte: tile 3, inner 511
      {3, 2, 1, 1, 50},        // 1 x 1 scale matrix still takes one whole tile: 3 * 16 + 2
  };
  for (const Case& c : cases)
    EXPECT_EQ(scale_offset(c.row, c.k_block, c.rows, c.k_blocks), c.offset)
        << "row " << c.row << ", k-block " << c.k_block << " of " << c.rows << " x " << c.k_blocks;
}

TEST(BlockedScaleLayout, PaddedSizes) {
  const struct {
    std::int64_t rows, k_blocks, padded_rows, padded_k_blocks, bytes;
  } cases[] = {
      {128, 4, 128, 4, 512},
      {1, 1, 128, 4, 512},
      {129, 4, 256, 4, 1024},
      {200, 6, 256, 8, 2048},
      {256, 448, 256, 448, 2 * 112 * 512},
      {384, 16, 384, 16, 3 * 4 * 512},
  };
  for (const auto& c : cases) {
    const BlockedScaleLayout layout{c.rows, c.k_blocks};
    EXPECT_EQ(layout.padded_rows(), c.padded_rows);
    EXPECT_EQ(layout.padded_k_blocks(), c.padded_k_blocks);
    EXPECT_EQ(layout.size(), c.bytes);
  }
}

// Every coordinate of the padded grid lands on a distinct byte in [0, size): the layout is a
// permutation, so no two scales overwrite each other and no byte is left unaddressed.
class BlockedScaleLayoutGrid
    : public ::testing::TestWithParam<std::tuple<std::int64_t, std::int64_t>> {};

TEST_P(BlockedScaleLayoutGrid, IsAPermutationOfThePaddedGrid) {
  const auto [rows, k_blocks] = GetParam();
  const BlockedScaleLayout layout{rows, k_blocks};
  std::vector<int> hits(static_cast<std::size_t>(layout.size()), 0);
  for (std::int64_t r = 0; r < layout.padded_rows(); ++r)
    for (std::int64_t b = 0; b < layout.padded_k_blocks(); ++b) {
      const std::int64_t off = scale_offset(r, b, rows, k_blocks);
      ASSERT_GE(off, 0);
      ASSERT_LT(off, layout.size());
      ++hits[static_cast<std::size_t>(off)];
      EXPECT_EQ(off, scale_offset_unchecked(r, b, layout.k_tiles()));
    }
  for (int h : hits) ASSERT_EQ(h, 1);
}

INSTANTIATE_TEST_SUITE_P(Sizes, BlockedScaleLayoutGrid,
                         ::testing::Combine(::testing::Values(1, 100, 128, 200, 384),
                                            ::testing::Values(1, 3, 4, 6, 16)));

TEST(BlockedScaleLayout, OutOfRangeCoordinatesAreErrors) {
  EXPECT_THROW(scale_offset(256, 0, 200, 6), Error);  // past the padded rows
  EXPECT_THROW(scale_offset(0, 8, 200, 6), Error);    // past the padded k-blocks
  EXPECT_THROW(scale_offset(-1, 0, 200, 6), Error);
  EXPECT_THROW(scale_offset(0, 0, 0, 6), Error);
  EXPECT_NO_THROW(scale_offset(255, 7, 200, 6));  // padding is addressable
}

}  // namespace
}  // namespace overlap::formats
