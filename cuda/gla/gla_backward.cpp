// Host side of the gla backward: what it supports, its workspace, and the three passes
// (gla_backward.hpp, gla_backward_common.cuh).
#include "gla/gla_backward.hpp"

#include <cuda_runtime.h>

#include <climits>

#include "common/alignment.hpp"
#include "core/error.hpp"
#include "gla/gla_backward_launch.hpp"
#include "gla/gla_backward_tiling.hpp"
#include "gla/gla_forward.hpp"

namespace overlap::cuda {
namespace {

// The backward reads S_n per chunk in the layout the forward saves them in.
static_assert(gla_backward_kernel::kChunk == kGlaStateChunk, "the backward's chunk is the saved states' chunk");

// The workspace: dS_n for every chunk, bf16, and before it S_n (materialized only), each
// 256-byte aligned; after them a variable-length batch's plan.
struct WorkspaceLayout {
  std::size_t states = 0, dstates = 0, plan = 0, bytes = 0;
  WorkspaceLayout(GlaBackwardVariant v, const gla::GlaShape& s, int num_seqs) {
    const auto align = [](std::size_t x) { return (x + 255) / 256 * 256; };
    const Shape shape = num_seqs > 0 ? gla_varlen_states_shape(s, num_seqs) : gla_saved_states_shape(s);
    const std::size_t state_array = align(static_cast<std::size_t>(shape_numel(shape)) * 2);
    dstates = v == GlaBackwardVariant::Materialized ? state_array : 0;
    plan = dstates + state_array;
    bytes = plan + (num_seqs > 0 ? gla_varlen_plan_bytes(s, num_seqs) : 0);
  }
};

void check_cuda(int code, std::string_view what, GlaBackwardVariant v) {
  if (code != cudaSuccess)
    fail("gla_backward {}: {} failed: {}", gla_backward_variant_name(v), what,
         cudaGetErrorString(static_cast<cudaError_t>(code)));
}

}  // namespace

const std::vector<GlaBackwardVariant>& all_gla_backward_variants() {
  static const std::vector<GlaBackwardVariant> all = {
      GlaBackwardVariant::Materialized, GlaBackwardVariant::SavedStates, GlaBackwardVariant::SavedStatesWs};
  return all;
}

std::string gla_backward_variant_name(GlaBackwardVariant v) {
  switch (v) {
    case GlaBackwardVariant::Materialized: return "materialized";
    case GlaBackwardVariant::SavedStates: return "saved_states";
    case GlaBackwardVariant::SavedStatesWs: return "saved_states_ws";
  }
  fail("gla backward: unknown variant {}", static_cast<int>(v));
}

GlaBackwardVariant parse_gla_backward_variant(std::string_view name) {
  std::string known;
  for (GlaBackwardVariant v : all_gla_backward_variants()) {
    if (gla_backward_variant_name(v) == name) return v;
    known += (known.empty() ? "" : ", ") + gla_backward_variant_name(v);
  }
  fail("gla backward: unknown variant '{}' (known: {})", name, known);
}

std::optional<std::string> gla_backward_cannot_implement(GlaBackwardVariant v, const gla::GlaShape& s) {
  const std::string name = "gla backward " + gla_backward_variant_name(v);
  if (s.K != 64 && s.K != 128) return name + ": K = " + std::to_string(s.K) + " not supported (K must be 64 or 128)";
  // One CTA holds a chunk's whole V (dq and dk sum over it): 64 or 128 columns fit its shared memory.
  if (s.V != 64 && s.V != 128) return name + ": V = " + std::to_string(s.V) + " not supported (V must be 64 or 128)";
  if (s.B < 1 || s.T < 1 || s.H < 1) return name + ": B, T, H must be at least 1";
  if (s.H > 65535 || s.B > 65535) return name + ": H and B must be at most 65535 (grid limits)";
  if (s.T > INT_MAX / 2) return name + ": T = " + std::to_string(s.T) + " too large (at most 2^30 - 1)";
  return std::nullopt;
}

std::size_t gla_backward_workspace_bytes(GlaBackwardVariant v, const gla::GlaShape& s, int num_seqs) {
  return WorkspaceLayout(v, s, num_seqs).bytes;
}

void gla_backward(GlaBackwardVariant v, const GlaBackwardArgs& a, const gla::GlaShape& s, CUstream_st* stream) {
  if (auto why = gla_backward_cannot_implement(v, s)) fail("gla_backward: {}", *why);
  const std::string name = gla_backward_variant_name(v);
  OVERLAP_REQUIRE(a.q && a.k && a.v && a.g && a.do_ && a.dq && a.dk && a.dv && a.dg,
                  "gla_backward {}: q, k, v, g, do, dq, dk, dv and dg must be device pointers", name);
  OVERLAP_REQUIRE(!s.has_h0 || a.h0, "gla_backward {}: the shape says h0=1 but h0 is null", name);
  // cp.async moves 16-byte pieces: every tensor it reads must start on a 16-byte boundary.
  const bool saved = gla_backward_reads_saved_states(v);
  OVERLAP_REQUIRE(!saved || a.states,
                  "gla_backward {}: states (the forward's saved S_n, GlaDeviceArgs::states) must be a device pointer",
                  name);
  const std::string who = "gla_backward " + name;
  for (const auto& [what, ptr] : {std::pair<const char*, const void*>{"q", a.q}, {"k", a.k}, {"v", a.v}, {"g", a.g},
                                  {"do", a.do_}, {"states", saved ? a.states : nullptr},
                                  {"workspace", a.workspace}})
    require_aligned(who, what, ptr, 16);
  OVERLAP_REQUIRE(!s.want_hT || a.dhT, "gla_backward {}: the shape says hT=1 but dhT is null", name);
  const bool varlen = a.varlen.active();
  if (varlen) {
    require_varlen_batch(who, s, a.varlen);
    OVERLAP_REQUIRE(a.varlen.num_seqs <= 65535, "gla_backward {}: num_seqs = {} over the grid limit 65535", name,
                    a.varlen.num_seqs);
    OVERLAP_REQUIRE(gla_varlen_max_chunks(s, a.varlen.num_seqs) * s.H <= INT_MAX,
                    "gla_backward {}: T = {} with {} sequences: too many chunks", name, s.T, a.varlen.num_seqs);
  }
  const WorkspaceLayout ws(v, s, varlen ? a.varlen.num_seqs : 0);
  auto* cs = reinterpret_cast<cudaStream_t>(stream);
  void* scratch = a.workspace;
  if (!scratch) check_cuda(cudaMallocAsync(&scratch, ws.bytes, cs), "workspace allocation", v);
  auto* base = static_cast<unsigned char*>(scratch);

  gla_backward_launch::Problem p{};
  p.q = a.q;
  p.k = a.k;
  p.v = a.v;
  p.g = a.g;
  p.do_ = a.do_;
  p.h0 = s.has_h0 ? a.h0 : nullptr;
  p.dhT = s.want_hT ? a.dhT : nullptr;
  // saved_states only reads S_n (the walk that would write them does not run).
  p.states = saved ? const_cast<void*>(a.states) : base + ws.states;
  p.dstates = base + ws.dstates;
  p.dq = a.dq;
  p.dk = a.dk;
  p.dv = a.dv;
  p.dg = a.dg;
  p.dh0 = s.has_h0 ? a.dh0 : nullptr;
  p.B = static_cast<int>(s.B);
  p.T = static_cast<int>(s.T);
  p.H = static_cast<int>(s.H);
  p.K = static_cast<int>(s.K);
  p.V = static_cast<int>(s.V);
  p.scale = static_cast<float>(s.scale_or_default());

  int launched = cudaSuccess;
  if (varlen) {
    p.max_chunks = static_cast<int>(gla_varlen_max_chunks(s, a.varlen.num_seqs));
    launched = gla_varlen_plan(&p.varlen, a.varlen.cu_seqlens, a.varlen.num_seqs, p.T, base + ws.plan, stream);
  }
  if (launched == cudaSuccess && !saved) launched = gla_backward_launch::states(p, stream);
  if (launched == cudaSuccess) launched = gla_backward_launch::state_grads(p, stream);
  if (launched == cudaSuccess)
    launched = v == GlaBackwardVariant::SavedStatesWs ? gla_backward_launch::chunk_grads_ws(p, stream)
                                                      : gla_backward_launch::chunk_grads(p, stream);
  if (!a.workspace) check_cuda(cudaFreeAsync(scratch, cs), "workspace release", v);
  check_cuda(launched, "kernel launch", v);
}

}  // namespace overlap::cuda
