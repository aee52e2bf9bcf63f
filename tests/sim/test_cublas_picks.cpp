// The library GEMMs as they run: cuBLAS's observed picks (sim/models/cublas_picks.cpp) drive the
// projchain model's unfused and wide_gemm GEMMs and linrnn's projection on the H100 (and H200), and the 2-d copies of
// wide_gemm are charged as copy-engine transfers where the profile measured them.
#include <gtest/gtest.h>

#include <string>

#include "sim/api.hpp"
#include "sim/models/cublas_picks.hpp"

namespace overlap::sim {
namespace {

ShapeArgs projchain_shape(std::int64_t T) {
  ShapeArgs s;
  for (auto [k, v] : {std::pair{"B", 4}, {"T", 512}, {"d", 2048}, {"H", 16}, {"dk", 128}}) s.set(k, v);
  s.set("T", T);
  return s;
}

const KernelPrediction& kernel_named(const Prediction& p, const std::string& stem) {
  for (const auto& k : p.kernels)
    if (k.name.rfind(stem, 0) == 0) return k;
  ADD_FAILURE() << "no kernel " << stem << " in " << p.variant;
  return p.kernels.front();
}

TEST(CublasPicks, NamesParseIntoTheirTiles) {
  const auto pick = cublas_sm90_pick("H100", 2048, 2048, 2048);
  ASSERT_TRUE(pick);
  EXPECT_EQ(pick->kernel, "nvjet_sm90_tst_256x128_64x4_1x2");
  // cuBLAS runs column-major with m = our columns: the name's first extent is along columns.
  EXPECT_EQ(pick->tile_cols, 256);
  EXPECT_EQ(pick->tile_rows, 128);
  EXPECT_EQ(pick->stages, 4);
  EXPECT_EQ(pick->cluster_rows, 2);
  EXPECT_EQ(pick->cluster_cols, 1);
  // Where nothing was observed the model keeps its own tiling.
  EXPECT_FALSE(cublas_sm90_pick("H100", 2048, 2048, 4096));
  EXPECT_FALSE(cublas_sm90_pick("B200", 2048, 2048, 2048));
  EXPECT_NE(cublas_sm90_pick("H200", 2048, 16, 2048)->kernel, cublas_sm90_pick("H100", 2048, 16, 2048)->kernel);
}

TEST(CublasPicks, ProjchainGemmsTakeThePickedTiles) {
  const HardwareProfile hw = load_profile("H100");
  const Prediction unfused = predict(hw, "projchain", "unfused", projchain_shape(512));
  // The 16-column alpha GEMM: 2048 rows in 64-row tiles, one 32-column tile: 32 CTAs.
  const KernelPrediction& alpha = kernel_named(unfused, "projchain_gemm_alpha");
  EXPECT_NE(alpha.name.find("nvjet_sm90_tst_32x64"), std::string::npos) << alpha.name;
  EXPECT_EQ(alpha.ctas, 32);
  // Without an observation (the T4) the guessed tiling stays.
  const Prediction t4 = predict(load_profile("T4"), "projchain", "unfused", projchain_shape(512));
  EXPECT_EQ(kernel_named(t4, "projchain_gemm_alpha").name, "projchain_gemm_alpha");
}

TEST(CublasPicks, LinrnnProjectionTakesThePickedTiles) {
  ShapeArgs s;
  for (auto [k, v] : {std::pair{"B", 4}, {"T", 2048}, {"d", 256}, {"dv", 64}, {"h0", 1}, {"hT", 1}}) s.set(k, v);
  // 8192 rows in 128-row tiles, 192 columns in two 96-column tiles: 128 CTAs, on both Hoppers.
  for (const char* gpu : {"H100", "H200"}) {
    const Prediction p = predict(load_profile(gpu), "linrnn", "three_kernel", s);
    const KernelPrediction& gemm = kernel_named(p, "linrnn_projection_gemm");
    EXPECT_NE(gemm.name.find("nvjet_sm90_tst_96x128"), std::string::npos) << gpu << ": " << gemm.name;
    EXPECT_EQ(gemm.ctas, 128) << gpu;
  }
}

TEST(CublasPicks, SliceCopiesRunOnACopyEngineWhereMeasured) {
  const HardwareProfile hw = load_profile("H100");
  ASSERT_GT(hw.memcpy2d_GBps, 0);
  const Prediction wide = predict(hw, "projchain", "wide_gemm", projchain_shape(512));
  const KernelPrediction& q = kernel_named(wide, "projchain_copy_q");
  const double bytes = 2.0 * 2048 * 2048 * 2;  // 2048 rows of 2048 bf16, read and written
  EXPECT_NEAR(q.time_us, hw.memcpy2d_fixed_us + bytes / (hw.memcpy2d_GBps * 1e3), 0.01);
}

}  // namespace
}  // namespace overlap::sim
