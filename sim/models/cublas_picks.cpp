#include "sim/models/cublas_picks.hpp"

#include <fmt/format.h>

namespace overlap::sim {
namespace {

// nvjet_sm90_tst_<cols tile>x<rows tile>_<k>x<stages>_<cluster cols>x<cluster rows>: cuBLAS is
// called column-major with m = the output's columns (cuda/common/cublas_gemm.cpp), so the
// name's first extent runs along our columns.
LibraryGemmPick nvjet(int tile_cols, int tile_rows, int stages, int cluster_cols, int cluster_rows) {
  return {fmt::format("nvjet_sm90_tst_{}x{}_64x{}_{}x{}", tile_cols, tile_rows, stages, cluster_cols, cluster_rows),
          tile_rows, tile_cols, 64, stages, cluster_rows, cluster_cols};
}

}  // namespace

std::optional<LibraryGemmPick> cublas_sm90_pick(std::string_view gpu, std::int64_t rows, std::int64_t cols,
                                                std::int64_t K) {
  if ((gpu != "H100" && gpu != "H200") || K != 2048) return std::nullopt;
  // The observations (2026-11-27, docs/validation/README.md "projchain kernel by kernel").
  if (cols == 16) {
    if (rows <= 2048 && gpu == "H200") return nvjet(64, 24, 16, 1, 4);
    if (rows <= 4096) return nvjet(32, 64, 16, 1, 4);
    if (rows <= 8192) return nvjet(32, 64, 16, 1, 2);
    if (rows <= 16384) return nvjet(32, 128, 10, 1, 2);
    return nvjet(32, 256, 5, 1, 2);
  }
  if (cols == 2048) return nvjet(256, 128, 4, 1, 2);
  if (cols == 8208) return rows <= 4096 ? nvjet(128, 256, 4, 2, 1) : nvjet(160, 256, 3, 2, 1);
  return std::nullopt;
}

}  // namespace overlap::sim
