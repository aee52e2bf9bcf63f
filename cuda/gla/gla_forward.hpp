#pragma once
// gla forward on Hopper (SPEC section 1): the entry point other code calls with device
// pointers. Host-includable without nvcc; the kernels live in gla_launch.cu.
//
//   GlaVariant v = default_gla_variant(shape);
//   if (auto why = gla_cannot_implement(v, shape)) ...;      // or let gla_forward throw
//   gla_forward(v, {q, k, v, g, h0, o, hT}, shape, stream);
//
// Layout is flash-linear-attention's chunk_gla: q, k, g [B,T,H,K]; v, o [B,T,H,V] (q, k, v, o
// bf16, g fp32); h0, hT [B,H,K,V] fp32 (either may be null). shape.scale is s in
// o_t = s S_t^T q_t (GlaShape::from_args sets K^-1/2).
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gla/gla_tiling.hpp"
#include "gla/gla_varlen.hpp"
#include "gla/shape.hpp"

struct CUstream_st;  // cudaStream_t without the CUDA headers

namespace overlap::cuda {

// The six combinations of schedule x state carry (names fixed; the simulator uses the same).
struct GlaVariant {
  gla::Schedule schedule;
  gla::StateCarry carry;
  friend bool operator==(const GlaVariant&, const GlaVariant&) = default;
};

const std::vector<GlaVariant>& all_gla_variants();
std::string gla_variant_name(GlaVariant variant);     // "pipelined_fused", ...
GlaVariant parse_gla_variant(std::string_view name);  // throws overlap::Error on unknown names

// GlaDeviceArgs::states (bf16): S_n entering each 64-step chunk, [B, H, ceil(T/64), K, V].
constexpr std::int64_t kGlaStateChunk = 64;
inline Shape gla_saved_states_shape(const gla::GlaShape& s) {
  return {s.B, s.H, (s.T + kGlaStateChunk - 1) / kGlaStateChunk, s.K, s.V};
}

struct GlaDeviceArgs {
  const void* q = nullptr;   // bf16 [B,T,H,K]
  const void* k = nullptr;   // bf16 [B,T,H,K]
  const void* v = nullptr;   // bf16 [B,T,H,V]
  const float* g = nullptr;  // fp32 [B,T,H,K], g <= 0
  const float* h0 = nullptr; // fp32 [B,H,K,V] or null (zero initial state)
  void* o = nullptr;         // bf16 [B,T,H,V]
  float* hT = nullptr;       // fp32 [B,H,K,V] or null
  // Scratch for the materialized carry (gla_workspace_bytes); null: allocated on the stream.
  void* workspace = nullptr;
  // Optional, bf16 gla_saved_states_shape, 16-byte aligned: where given, the forward
  // also writes S_n, the state entering every 64-step chunk, which gla_backward's saved_states
  // variant reads instead of walking the chunks again (gla_backward.hpp). Every variant can;
  // the materialized carry then keeps its states here and needs no workspace.
  void* states = nullptr;
  // A variable-length batch (gla_varlen.hpp; pingpong_fused only): shape.B = 1, h0 and hT one per
  // sequence, states in gla_varlen_states_shape's layout, and the workspace (optional) at least
  // gla_varlen_plan_bytes(shape, num_seqs).
  GlaVarlen varlen;
};

// Why `variant` cannot run `shape` (K, V, size limits), or nullopt when it can.
std::optional<std::string> gla_cannot_implement(GlaVariant variant, const gla::GlaShape& shape);
bool gla_can_implement(GlaVariant variant, const gla::GlaShape& shape);
// Device scratch gla_forward needs for this variant and shape (0 for fused carry).
std::size_t gla_workspace_bytes(GlaVariant variant, const gla::GlaShape& shape);
// The variant the library runs when the caller does not choose: the fastest measured at
// shapes like this one (docs/results/gla_h100.md) among those that can run it.
GlaVariant default_gla_variant(const gla::GlaShape& shape);

// Launch choices the library otherwise makes by shape (gla_tiling.hpp); a caller forces one
// to run a path the shape would not pick (the GPU tests cover every path this way).
struct GlaLaunchOptions {
  // Pingpong, materialized carry: work units per CTA, 1 or 2; 0 = gla::pingpong_units_per_cta.
  int pingpong_units_per_cta = 0;
  // Pingpong, fused carry: V columns per CTA, 64 or 128 (V a multiple of it); 0 =
  // gla::pingpong_fused_block_v (by the head count and the GPU's SMs).
  int pingpong_block_v = 0;
  // Pingpong, fused carry: CTAs per (b, h, v-block) along T, 1 to 8 (fewer where the sequence
  // has fewer 64-step chunks); 0 = gla::PingpongFusedSegments::count_for (by the CTA count, the
  // GPU's SMs and T).
  int pingpong_segments = 0;
};

// Enqueues the forward pass on `stream`. Throws overlap::Error on a shape the variant cannot
// run, a null required pointer, an invalid option, or a CUDA launch error.
void gla_forward(GlaVariant variant, const GlaDeviceArgs& args, const gla::GlaShape& shape,
                 CUstream_st* stream, const GlaLaunchOptions& options = {});

}  // namespace overlap::cuda
