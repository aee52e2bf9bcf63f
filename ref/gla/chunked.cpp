// The fp32 chunked reference: the algorithm the GPU kernels run (SPEC section 1, chunked form).
//
// Per (batch, head) the sequence is cut into chunks of C tokens (the last may be shorter). With
// b_i = sum_{u = chunk start .. i} g_u (per key channel, inclusive, b_i <= 0 and falling):
//   o_i     = s (q_i * e^{b_i})^T S_n  +  s sum_{j <= i in chunk} <q_i * e^{b_i - b_j}, k_j> v_j
//   S_{n+1} = diag(e^{b_last}) S_n     +  sum_j (k_j * e^{b_last - b_j}) v_j^T
//
// Numerics — why the exponents are anchored. The intra-chunk scores want a GEMM, which needs
// e^{b_i - b_j} split into a factor of row i times a factor of column j. The textbook split
// e^{b_i} * e^{-b_j} spans the whole chunk: with strong gates (g ~ -7 per step) b_j reaches
// about -450 within 64 tokens and e^{-b_j} overflows fp32 (max ~e^88) — inf, then 0 * inf = NaN.
// Here the chunk is cut into sub-chunks of 16 tokens, I = [r_I, e_I] (first, last row), and
// every split is anchored inside them:
//   off-diagonal blocks (row i in sub-chunk I, column j in an earlier sub-chunk J):
//       e^{b_i - b_j} = e^{b_i - b_{r_I}} * e^{b_{r_I} - b_{e_J}} * e^{b_{e_J} - b_j}
//   three factors, each <= 1 (every exponent is a later b minus an earlier one). The first
//   goes with the q row, the other two with the k row, and the block is one GEMM. A factor can
//   only underflow when the true product is already below fp32's smallest normal.
//   diagonal blocks (i, j in the same sub-chunk): no split at all; k_j * e^{b_i - b_j} is
//   carried from i = j to e_I as a running product of one-step decays e^{g_u} <= 1.
//   The same holds for the other terms: e^{b_i} = e^{b_i - b_{r_I}} e^{b_{r_I}} and
//   e^{b_last - b_j} = e^{b_last - b_{e_J}} e^{b_{e_J} - b_j}, every factor <= 1.
// Factors inside a sub-chunk (e^{b_i - b_r}, e^{b_e - b_j}) are running products of the
// one-step decays: at most 15 roundings (~1e-6 relative), and the exponentials drop from
// ~5 C K per chunk to ~C K (the one-step decays) plus one row per anchor pair. Anchors are
// flash-linear-attention chunk_gla's scheme (sub-chunks of 16); the GPU kernels use the same.
//
// Parallelism: one task per (batch, head, V-block), over an OpenMP loop. V is split only when
// B*H alone gives too few tasks; the split depends on the shape alone, so results never depend
// on the thread count. OpenMP rather than TBB on purpose: Eigen (built with OpenMP here)
// parallelizes every product above ~50k multiply-adds by opening its own OpenMP team, which
// inside TBB workers oversubscribes the cores (measured 25x slower on a loaded 2-core
// machine). Inside an OpenMP parallel region Eigen sees omp_get_num_threads() > 1 and stays
// serial, so each task's small products run on its own thread.
#include <Eigen/Dense>
#include <algorithm>

#include "gla/reference.hpp"

namespace overlap::gla {
namespace {

using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowVec = Eigen::Matrix<float, 1, Eigen::Dynamic>;
using StridedMat = Eigen::Map<const Mat, 0, Eigen::OuterStride<>>;
using StridedMatOut = Eigen::Map<Mat, 0, Eigen::OuterStride<>>;

// One task's walk over the chunks of one (batch, head) for value columns [v0, v0 + vw),
// carrying the K x vw state between chunks. Buffers are sized once for a full chunk; all
// element-wise work is row by row (rows are contiguous), which keeps it vectorized.
class ChunkWalker {
 public:
  ChunkWalker(const GlaShape& shape, const ChunkOptions& options, std::int64_t vw)
      : shape_(shape), C_(options.chunk), sub_(options.sub_chunk), vw_(vw) {
    const auto K = shape.K;
    for (Mat* m : {&q_, &k_, &b_, &step_, &q_rel_, &k_tail_, &q_dec_, &k_dec_}) m->resize(C_, K);
    v_.resize(C_, vw);
    A_.resize(C_, C_);
    o_.resize(C_, vw);
    S_.resize(K, vw);
    k_run_.resize(K);
    factor_.resize(K);
  }

