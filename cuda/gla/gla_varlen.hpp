#pragma once
// Variable-length batches for gla_forward and gla_backward (flash-linear-attention's
// cu_seqlens): the sequences are packed along T of one batch row (shape.B = 1, shape.T the
// packed length) and sequence i is steps [cu_seqlens[i], cu_seqlens[i + 1]). Each sequence is
// its own recurrence from its own initial state: outputs and gradients are those of running it
// alone. Host-includable without nvcc.
//
// With num_seqs = N: h0, hT, dh0, dhT are [N, H, K, V]; the saved states (GlaDeviceArgs::states)
// hold sequence i's S_n, n < ceil(len_i / 64), as [H, ceil(len_i / 64), K, V] starting at state
// c_i = sum_{j < i} ceil(len_j / 64) of gla_varlen_states_shape (a dense batch's layout when every
// length is T / B). The kernels walk the sequences longest first, so that a long sequence does
// not start last and leave the GPU idle at the end.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/alignment.hpp"
#include "core/error.hpp"
#include "core/tensor.hpp"
#include "gla/gla_varlen.cuh"
#include "gla/shape.hpp"

namespace overlap::cuda {

struct GlaVarlen {
  // Device, int32, num_seqs + 1 offsets: 0 first, shape.T last, non-decreasing (zero lengths
  // allowed: such a sequence's final state is its initial state). Malformed offsets cannot make
  // a kernel read or write out of bounds (gla_varlen::plan_entry keeps the ranges disjoint and
  // inside [0, T]), but give meaningless results and leave rows unwritten: overlap.ops checks
  // them. Inputs must be finite: the masked rows of a sequence's last chunk are multiplied by
  // zero, so a NaN or infinity in the next sequence's v there would reach this one.
  const int* cu_seqlens = nullptr;
  int num_seqs = 0;
  bool active() const { return cu_seqlens != nullptr; }
};

// What the forward and the backward both refuse (`who` names the entry point and variant): a
// batch of more than one row, no sequences, offsets the kernels cannot read as int32.
inline void require_varlen_batch(std::string_view who, const gla::GlaShape& s, const GlaVarlen& varlen) {
  OVERLAP_REQUIRE(s.B == 1, "{}: with cu_seqlens the sequences are packed along T: B must be 1, not {}", who, s.B);
  OVERLAP_REQUIRE(varlen.num_seqs >= 1, "{}: num_seqs must be at least 1 with cu_seqlens, not {}", who,
                  varlen.num_seqs);
  require_aligned(who, "cu_seqlens", varlen.cu_seqlens, 4);
}

// At most sum_i ceil(len_i / 64) <= (T + 63 N) / 64 chunk states: what the saved states and the
// backward's state gradients are sized for without reading the offsets back to the host.
inline std::int64_t gla_varlen_max_chunks(const gla::GlaShape& s, int num_seqs) {
  return gla_varlen::max_chunks(s.T, num_seqs);
}
inline Shape gla_varlen_states_shape(const gla::GlaShape& s, int num_seqs) {
  return {gla_varlen_max_chunks(s, num_seqs), s.H, s.K, s.V};
}

// Device scratch of the launch plan (the walk order, each sequence's first chunk state, each
// chunk state's sequence).
inline std::size_t gla_varlen_plan_bytes(const gla::GlaShape& s, int num_seqs) {
  return gla_varlen::plan_bytes(num_seqs, s.T);
}

}  // namespace overlap::cuda
