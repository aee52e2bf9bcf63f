// projchain fp32 reference computed the way the wide_gemm / epilogue_fused kernels compute
// it: the five weights concatenated into one [d, 4·H·dk + H] matrix, one Eigen GEMM (blocked,
// parallel over OpenMP threads) per tile of tokens, then the activations applied to the tile's
// column slices before they are stored — an epilogue. Tiling over tokens keeps the fp32
// intermediate at tile × width instead of N × width (538 MB at B=4,T=4096,H=16,dk=128).
#include <Eigen/Core>
#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "projchain/activations.hpp"
#include "projchain/projchain.hpp"

namespace overlap::projchain {

namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

constexpr std::int64_t kParallelEpilogue = 1 << 16;  // output elements per tile

// [W_q | W_k | W_v | W_g | W_alpha] in fp32, row-major.
RowMajor concatenate_weights(const ProjchainShape& shape, const TensorMap& inputs) {
  RowMajor wide(shape.d, shape.wide_width());
  std::int64_t col = 0;
  for (std::string_view name : kWeightNames) {
    const Tensor& w = inputs.at(std::string(name));
    const std::int64_t width = w.shape()[1];
    const std::vector<float> values = w.to_f32();
    wide.middleCols(col, width) = Eigen::Map<const RowMajor>(values.data(), shape.d, width);
    col += width;
  }
  return wide;
}

}  // namespace

TensorMap wide_gemm_reference(const ProjchainShape& shape, const TensorMap& inputs,
                              std::int64_t token_tile) {
  shape.validate();
  require_input_layout(shape, inputs);
  OVERLAP_REQUIRE(token_tile >= 1, "projchain: token tile {} must be at least 1", token_tile);
  const std::int64_t N = shape.N(), HD = shape.heads_width(), H = shape.H;

  const RowMajor wide = concatenate_weights(shape, inputs);
  const std::vector<float> x = inputs.at("x").to_f32();
  const Eigen::Map<const RowMajor> X(x.data(), N, shape.d);

  TensorMap out;
  for (std::string_view name : kOutputNames)
    out.emplace(std::string(name), Tensor(DType::F32, name == "alpha" ? shape.alpha_output_shape()
                                                                      : shape.head_output_shape()));
  float* const q = out.at("q").view<float>().data();
  float* const k = out.at("k").view<float>().data();
  float* const v = out.at("v").view<float>().data();
  float* const g = out.at("g").view<float>().data();
  float* const alpha = out.at("alpha").view<float>().data();

  RowMajor tile(std::min(token_tile, N), shape.wide_width());
  for (std::int64_t start = 0; start < N; start += token_tile) {
    const std::int64_t rows = std::min(token_tile, N - start);
    tile.topRows(rows).noalias() = X.middleRows(start, rows) * wide;
    // A parallel region costs more than the epilogue of a few short rows.
#pragma omp parallel for schedule(static) if (rows * shape.wide_width() >= kParallelEpilogue)
    for (std::int64_t r = 0; r < rows; ++r) {
      const float* y = tile.row(r).data();
      const std::int64_t n = start + r;
      std::copy_n(y, HD, q + n * HD);
      std::copy_n(y + HD, HD, k + n * HD);
      l2normalize_heads(k + n * HD, H, shape.dk);
      std::copy_n(y + 2 * HD, HD, v + n * HD);
      for (std::int64_t c = 0; c < HD; ++c) g[n * HD + c] = silu(y[3 * HD + c]);
      for (std::int64_t h = 0; h < H; ++h) alpha[n * H + h] = sigmoid(y[4 * HD + h]);
    }
  }
  return out;
}

}  // namespace overlap::projchain