  void run(const GlaInputs& in, const GlaOutputs<float>& out, std::int64_t b, std::int64_t h,
           std::int64_t v0) {
    const std::int64_t K = shape_.K, V = shape_.V, H = shape_.H;
    const std::int64_t bh = b * H + h;
    if (shape_.has_h0)
      S_ = StridedMat(in.h0.data() + bh * K * V + v0, K, vw_, Eigen::OuterStride<>(V));
    else
      S_.setZero();
    // Per chunk: o = (q e^b) S_n + A v with A the decayed intra-chunk scores, then
    // S_{n+1} = diag(e^{b_last}) S_n + (k e^{b_last - b})^T v.
    for (std::int64_t t0 = 0; t0 < shape_.T; t0 += C_) {
      L_ = std::min<std::int64_t>(C_, shape_.T - t0);
      load_chunk(in, b, h, v0, t0);
      anchor_within_sub_chunks();
      decay_q_from_chunk_start();
      o_.topRows(L_).noalias() = q_dec_.topRows(L_) * S_;
      intra_scores();
      o_.topRows(L_).noalias() +=
          A_.topLeftCorner(L_, L_).triangularView<Eigen::Lower>() * v_.topRows(L_);
      store_output(out, b, h, v0, t0);
      advance_state();
    }
    if (shape_.want_hT)
      StridedMatOut(out.hT.data() + bh * K * V + v0, K, vw_, Eigen::OuterStride<>(V)) = S_;
  }

 private:
  std::int64_t row_index(std::int64_t b, std::int64_t h, std::int64_t t) const {
    return (b * shape_.T + t) * shape_.H + h;
  }
  // Sub-chunks of the current chunk: rows [first(I), last(I)].
  std::int64_t sub_chunks() const { return (L_ + sub_ - 1) / sub_; }
  std::int64_t first(std::int64_t I) const { return I * sub_; }
  std::int64_t last(std::int64_t I) const { return std::min(I * sub_ + sub_, L_) - 1; }

  // factor_ = e^{b_later - b_earlier} (<= 1).
  void decay_between(std::int64_t later, std::int64_t earlier) {
    factor_ = (b_.row(later) - b_.row(earlier)).array().exp();
  }

  // Copies the chunk's rows into contiguous buffers; forms the in-chunk cumulative gates b and
  // the one-step decays e^{g}.
  void load_chunk(const GlaInputs& in, std::int64_t b, std::int64_t h, std::int64_t v0,
                  std::int64_t t0) {
    const std::int64_t K = shape_.K, V = shape_.V;
    for (std::int64_t i = 0; i < L_; ++i) {
      const std::int64_t r = row_index(b, h, t0 + i);
      q_.row(i) = Eigen::Map<const RowVec>(in.q.data() + r * K, K);
      k_.row(i) = Eigen::Map<const RowVec>(in.k.data() + r * K, K);
      v_.row(i) = Eigen::Map<const RowVec>(in.v.data() + r * V + v0, vw_);
      const Eigen::Map<const RowVec> g(in.g.data() + r * K, K);
      if (i == 0)
        b_.row(0) = g;
      else
        b_.row(i) = b_.row(i - 1) + g;
      step_.row(i) = g.array().exp();
    }
  }

  // q_rel_ row i = q_i e^{b_i - b_{r_I}},  k_tail_ row j = k_j e^{b_{e_J} - b_j}, by running
  // products of one-step decays inside each sub-chunk (q_dec_ / k_dec_ hold the products).
  void anchor_within_sub_chunks() {
    for (std::int64_t I = 0; I < sub_chunks(); ++I) {
      const std::int64_t r = first(I), e = last(I);
      q_dec_.row(r).setOnes();
      for (std::int64_t i = r + 1; i <= e; ++i)
        q_dec_.row(i) = q_dec_.row(i - 1).cwiseProduct(step_.row(i));
      k_dec_.row(e).setOnes();
      for (std::int64_t j = e - 1; j >= r; --j)
        k_dec_.row(j) = k_dec_.row(j + 1).cwiseProduct(step_.row(j + 1));
    }
    q_rel_.topRows(L_) = q_.topRows(L_).cwiseProduct(q_dec_.topRows(L_));
    k_tail_.topRows(L_) = k_.topRows(L_).cwiseProduct(k_dec_.topRows(L_));
  }

  // q_dec_ row i = q_i e^{b_i} = q_rel_ row i * e^{b_{r_I}}.
  void decay_q_from_chunk_start() {
    for (std::int64_t I = 0; I < sub_chunks(); ++I) {
      factor_ = b_.row(first(I)).array().exp();
      for (std::int64_t i = first(I); i <= last(I); ++i)
        q_dec_.row(i) = q_rel_.row(i).cwiseProduct(factor_);
    }
  }

