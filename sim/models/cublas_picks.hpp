#pragma once
// The kernels cuBLAS runs for our row-major GEMMs on an H100 (sm_90), as Nsight Compute names
// them (tools/device/validate_kernels_ncu.sh; names like nvjet_sm90_tst_256x128_64x4_1x2_...:
// a tile of 256 output columns x 128 rows, 64 of K a stage, 4 stages, clusters of 1 x 2 along
// columns x rows). Observed with cuBLAS 13.0 for projchain's GEMMs (K = 2048; 16, 2048 and 8208
// output columns; 2048 to 32768 rows) on a lent H100 and a lent H200 (the same picks but one), and
// for linrnn's projection (K = 256, 192 columns, 8192 to 65536 rows; K = 1024, 3072 columns,
// 32768 rows) on the H100; the model uses a pick in place of a guessed tiling.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sim/gemm_model.hpp"
#include "sim/profile.hpp"

namespace overlap::sim {

struct LibraryGemmPick {
  std::string kernel;        // the name's stem, e.g. "nvjet_sm90_tst_256x128_64x4_1x2"
  int tile_rows, tile_cols;  // of the row-major output
  int tile_k, stages;
  int cluster_rows, cluster_cols;  // CTAs of a cluster along the output's rows / columns
};

// cuBLAS's pick for a row-major [rows x K] x [K x cols] bf16 GEMM on the GPU of profile `gpu`
// (H100 or H200), where observed; empty elsewhere.
std::optional<LibraryGemmPick> cublas_sm90_pick(std::string_view gpu, std::int64_t rows, std::int64_t cols,
                                                std::int64_t K);

// Gives `g` (a cuBLAS GEMM of our row-major operands) the picked kernel's tile, stages and cluster
// where one was observed on `hw`'s GPU, naming it; false (g unchanged) elsewhere. A cluster's
// CTAs share the tiles of the other operand by multicast; the consumer warpgroups are not in the
// name: two where the tile has 128 rows or more, else one; the stages leave no room to stage a
// whole output tile (256x128 with 4 stages of 48 KiB), so the epilogue is charged as direct stores.
bool apply_cublas_pick(const HardwareProfile& hw, GemmSpec& g);

}  // namespace overlap::sim
