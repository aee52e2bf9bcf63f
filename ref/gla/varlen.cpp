// Variable-length batches (reference.hpp, *_varlen): each sequence of the packed batch run alone
// through the fixed-length functions, on views of the packed arrays. A sequence's rows of a
// [1, T, H, D] tensor are contiguous (rows cu[n] .. cu[n+1]), and its state is slice n of the
// [N, H, K, V] state tensors, so a view is a sub-span and a shape with B = 1, T = its length.
#include <string>

#include "gla/reference.hpp"

namespace overlap::gla {
namespace {

// Checks cu_seqlens against the packed shape; returns the number of sequences.
std::int64_t sequences(const GlaShape& packed, std::span<const std::int32_t> cu) {
  OVERLAP_REQUIRE(packed.B == 1, "gla varlen: the packed batch must have B = 1 (B = {})", packed.B);
  OVERLAP_REQUIRE(cu.size() >= 2, "gla varlen: cu_seqlens needs at least 2 offsets (got {})", cu.size());
  OVERLAP_REQUIRE(cu.front() == 0, "gla varlen: cu_seqlens[0] = {} must be 0", cu.front());
  for (std::size_t i = 1; i < cu.size(); ++i)
    OVERLAP_REQUIRE(cu[i] >= cu[i - 1], "gla varlen: cu_seqlens decreases at index {} ({} after {})", i, cu[i],
                    cu[i - 1]);
  OVERLAP_REQUIRE(cu.back() == packed.T, "gla varlen: cu_seqlens ends at {}, the packed length is T = {}", cu.back(),
                  packed.T);
  return std::int64_t(cu.size()) - 1;
}

// The views of sequence n: its shape and where its rows and its state begin.
struct Sequence {
  GlaShape shape;
  std::size_t qk_offset, v_offset, state_offset;
};

Sequence sequence(const GlaShape& packed, std::span<const std::int32_t> cu, std::int64_t n) {
  Sequence s{packed, 0, 0, 0};
  s.shape.B = 1;
  s.shape.T = cu[std::size_t(n) + 1] - cu[std::size_t(n)];
  s.qk_offset = std::size_t(cu[std::size_t(n)]) * std::size_t(packed.H * packed.K);
  s.v_offset = std::size_t(cu[std::size_t(n)]) * std::size_t(packed.H * packed.V);
  s.state_offset = std::size_t(n) * std::size_t(packed.H * packed.K * packed.V);
  return s;
}

template <class T>
std::span<T> part(std::span<T> all, std::size_t offset, std::int64_t count) {
  return count == 0 || all.empty() ? std::span<T>() : all.subspan(offset, std::size_t(count));
}

// The packed arrays' sizes: rows as the shape says, states N per head. `o` and `hT` are the
// sizes of the arrays shaped like the outputs (named o_name, hT_name: do and dhT for a backward).
void check_packed(const GlaShape& packed, std::int64_t N, const GlaInputs& in, std::size_t o, std::size_t hT,
                  const char* o_name = "o", const char* hT_name = "hT") {
  GlaShape per_state = packed;
  per_state.B = N;  // state tensors hold one state per sequence
  check_size("gla varlen", "q", in.q.size(), packed.qk_numel());
  check_size("gla varlen", "k", in.k.size(), packed.qk_numel());
  check_size("gla varlen", "g", in.g.size(), packed.qk_numel());
  check_size("gla varlen", "v", in.v.size(), packed.v_numel());
  check_size("gla varlen", o_name, o, packed.v_numel());
  check_size("gla varlen", "h0", in.h0.size(), packed.has_h0 ? per_state.state_numel() : 0);
  check_size("gla varlen", hT_name, hT, packed.want_hT ? per_state.state_numel() : 0);
}

GlaInputs inputs_of(const Sequence& s, const GlaInputs& in) {
  const std::int64_t state = s.shape.state_numel();
  return {part(in.q, s.qk_offset, s.shape.qk_numel()), part(in.k, s.qk_offset, s.shape.qk_numel()),
          part(in.v, s.v_offset, s.shape.v_numel()), part(in.g, s.qk_offset, s.shape.qk_numel()),
          s.shape.has_h0 ? part(in.h0, s.state_offset, state) : std::span<const float>()};
}

template <class T, class Run>
void forward_each(const GlaShape& packed, std::span<const std::int32_t> cu, const GlaInputs& in,
                  const GlaOutputs<T>& out, Run run) {
  const std::int64_t N = sequences(packed, cu);
  check_packed(packed, N, in, out.o.size(), out.hT.size());
  for (std::int64_t n = 0; n < N; ++n) {
    const Sequence s = sequence(packed, cu, n);
    const std::int64_t state = s.shape.state_numel();
    const GlaOutputs<T> o{part(out.o, s.v_offset, s.shape.v_numel()),
                          s.shape.want_hT ? out.hT.subspan(s.state_offset, std::size_t(state)) : std::span<T>()};
    if (s.shape.T > 0) {
      run(s.shape, inputs_of(s, in), o);
    } else if (s.shape.want_hT) {  // an empty sequence leaves its state as it came in
      for (std::int64_t i = 0; i < state; ++i) o.hT[std::size_t(i)] = s.shape.has_h0 ? T(in.h0[s.state_offset + i]) : T(0);
    }
  }
}

template <class T, class Run>
void backward_each(const GlaShape& packed, std::span<const std::int32_t> cu, const GlaInputs& in,
                   const GlaOutputGrads& grads, const GlaInputGrads<T>& out, Run run) {
  const std::int64_t N = sequences(packed, cu);
  GlaShape per_state = packed;
  per_state.B = N;
  check_packed(packed, N, in, grads.do_.size(), grads.dhT.size(), "do", "dhT");
  check_size("gla varlen backward", "dq", out.dq.size(), packed.qk_numel());
  check_size("gla varlen backward", "dk", out.dk.size(), packed.qk_numel());
  check_size("gla varlen backward", "dg", out.dg.size(), packed.qk_numel());
  check_size("gla varlen backward", "dv", out.dv.size(), packed.v_numel());
  check_size("gla varlen backward", "dh0", out.dh0.size(), packed.has_h0 ? per_state.state_numel() : 0);
  for (std::int64_t n = 0; n < N; ++n) {
    const Sequence s = sequence(packed, cu, n);
    const std::int64_t qk = s.shape.qk_numel(), v = s.shape.v_numel(), state = s.shape.state_numel();
    const GlaOutputGrads g{part(grads.do_, s.v_offset, v),
                           s.shape.want_hT ? grads.dhT.subspan(s.state_offset, std::size_t(state)) : std::span<const float>()};
    const GlaInputGrads<T> o{part(out.dq, s.qk_offset, qk), part(out.dk, s.qk_offset, qk), part(out.dg, s.qk_offset, qk),
                             part(out.dv, s.v_offset, v),
                             s.shape.has_h0 ? out.dh0.subspan(s.state_offset, std::size_t(state)) : std::span<T>()};
    if (s.shape.T > 0) {
      run(s.shape, inputs_of(s, in), g, o);
    } else if (s.shape.has_h0) {  // nothing between h0 and hT: dh0 = dhT
      for (std::int64_t i = 0; i < state; ++i) o.dh0[std::size_t(i)] = s.shape.want_hT ? T(g.dhT[std::size_t(i)]) : T(0);
    }
  }
}

}  // namespace

void oracle_varlen(const GlaShape& packed, std::span<const std::int32_t> cu_seqlens, const GlaInputs& in,
                   const GlaOutputs<double>& out) {
  forward_each(packed, cu_seqlens, in, out, [](const auto& s, const auto& i, const auto& o) { oracle(s, i, o); });
}

void chunked_reference_varlen(const GlaShape& packed, std::span<const std::int32_t> cu_seqlens, const GlaInputs& in,
                              const GlaOutputs<float>& out, const ChunkOptions& options) {
  forward_each(packed, cu_seqlens, in, out,
               [&](const auto& s, const auto& i, const auto& o) { chunked_reference(s, i, o, options); });
}

void oracle_backward_varlen(const GlaShape& packed, std::span<const std::int32_t> cu_seqlens, const GlaInputs& in,
                            const GlaOutputGrads& grads, const GlaInputGrads<double>& out) {
  backward_each(packed, cu_seqlens, in, grads, out,
                [](const auto& s, const auto& i, const auto& g, const auto& o) { oracle_backward(s, i, g, o); });
}

void chunked_reference_backward_varlen(const GlaShape& packed, std::span<const std::int32_t> cu_seqlens,
                                       const GlaInputs& in, const GlaOutputGrads& grads,
                                       const GlaInputGrads<float>& out, const ChunkOptions& options) {
  backward_each(packed, cu_seqlens, in, grads, out, [&](const auto& s, const auto& i, const auto& g, const auto& o) {
    chunked_reference_backward(s, i, g, o, options);
  });
}

}  // namespace overlap::gla