  // A(i, j) = <q_i * e^{b_i - b_j}, k_j> for j <= i (see the file comment). Entries above the
  // diagonal are never read.
  void intra_scores() {
    for (std::int64_t I = 0; I < sub_chunks(); ++I) {
      diagonal_block(I);
      if (I == 0) continue;
      // k rows of every earlier sub-chunk J anchored at r_I: k_tail_ * e^{b_{r_I} - b_{e_J}}.
      for (std::int64_t J = 0; J < I; ++J) {
        decay_between(first(I), last(J));
        for (std::int64_t j = first(J); j <= last(J); ++j)
          k_dec_.row(j) = k_tail_.row(j).cwiseProduct(factor_);
      }
      const std::int64_t r = first(I), n = last(I) - r + 1;
      A_.block(r, 0, n, r).noalias() = q_rel_.middleRows(r, n) * k_dec_.topRows(r).transpose();
    }
  }

  // Inside one sub-chunk, k_j * e^{b_i - b_j} is carried forward from i = j as a running
  // product of one-step decays: never split, never above |k_j|.
  void diagonal_block(std::int64_t I) {
    for (std::int64_t j = first(I); j <= last(I); ++j) {
      k_run_ = k_.row(j);
      A_(j, j) = q_.row(j).dot(k_run_);
      for (std::int64_t i = j + 1; i <= last(I); ++i) {
        k_run_.array() *= step_.row(i).array();
        A_(i, j) = q_.row(i).dot(k_run_);
      }
    }
  }

  void store_output(const GlaOutputs<float>& out, std::int64_t b, std::int64_t h, std::int64_t v0,
                    std::int64_t t0) const {
    const auto scale = static_cast<float>(shape_.scale);
    for (std::int64_t i = 0; i < L_; ++i)
      Eigen::Map<RowVec>(out.o.data() + row_index(b, h, t0 + i) * shape_.V + v0, vw_) =
          scale * o_.row(i);
  }

  // S <- diag(e^{b_last}) S + (k * e^{b_last - b})^T v.
  void advance_state() {
    const std::int64_t end = L_ - 1;
    for (std::int64_t J = 0; J < sub_chunks(); ++J) {
      decay_between(end, last(J));
      for (std::int64_t j = first(J); j <= last(J); ++j)
        k_dec_.row(j) = k_tail_.row(j).cwiseProduct(factor_);
    }
    factor_ = b_.row(end).array().exp();
    S_.array().colwise() *= factor_.transpose().array();
    S_.noalias() += k_dec_.topRows(L_).transpose() * v_.topRows(L_);
  }

  const GlaShape& shape_;
  const std::int64_t C_, sub_, vw_;
  std::int64_t L_ = 0;      // rows in the current chunk
  Mat q_, k_, v_;           // chunk rows
  Mat b_;                   // in-chunk cumulative gates b_i
  Mat step_;                // one-step decays e^{g_i}
  Mat q_rel_;               // q_i e^{b_i - b_{r_I}}
  Mat k_tail_;              // k_j e^{b_{e_J} - b_j}
  Mat q_dec_, k_dec_;       // scratch: running products, then decayed q / anchored k
  Mat A_;                   // intra-chunk scores, C x C (lower triangle used)
  Mat o_;                   // unscaled chunk output, C x vw
  Mat S_;                   // carried state, K x vw
  RowVec k_run_, factor_;   // a running product of decays; one row of anchor factors
};

// Number of V-blocks: enough (batch, head, V-block) tasks to keep a many-core machine busy,
// but no block narrower than 32 columns, where the repeated score work would dominate.
std::int64_t v_blocks(const GlaShape& shape) {
  constexpr std::int64_t kMinTasks = 16, kMinWidth = 32;
  const std::int64_t wanted = (kMinTasks + shape.B * shape.H - 1) / (shape.B * shape.H);
  const std::int64_t most = std::max<std::int64_t>(1, shape.V / kMinWidth);
  return std::clamp<std::int64_t>(wanted, 1, most);
}

}  // namespace

void chunked_reference(const GlaShape& shape, const GlaInputs& in, const GlaOutputs<float>& out,
                       const ChunkOptions& options) {
  check_sizes(shape, in, out.o.size(), out.hT.size());
  OVERLAP_REQUIRE(options.sub_chunk >= 1 && options.chunk >= options.sub_chunk &&
                      options.chunk % options.sub_chunk == 0,
                  "gla: chunk {} must be a positive multiple of the sub-chunk {}", options.chunk,
                  options.sub_chunk);
  const std::int64_t nvb = v_blocks(shape);
  const std::int64_t width = (shape.V + nvb - 1) / nvb;
  const std::int64_t tasks = shape.B * shape.H * nvb;
#pragma omp parallel for schedule(dynamic)
  for (std::int64_t task = 0; task < tasks; ++task) {
    const std::int64_t bh = task / nvb, v0 = (task % nvb) * width;
    const std::int64_t vw = std::min(width, shape.V - v0);
    ChunkWalker walker(shape, options, vw);
    walker.run(in, out, bh / shape.H, bh % shape.H, v0);
  }
}

}  // namespace overlap::gla
