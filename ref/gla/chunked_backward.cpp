// The fp32 gradients of the gla forward, chunk by chunk (reference.hpp,
// chunked_reference_backward), per (batch, head):
//
// 1. Forward over the chunks, keeping the state S_n at the start of every chunk (and hT).
// 2. Backward over the chunks, carrying dS = dL/dS at the chunk's end (dhT at the start). With
//    b_t the inclusive cumulative log-gate from the chunk's start, E_t = e^{b_t},
//    F_t = e^{b_last - b_t} and D_{t,j} = e^{b_t - b_j} for j <= t (every exponent <= 0):
//      dq_t = s E_t * (S_n do_t)         + s sum_{j<=t} D_{t,j} * k_j <do_t, v_j>
//      dk_j = F_j * (dS v_j)             + s sum_{t>=j} D_{t,j} * q_t <do_t, v_j>
//      dv_j = (k_j * F_j)^T dS           + sum_{t>=j} A_{t,j} do_t,  A_{t,j} = s <q_t * D_{t,j}, k_j>
//      dS  <- diag(E_last) dS            + s sum_t (q_t * E_t) do_t^T
// 3. The gates: a_t = sum_{u<=t} g_u enters as e^{a_t} on q_t and e^{-a_t} on k_t (and e^{a_T}
//    on hT), so dL/da_t = q_t * dq_t - k_t * dk_t (+ rowsum(dhT * hT) at the last token), and
//    dg_t = sum_{u>=t} dL/da_u: a running sum carried backwards across the chunks.
// The intra-chunk decays D are formed per pair, never as e^{b_t} e^{-b_j} (which overflows
// with strong gates, see chunked.cpp): C^2 K / 2 exponentials a chunk, fine for a reference.
// One OpenMP task per (batch, head); Eigen stays serial inside it (chunked.cpp says why).
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <vector>

#include "gla/reference.hpp"

namespace overlap::gla {
namespace {

using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowVec = Eigen::Matrix<float, 1, Eigen::Dynamic>;
using Rows = Eigen::Map<const Mat, 0, Eigen::OuterStride<>>;      // L rows of a [B,T,H,D] tensor
using RowsOut = Eigen::Map<Mat, 0, Eigen::OuterStride<>>;

class BackwardWalker {
 public:
  BackwardWalker(const GlaShape& shape, int chunk) : s_(shape), C_(chunk) {}

