#include "formats/blocked_scale_layout.hpp"

#include "core/error.hpp"

namespace overlap::formats {

std::int64_t scale_offset(std::int64_t row, std::int64_t k_block, std::int64_t rows,
                          std::int64_t k_blocks) {
  const BlockedScaleLayout layout{rows, k_blocks};
  OVERLAP_REQUIRE(rows > 0 && k_blocks > 0, "scale layout: {} rows x {} k-blocks is empty", rows,
                  k_blocks);
  OVERLAP_REQUIRE(row >= 0 && row < layout.padded_rows(),
                  "scale layout: row {} is outside the padded {} rows", row, layout.padded_rows());
  OVERLAP_REQUIRE(k_block >= 0 && k_block < layout.padded_k_blocks(),
                  "scale layout: k-block {} is outside the padded {} k-blocks", k_block,
                  layout.padded_k_blocks());
  return scale_offset_unchecked(row, k_block, layout.k_tiles());
}

}  // namespace overlap::formats
