// Fast reference: the dual GEMM the way the kernels tile it. Each output tile runs both GEMMs
// on the same rows of A (a dual-GEMM kernel loads each A tile once for both B operands), then
// the epilogue in registers: row scales, silu(x) * y. Tiles are spread over OpenMP threads;
// Eigen's GEMM then runs single-threaded inside each (it does not nest inside a parallel
// region), so there is no oversubscription.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>

#include "dualgemm/dualgemm.hpp"

namespace overlap::dualgemm {
namespace {

using RowMajorMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMajorMatrix>;

// A tile large enough that Eigen's packing (O((rows + cols) K)) is small against the
// product (O(rows cols K)), small enough that M = 256 still gives every core tiles.
constexpr std::int64_t kTileRows = 128;
constexpr std::int64_t kTileCols = 256;

float silu(float x) { return x / (1.0f + std::exp(-x)); }

}  // namespace

Tensor fast_reference(const Operands& ops) {
  const DualGemmShape& s = ops.shape;
  Tensor c(DType::F32, {s.L, s.M, s.N});
  float* out = c.view<float>().data();
  const std::int64_t row_tiles = (s.M + kTileRows - 1) / kTileRows;
  const std::int64_t col_tiles = (s.N + kTileCols - 1) / kTileCols;

#pragma omp parallel
  {
    RowMajorMatrix p1, p2;  // accumulators of one tile, reused by this thread
#pragma omp for collapse(3) schedule(dynamic)
    for (std::int64_t l = 0; l < s.L; ++l)
      for (std::int64_t tm = 0; tm < row_tiles; ++tm)
        for (std::int64_t tn = 0; tn < col_tiles; ++tn) {
          const std::int64_t m0 = tm * kTileRows, rows = std::min(kTileRows, s.M - m0);
          const std::int64_t n0 = tn * kTileCols, cols = std::min(kTileCols, s.N - n0);
          const ConstMap a(ops.a.data() + (l * s.M + m0) * s.K, rows, s.K);
          const ConstMap b1(ops.b1.data() + (l * s.N + n0) * s.K, cols, s.K);
          const ConstMap b2(ops.b2.data() + (l * s.N + n0) * s.K, cols, s.K);
          p1.noalias() = a * b1.transpose();
          p2.noalias() = a * b2.transpose();
          for (std::int64_t i = 0; i < rows; ++i) {
            const std::int64_t m = m0 + i;
            float* c_row = out + (l * s.M + m) * s.N + n0;
            const float sa = ops.has_row_scales() ? ops.a_scale[l * s.M + m] : 1.0f;
            for (std::int64_t j = 0; j < cols; ++j) {
              float x = p1(i, j), y = p2(i, j);
              if (ops.has_row_scales()) {
                x *= sa * ops.b1_scale[l * s.N + n0 + j];
                y *= sa * ops.b2_scale[l * s.N + n0 + j];
              }
              c_row[j] = silu(x) * y;
            }
          }
        }
  }
  return c;
}

}  // namespace overlap::dualgemm
