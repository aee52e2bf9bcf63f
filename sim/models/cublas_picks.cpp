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
  if (gpu != "H100" && gpu != "H200") return std::nullopt;
  // The observations (2026-11-27, docs/validation/README.md "projchain / linrnn kernel by kernel").
  // linrnn's projection: the H100 and the H200 pick alike.
  if (K == 256 && cols == 192) return rows <= 8192 ? nvjet(96, 128, 6, 2, 1) : nvjet(192, 128, 5, 1, 2);
  if (K == 1024 && cols == 3072 && rows == 32768) return nvjet(192, 192, 3, 2, 1);
  if (K != 2048) return std::nullopt;
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

bool apply_cublas_pick(const HardwareProfile& hw, GemmSpec& g) {
  const auto pick = cublas_sm90_pick(hw.name, g.M, g.N, g.K);
  if (!pick) return false;
  g.name += fmt::format(" ({})", pick->kernel);
  g.tile_m = pick->tile_rows;
  g.tile_n = pick->tile_cols;
  g.tile_k = pick->tile_k;
  g.stages = pick->stages;
  g.cluster_size = pick->cluster_rows * pick->cluster_cols;
  g.b_multicast = pick->cluster_rows;
  g.a_multicast = pick->cluster_cols;
  g.consumer_warps = pick->tile_rows >= 128 ? 8 : 4;
  g.warp_specialized = true;
  g.persistent = true;
  g.tma_store = false;
  return true;
}

}  // namespace overlap::sim