  void run(const GlaInputs& in, const GlaOutputGrads& grads, const GlaInputGrads<float>& out, std::int64_t b,
           std::int64_t h) {
    const std::int64_t T = s_.T, H = s_.H, K = s_.K, V = s_.V, bh = b * H + h;
    const std::int64_t chunks = (T + C_ - 1) / C_;
    const auto rows = [&](std::span<const float> x, std::int64_t D, std::int64_t t0, std::int64_t L) {
      return Rows(x.data() + ((b * T + t0) * H + h) * D, L, D, Eigen::OuterStride<>(H * D));
    };
    const auto rows_out = [&](std::span<float> x, std::int64_t D, std::int64_t t0, std::int64_t L) {
      return RowsOut(x.data() + ((b * T + t0) * H + h) * D, L, D, Eigen::OuterStride<>(H * D));
    };

    // 1. States at the chunk starts.
    std::vector<Mat> starts(static_cast<std::size_t>(chunks));
    Mat S = s_.has_h0 ? Mat(Eigen::Map<const Mat>(in.h0.data() + bh * K * V, K, V)) : Mat::Zero(K, V);
    for (std::int64_t n = 0; n < chunks; ++n) {
      const std::int64_t t0 = n * C_, L = std::min<std::int64_t>(C_, T - t0);
      starts[std::size_t(n)] = S;
      cumulative_gates(rows(in.g, K, t0, L));
      const Mat kF = (rows(in.k, K, t0, L).array() * F_.topRows(L).array()).matrix();
      S = E_.row(L - 1).transpose().asDiagonal() * S;
      S.noalias() += kF.transpose() * rows(in.v, V, t0, L);
    }

    // 2. and 3., backwards.
    Mat dS = s_.want_hT ? Mat(Eigen::Map<const Mat>(grads.dhT.data() + bh * K * V, K, V)) : Mat::Zero(K, V);
    // dL/da at the last token includes rowsum(dhT * hT): hT = S carries e^{a_T}.
    RowVec carry = (dS.array() * S.array()).rowwise().sum().transpose();
    for (std::int64_t n = chunks - 1; n >= 0; --n) {
      const std::int64_t t0 = n * C_, L = std::min<std::int64_t>(C_, T - t0);
      const Rows q = rows(in.q, K, t0, L), k = rows(in.k, K, t0, L), v = rows(in.v, V, t0, L);
      const Rows d_o = rows(grads.do_, V, t0, L);
      cumulative_gates(rows(in.g, K, t0, L));
      const Mat W = d_o * v.transpose();  // W(t, j) = <do_t, v_j>
      Mat dq = Mat::Zero(L, K), dk = Mat::Zero(L, K), A = Mat::Zero(L, L);
      RowVec d(K);
      for (std::int64_t t = 0; t < L; ++t)
        for (std::int64_t j = 0; j <= t; ++j) {
          d = (b_.row(t) - b_.row(j)).array().exp().matrix();  // D_{t,j}
          const float w = float(s_.scale) * W(t, j);
          A(t, j) = float(s_.scale) * (q.row(t).array() * d.array() * k.row(j).array()).sum();
          dq.row(t).array() += w * d.array() * k.row(j).array();
          dk.row(j).array() += w * d.array() * q.row(t).array();
        }
      const Mat& Sn = starts[std::size_t(n)];
      dq.array() += float(s_.scale) * E_.topRows(L).array() * (d_o * Sn.transpose()).array();
      dk.array() += F_.topRows(L).array() * (v * dS.transpose()).array();
      const Mat kF = (k.array() * F_.topRows(L).array()).matrix();
      Mat dv = A.transpose() * d_o;
      dv.noalias() += kF * dS;
      const Mat qE = (q.array() * E_.topRows(L).array()).matrix();
      dS = E_.row(L - 1).transpose().asDiagonal() * dS;
      dS.noalias() += float(s_.scale) * qE.transpose() * d_o;

      rows_out(out.dq, K, t0, L) = dq;
      rows_out(out.dk, K, t0, L) = dk;
      rows_out(out.dv, V, t0, L) = dv;
      const Mat dA = (q.array() * dq.array() - k.array() * dk.array()).matrix();
      RowsOut dg = rows_out(out.dg, K, t0, L);
      for (std::int64_t t = L - 1; t >= 0; --t) {
        carry += dA.row(t);
        dg.row(t) = carry;
      }
    }
    if (s_.has_h0) Eigen::Map<Mat>(out.dh0.data() + bh * K * V, K, V) = dS;
  }

 private:
  // b_ = inclusive cumulative log-gates from the chunk's start; E_ = e^b, F_ = e^{b_last - b}.
  void cumulative_gates(const Rows& g) {
    const std::int64_t L = g.rows(), K = g.cols();
    b_.resize(L, K);
    b_.row(0) = g.row(0);
    for (std::int64_t t = 1; t < L; ++t) b_.row(t) = b_.row(t - 1) + g.row(t);
    E_ = b_.array().exp().matrix();
    F_ = (b_.row(L - 1).replicate(L, 1) - b_).array().exp().matrix();
  }

  const GlaShape& s_;
  const int C_;
  Mat b_, E_, F_;
};

}  // namespace

void chunked_reference_backward(const GlaShape& shape, const GlaInputs& in, const GlaOutputGrads& grads,
                                const GlaInputGrads<float>& out, const ChunkOptions& options) {
  OVERLAP_REQUIRE(options.chunk >= 1, "gla backward: chunk = {} must be at least 1", options.chunk);
  check_backward_sizes(shape, in, grads, out.dq.size(), out.dk.size(), out.dg.size(), out.dv.size(), out.dh0.size());
  const std::int64_t tasks = shape.B * shape.H;
#pragma omp parallel for schedule(dynamic)
  for (std::int64_t task = 0; task < tasks; ++task) {
    BackwardWalker walker(shape, options.chunk);
    walker.run(in, grads, out, task / shape.H, task % shape.H);
  }
}

}  // namespace overlap::gla
