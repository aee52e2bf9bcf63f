#pragma once
// The 128x4 blocked ("swizzled") layout of block scale factors that cuBLAS ("1D Block Scaling
// Factors Layout") and CUTLASS (Sm1xxBlockScaledConfig, SfKMajorAtom) expect for NVFP4/MX
// GEMMs on sm_100. A scale matrix of `rows` x `k_blocks` (one scale per 16 K-elements for
// NVFP4) is cut into tiles of 128 rows x 4 k-blocks = 512 bytes; tiles are stored with the
// k-tile index fastest, then the row tile. Inside a tile, row r = r0 + 32 r1 (r0 < 32, r1 < 4)
// and k-block c (< 4) sit at r0 * 16 + r1 * 4 + c: each 16-byte line holds the 4 scales of 4
// rows spaced 32 apart, so one 32-bit word holds the 4 consecutive k-block scales of one row
// (the tensor-memory word the MMA reads). Rows and k-blocks are padded up to whole tiles.
// It is the permutation PyTorch's `to_blocked` helper (torchao, torch._scaled_mm tests) applies
// to a rows x k_blocks scale matrix (same formula; not yet checked against torch itself).
#include <cstdint>

namespace overlap::formats {

struct BlockedScaleLayout {
  static constexpr std::int64_t kRowsPerTile = 128;
  static constexpr std::int64_t kBlocksPerTile = 4;
  static constexpr std::int64_t kTileBytes = kRowsPerTile * kBlocksPerTile;  // 512

  std::int64_t rows = 0;      // logical rows (M of A, N of B)
  std::int64_t k_blocks = 0;  // logical scales per row (K / 16 for NVFP4)

  std::int64_t row_tiles() const { return (rows + kRowsPerTile - 1) / kRowsPerTile; }
  std::int64_t k_tiles() const { return (k_blocks + kBlocksPerTile - 1) / kBlocksPerTile; }
  std::int64_t padded_rows() const { return row_tiles() * kRowsPerTile; }
  std::int64_t padded_k_blocks() const { return k_tiles() * kBlocksPerTile; }
  std::int64_t size() const { return row_tiles() * k_tiles() * kTileBytes; }  // bytes
};

// Byte offset of the scale of (row, k_block) for a `rows` x `k_blocks` scale matrix. Valid for
// every coordinate of the padded grid (padded_rows x padded_k_blocks); throws overlap::Error
// outside it.
std::int64_t scale_offset(std::int64_t row, std::int64_t k_block, std::int64_t rows,
                          std::int64_t k_blocks);

// The same without the bounds check, for inner loops whose bounds are already checked.
inline std::int64_t scale_offset_unchecked(std::int64_t row, std::int64_t k_block,
                                           std::int64_t k_tiles) {
  const std::int64_t tile = (row / 128) * k_tiles + k_block / 4;
  const std::int64_t inner = (row % 32) * 16 + ((row % 128) / 32) * 4 + k_block % 4;
  return tile * 512 + inner;
}

}  // namespace overlap::formats
