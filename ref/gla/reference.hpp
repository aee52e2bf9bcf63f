#pragma once
// The gla forward function on plain arrays, in two implementations that must agree:
//   oracle()            float64, step by step from the recurrence (the definition);
//   chunked_reference() fp32, chunked with sub-chunk anchoring of the exponents, parallel
//                       (the algorithm the GPU kernels use);
// and the gradients of the forward in two implementations that must agree:
//   oracle_backward()            float64, the recurrence run backwards;
//   chunked_reference_backward() fp32, chunk by chunk (the form a chunked backward kernel takes).
// Arrays are row-major in the layout of gla/shape.hpp. q, k, v hold bf16 values already
// decoded to float (decoding is exact), so both functions see the very numbers the kernels see.
#include <cstdint>
#include <span>
#include <string_view>

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
void check_size(std::string_view what, const char* name, std::size_t have, std::int64_t want);
void check_sizes(const GlaShape& shape, const GlaInputs& in, std::size_t o_size, std::size_t hT_size);

void oracle(const GlaShape& shape, const GlaInputs& in, const GlaOutputs<double>& out);

// The gradients flowing into the forward's outputs: of a loss L, dL/do and dL/dhT.
struct GlaOutputGrads {
  std::span<const float> do_;  // [B,T,H,V]
  std::span<const float> dhT;  // [B,H,K,V] when shape.want_hT, else empty
};

// dL/d(every input): each has its input's layout.
template <class T>
struct GlaInputGrads {
  std::span<T> dq, dk, dg;  // [B,T,H,K]
  std::span<T> dv;          // [B,T,H,V]
  std::span<T> dh0;         // [B,H,K,V] when shape.has_h0, else empty
};

// The backward's arrays: the inputs, do and dhT, and the gradients' sizes.
void check_backward_sizes(const GlaShape& shape, const GlaInputs& in, const GlaOutputGrads& grads, std::size_t dq,
                          std::size_t dk, std::size_t dg, std::size_t dv, std::size_t dh0);

// Reverse mode through S_t = diag(exp(g_t)) S_{t-1} + k_t v_t^T, o_t = s S_t^T q_t, in float64,
// per (batch, head): with dS carrying dL/dS_t backwards from dhT,
//   dq_t = s S_t do_t;  dS += s q_t do_t^T;  dk_t = dS v_t;  dv_t = dS^T k_t;
//   dg_t = exp(g_t) * rowsum(dS * S_{t-1});  dS = diag(exp(g_t)) dS;  dh0 = dS at the end.
// S_{t-1} is recomputed forward from states kept every `checkpoint` tokens, by the forward's own
// step (gla/oracle_step.hpp): exactly the values the forward produced. Throws on a size
// mismatch, naming the array.
void oracle_backward(const GlaShape& shape, const GlaInputs& in, const GlaOutputGrads& grads,
                     const GlaInputGrads<double>& out, int checkpoint = 64);

// The same gradients in fp32, chunk by chunk (chunked_backward.cpp says how); `options.chunk`
// tokens a chunk (sub_chunk is not used: every decay is formed from a difference of cumulative
// log-gates, never split). Throws as oracle_backward does.
void chunked_reference_backward(const GlaShape& shape, const GlaInputs& in, const GlaOutputGrads& grads,
                                const GlaInputGrads<float>& out, const ChunkOptions& options = {});
void chunked_reference(const GlaShape& shape, const GlaInputs& in, const GlaOutputs<float>& out,
                       const ChunkOptions& options = {});

// Variable-length batches (flash-linear-attention's `cu_seqlens`): `packed` has B = 1 and T the
// total length; the N = cu_seqlens.size() - 1 sequences are rows [cu[n], cu[n+1]) of q, k, v, g,
// do, o, dq, ... (lengths of 0 included), each with its own state: h0, hT, dhT, dh0 are
// [N, H, K, V]. Every sequence is computed as if alone (the state never crosses a boundary).
// Throws on a cu_seqlens that does not start at 0, decreases, or does not end at T, and on
// sizes that do not match, naming the array.
void oracle_varlen(const GlaShape& packed, std::span<const std::int32_t> cu_seqlens, const GlaInputs& in,
                   const GlaOutputs<double>& out);
void chunked_reference_varlen(const GlaShape& packed, std::span<const std::int32_t> cu_seqlens, const GlaInputs& in,
                              const GlaOutputs<float>& out, const ChunkOptions& options = {});
void oracle_backward_varlen(const GlaShape& packed, std::span<const std::int32_t> cu_seqlens, const GlaInputs& in,
                            const GlaOutputGrads& grads, const GlaInputGrads<double>& out);
void chunked_reference_backward_varlen(const GlaShape& packed, std::span<const std::int32_t> cu_seqlens,
                                       const GlaInputs& in, const GlaOutputGrads& grads,
                                       const GlaInputGrads<float>& out, const ChunkOptions& options = {});

}  // namespace overlap::gla
