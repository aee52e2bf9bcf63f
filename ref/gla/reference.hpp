#pragma once
// The gla forward function on plain arrays, in two implementations that must agree:
//   oracle()            float64, step by step from the recurrence (the definition);
//   chunked_reference() fp32, chunked with sub-chunk anchoring of the exponents, parallel
//                       (the algorithm the GPU kernels use).
// Arrays are row-major in the layout of gla/shape.hpp. q, k, v hold bf16 values already
// decoded to float (decoding is exact), so both functions see the very numbers the kernels see.
#include <span>

#include "gla/shape.hpp"

namespace overlap::gla {

struct GlaInputs {
  std::span<const float> q;   // [B,T,H,K]
  std::span<const float> k;   // [B,T,H,K]
  std::span<const float> v;   // [B,T,H,V]
  std::span<const float> g;   // [B,T,H,K], log forget gate, <= 0
  std::span<const float> h0;  // [B,H,K,V] when shape.has_h0, else empty
};

template <class T>
struct GlaOutputs {
  std::span<T> o;   // [B,T,H,V]
  std::span<T> hT;  // [B,H,K,V] when shape.want_hT, else empty
};

struct ChunkOptions {
  int chunk = 64;      // C: tokens per chunk (the state S_n is materialized every C tokens)
  int sub_chunk = 16;  // tokens per anchoring sub-chunk; must divide `chunk`
};

// Throws overlap::Error when a span's size does not match the shape (names tensor and sizes).
void check_sizes(const GlaShape& shape, const GlaInputs& in, std::size_t o_size, std::size_t hT_size);

void oracle(const GlaShape& shape, const GlaInputs& in, const GlaOutputs<double>& out);
void chunked_reference(const GlaShape& shape, const GlaInputs& in, const GlaOutputs<float>& out,
                       const ChunkOptions& options = {});

}  // namespace overlap::gla
