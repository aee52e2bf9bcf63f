#pragma once
// gla backward on Hopper (issue 18): the gradients of gla_forward (gla_forward.hpp) with
// respect to q, k, v, g and h0, from the gradients of o and hT. Host-includable without nvcc.
//
//   if (auto why = gla_backward_cannot_implement(variant, shape)) ...;   // or let it throw
//   gla_backward(variant, {q, k, v, g, h0, do, dhT, dq, dk, dv, dg, dh0}, shape, stream);
//
// Layout as the forward's (flash-linear-attention's chunk_gla): q, k, g, dq, dk, dg [B,T,H,K];
// v, do, dv [B,T,H,V]; h0, dhT, dh0 [B,H,K,V]. q, k, v, do, dq, dk, dv bf16; g, dg and the
// states fp32. The gradients match ref/gla's oracle_backward (ref/gla/reference.hpp).
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gla/gla_varlen.hpp"
#include "gla/shape.hpp"

struct CUstream_st;

namespace overlap::cuda {

// How the backward gets the chunk states S_n and their gradients dS_n:
//   materialized  three passes: a forward walk writes every S_n, a backward walk every dS_n
//                 (both bf16 in the workspace), and one CTA per chunk forms dq, dk, dv, dg from
//                 them (cuda/gla/gla_backward_common.cuh).
//   saved_states  S_n as the forward saved them (GlaDeviceArgs::states, bf16): the backward
//                 walk and the chunk pass only. The forward writes B H NT K V bf16 more; the
//                 backward skips a walk that reads k, v and g.
//   saved_states_ws  saved_states with the chunk pass warp-specialized: a persistent CTA an SM
//                 whose producer warpgroup loads the next chunk's inputs while eight warps work
//                 on this one (cuda/gla/gla_chunk_grad_ws_kernel.cuh), against saved_states'
//                 CTA a chunk that loads its own.
enum class GlaBackwardVariant { Materialized, SavedStates, SavedStatesWs };

// Whether the variant reads the S_n the forward saved (GlaBackwardArgs::states).
inline bool gla_backward_reads_saved_states(GlaBackwardVariant v) { return v != GlaBackwardVariant::Materialized; }

const std::vector<GlaBackwardVariant>& all_gla_backward_variants();
std::string gla_backward_variant_name(GlaBackwardVariant variant);
GlaBackwardVariant parse_gla_backward_variant(std::string_view name);  // throws on unknown names

struct GlaBackwardArgs {
  const void* q = nullptr;    // bf16 [B,T,H,K]
  const void* k = nullptr;    // bf16 [B,T,H,K]
  const void* v = nullptr;    // bf16 [B,T,H,V]
  const float* g = nullptr;   // fp32 [B,T,H,K], g <= 0 (the kernels' exponent bounds rely on it)
  const float* h0 = nullptr;  // fp32 [B,H,K,V]; required when shape.has_h0
  const void* do_ = nullptr;  // bf16 [B,T,H,V]
  const float* dhT = nullptr; // fp32 [B,H,K,V]; required when shape.want_hT (else hT had no gradient)
  void* dq = nullptr;         // bf16 [B,T,H,K]
  void* dk = nullptr;         // bf16 [B,T,H,K]
  void* dv = nullptr;         // bf16 [B,T,H,V]
  float* dg = nullptr;        // fp32 [B,T,H,K]
  float* dh0 = nullptr;       // fp32 [B,H,K,V] or null (not wanted)
  // bf16 [B,H,NT,K,V], NT = ceil(T/64): S_n entering every chunk as gla_forward saved them
  // (GlaDeviceArgs::states); read by the saved_states variants (required there), unused by
  // materialized.
  const void* states = nullptr;
  // Scratch of gla_backward_workspace_bytes; null: allocated on the stream. q, k, v, g, do,
  // states and the workspace must be 16-byte aligned (the kernels copy 16-byte pieces).
  void* workspace = nullptr;
  // A variable-length batch (gla_varlen.hpp): shape.B = 1, h0, dhT, dh0 one per sequence, the
  // states in gla_varlen_states_shape's layout; the workspace is
  // gla_backward_workspace_bytes(variant, shape, num_seqs).
  GlaVarlen varlen;
};

std::optional<std::string> gla_backward_cannot_implement(GlaBackwardVariant variant, const gla::GlaShape& shape);
// num_seqs: 0 for a dense batch, else the sequences of a variable-length one.
std::size_t gla_backward_workspace_bytes(GlaBackwardVariant variant, const gla::GlaShape& shape, int num_seqs = 0);

// Enqueues the backward on `stream`. Throws overlap::Error on a shape the variant cannot run, a
// null required pointer, or a CUDA launch error.
void gla_backward(GlaBackwardVariant variant, const GlaBackwardArgs& args, const gla::GlaShape& shape,
                  CUstream_st* stream);

}  // namespace overlap::cuda
