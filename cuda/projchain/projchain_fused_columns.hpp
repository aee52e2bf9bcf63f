#pragma once
// epilogue_fused's column order inside its packed weight. Plain C++17: the packing kernel
// (projchain_pack.cu) and the epilogue (projchain_fused_epilogue.cuh) both read it (device code
// calls the constexpr functions through --expt-relaxed-constexpr).
//
// In the wgmma accumulator layout, lane t of a quad holds columns 2t, 2t+1 and 2t+8, 2t+9 of
// every 16-column block. Storing those as two 4-byte words half-fills each 32-byte sector per
// warp instruction; swapping words between neighbour lanes (a shuffle and three selects per
// four values) to store 8 bytes took 128 of the 232 instructions per warp of a q or v tile
// (Nsight Compute, docs/results/projchain_h100.md). Instead,
// the packed weight's columns are permuted inside each 16-column block so that the four values
// lane t holds ARE output columns 4t .. 4t+3: each lane stores them as one 8-byte word, and a
// warp's store fills whole sectors with no data exchange.
// Only the q|k|v|g columns (4·H·dk, a multiple of 64) are permuted: a 16-column block never
// straddles a segment or a head, so the per-head L2 norm sees the same columns. The alpha
// columns (H of them) and the stride padding keep their order.
#include <cstdint>

namespace overlap::projchain {

// Output column (within its 16-column block) of accumulator column c (0..15).
constexpr int fused_output_column_in_block(int c) { return ((c & 7) >> 1) * 4 + (c >> 3) * 2 + (c & 1); }

// The weight column that packed column n holds (q|k|v|g columns permuted as above).
constexpr std::int64_t fused_source_column(std::int64_t n, std::int64_t qkvg_width) {
  return n < qkvg_width ? (n & ~std::int64_t{15}) | fused_output_column_in_block(static_cast<int>(n & 15)) : n;
}

static_assert(fused_output_column_in_block(0) == 0 && fused_output_column_in_block(1) == 1 &&
                  fused_output_column_in_block(8) == 2 && fused_output_column_in_block(9) == 3 &&
                  fused_output_column_in_block(2) == 4 && fused_output_column_in_block(15) == 15,
              "lane t's columns 2t, 2t+1, 2t+8, 2t+9 become 4t .. 4t+3");

}  // namespace overlap::projchain
