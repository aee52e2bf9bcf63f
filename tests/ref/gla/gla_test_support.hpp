#pragma once
// Shared pieces of the gla tests: a problem drawn from a seed, both implementations run on it,
// and the relative-norm comparison every test uses.
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gla/inputs.hpp"
#include "gla/reference.hpp"
#include "gla/shape.hpp"

namespace overlap::gla::testing {

// ||out - ref|| / ||ref||; a reference of norm zero compares by ||out|| alone.
template <class A, class B>
double rel_error(const std::vector<A>& out, const std::vector<B>& ref) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double d = static_cast<double>(out[i]) - static_cast<double>(ref[i]);
    diff += d * d;
    norm += static_cast<double>(ref[i]) * static_cast<double>(ref[i]);
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

template <class T>
bool all_finite(const std::vector<T>& values) {
  for (T x : values)
    if (!std::isfinite(x)) return false;
  return true;
}

template <class T>
struct Result {
  std::vector<T> o, hT;
  Result(const GlaShape& s)
      : o(static_cast<std::size_t>(s.v_numel())),
        hT(s.want_hT ? static_cast<std::size_t>(s.state_numel()) : 0) {}
  GlaOutputs<T> spans() { return {o, hT}; }
};

// Storage for the gradients of every input (GlaInputGrads spans into it).
template <class T>
struct Gradients {
  std::vector<T> dq, dk, dg, dv, dh0;
  explicit Gradients(const GlaShape& s)
      : dq(std::size_t(s.qk_numel())), dk(dq.size()), dg(dq.size()), dv(std::size_t(s.v_numel())),
        dh0(s.has_h0 ? std::size_t(s.state_numel()) : 0) {}
  GlaInputGrads<T> spans() { return {dq, dk, dg, dv, dh0}; }
};

// Inputs of `shape` drawn from (seed, distribution), decoded to float.
struct Problem {
  GlaShape shape;
  DecodedInputs in;
  Problem(const GlaShape& s, std::uint64_t seed, const std::string& distribution)
      : shape(s), in(decode_inputs(s, make_inputs(s, seed, distribution))) {}
};

inline Result<double> run_oracle(const GlaShape& s, const GlaInputs& in) {
  Result<double> r(s);
  oracle(s, in, r.spans());
  return r;
}
inline Result<float> run_chunked(const GlaShape& s, const GlaInputs& in,
                                 const ChunkOptions& options = {}) {
  Result<float> r(s);
  chunked_reference(s, in, r.spans(), options);
  return r;
}

inline GlaShape parse_shape(const std::string& text) {
  return GlaShape::from_args(ShapeArgs::parse(text, GlaShape::keys()));
}

}  // namespace overlap::gla::testing
