// Float64 oracle: the definition as a plain triple loop on the decoded operands.
#include <cmath>

#include "core/error.hpp"
#include "dualgemm/dualgemm.hpp"

namespace overlap::dualgemm {
namespace {
double silu(double x) { return x / (1.0 + std::exp(-x)); }
}  // namespace

void oracle_rows(const Operands& ops, std::int64_t l, std::int64_t m_begin, std::int64_t m_end,
                 std::span<double> out) {
  const DualGemmShape& s = ops.shape;
  OVERLAP_REQUIRE(l >= 0 && l < s.L && 0 <= m_begin && m_begin <= m_end && m_end <= s.M,
                  "dualgemm oracle: rows [{}, {}) of batch {} outside [0, {}) x {}", m_begin, m_end,
                  l, s.M, s.L);
  OVERLAP_REQUIRE(out.size() == static_cast<std::size_t>((m_end - m_begin) * s.N),
                  "dualgemm oracle: output has {} elements, expected {}", out.size(),
                  (m_end - m_begin) * s.N);
  const float* a = ops.a.data() + l * s.M * s.K;
  const float* b1 = ops.b1.data() + l * s.N * s.K;
  const float* b2 = ops.b2.data() + l * s.N * s.K;
#pragma omp parallel for schedule(static)
  for (std::int64_t m = m_begin; m < m_end; ++m) {
    for (std::int64_t n = 0; n < s.N; ++n) {
      double p1 = 0, p2 = 0;
      for (std::int64_t k = 0; k < s.K; ++k) {
        const double x = a[m * s.K + k];
        p1 += x * static_cast<double>(b1[n * s.K + k]);
        p2 += x * static_cast<double>(b2[n * s.K + k]);
      }
      if (ops.has_row_scales()) {  // dequantized A B^T = (sa sb) * (codes A)(codes B)^T, exactly
        const double sa = ops.a_scale[l * s.M + m];
        p1 *= sa * ops.b1_scale[l * s.N + n];
        p2 *= sa * ops.b2_scale[l * s.N + n];
      }
      out[static_cast<std::size_t>((m - m_begin) * s.N + n)] = silu(p1) * p2;
    }
  }
}

Tensor oracle(const Operands& ops) {
  const DualGemmShape& s = ops.shape;
  Tensor c(DType::F64, {s.L, s.M, s.N});
  auto out = c.view<double>();
  for (std::int64_t l = 0; l < s.L; ++l)
    oracle_rows(
        ops, l, 0, s.M,
        out.subspan(static_cast<std::size_t>(l * s.M * s.N), static_cast<std::size_t>(s.M * s.N)));
  return c;
}

}  // namespace overlap::dualgemm
