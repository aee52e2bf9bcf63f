// Host side of the gla forward: variant names, what each variant supports, the default choice,
// and the dispatch onto the launchers in gla_launch.cu.
#include "gla/gla_forward.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>

#include "common/alignment.hpp"
#include "core/error.hpp"
#include "gla/gla_launch.hpp"

namespace overlap::cuda {
namespace {

using gla::Schedule;
using gla::StateCarry;

std::string_view schedule_name(Schedule s) {
  switch (s) {
    case Schedule::Sequential: return "sequential";
    case Schedule::Pipelined: return "pipelined";
    case Schedule::Pingpong: return "pingpong";
  }
  return "?";
}

std::string_view carry_name(StateCarry c) { return c == StateCarry::Fused ? "fused" : "materialized"; }

std::int64_t num_chunks(const gla::GlaShape& s, const gla::Tiling& t) { return (s.T + t.chunk - 1) / t.chunk; }

void check_cuda(int code, std::string_view what, GlaVariant v) {
  if (code != cudaSuccess)
    fail("gla_forward {}: {} failed: {}", gla_variant_name(v), what,
         cudaGetErrorString(static_cast<cudaError_t>(code)));
}

// A variable-length batch: the plan (in the caller's workspace or one of our own), then the
// pingpong_fused kernel over it.
void forward_varlen(GlaVariant v, const GlaDeviceArgs& a, const gla::GlaShape& s, gla_launch::Problem& p,
                    const GlaLaunchOptions& options, CUstream_st* stream) {
  const GlaVariant pingpong{Schedule::Pingpong, StateCarry::Fused};
  OVERLAP_REQUIRE(v == pingpong, "gla_forward {}: variable-length batches (cu_seqlens) run on pingpong_fused only",
                  gla_variant_name(v));
  const std::string who = "gla_forward " + gla_variant_name(v);
  require_varlen_batch(who, s, a.varlen);
  require_aligned(who, "workspace", a.workspace, 4);  // the plan's int arrays
  const int n = a.varlen.num_seqs;
  OVERLAP_REQUIRE(options.pingpong_segments <= 1,
                  "gla_forward {}: pingpong_segments = {}: a variable-length batch walks each sequence in one CTA",
                  gla_variant_name(v), options.pingpong_segments);
  OVERLAP_REQUIRE(static_cast<std::int64_t>(n) * s.H * (s.V / 64) <= INT_MAX,
                  "gla_forward {}: num_seqs * H * V/64 too large ({} sequences)", gla_variant_name(v), n);
  auto* cs = reinterpret_cast<cudaStream_t>(stream);
  void* scratch = a.workspace;
  const bool own = !scratch;
  if (own) check_cuda(cudaMallocAsync(&scratch, gla_varlen_plan_bytes(s, n), cs), "plan allocation", v);
  int launched = gla_varlen_plan(&p.varlen, a.varlen.cu_seqlens, n, p.T, scratch, stream);
  p.states = a.states;
  if (launched == cudaSuccess) launched = gla_launch::pingpong_fused(p, stream);
  if (own) check_cuda(cudaFreeAsync(scratch, cs), "plan release", v);
  check_cuda(launched, "variable-length kernel launch", v);
}

}  // namespace

const std::vector<GlaVariant>& all_gla_variants() {
  static const std::vector<GlaVariant> all = {
      {Schedule::Sequential, StateCarry::Fused},   {Schedule::Sequential, StateCarry::Materialized},
      {Schedule::Pipelined, StateCarry::Fused},    {Schedule::Pipelined, StateCarry::Materialized},
      {Schedule::Pingpong, StateCarry::Fused},     {Schedule::Pingpong, StateCarry::Materialized},
  };
  return all;
}

std::string gla_variant_name(GlaVariant v) {
  return std::string(schedule_name(v.schedule)) + "_" + std::string(carry_name(v.carry));
}

GlaVariant parse_gla_variant(std::string_view name) {
  std::string known;
  for (const GlaVariant& v : all_gla_variants()) {
    if (gla_variant_name(v) == name) return v;
    known += (known.empty() ? "" : ", ") + gla_variant_name(v);
  }
  fail("gla: unknown variant '{}' (known: {})", name, known);
}

std::optional<std::string> gla_cannot_implement(GlaVariant v, const gla::GlaShape& s) {
  const std::string name = gla_variant_name(v);
  if (s.K != 64 && s.K != 128) return name + ": K = " + std::to_string(s.K) + " not supported (K must be 64 or 128)";
  // Every kernel takes V in 64-column blocks (the pingpong fused carry in 64 or 128).
  if (s.V % 64 != 0 || s.V > 256)
    return name + ": V = " + std::to_string(s.V) + " not supported (V must be 64, 128, 192 or 256)";
  if (s.B < 1 || s.T < 1 || s.H < 1) return name + ": B, T, H must be at least 1";
  if (s.H > 65535 || s.B > 65535) return name + ": H and B must be at most 65535 (grid limits)";
  if (s.T > INT_MAX / 2) return name + ": T = " + std::to_string(s.T) + " too large (at most 2^30)";
  if (v.schedule == Schedule::Pingpong) {
    // TMA, wgmma and setmaxnreg: sm_90a only (the library is built for nothing else, but a
    // caller on another GPU gets a reason rather than a launch failure).
    int device = 0, major = 0, minor = 0;
    if (cudaGetDevice(&device) == cudaSuccess &&
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) == cudaSuccess &&
        (major != 9 || minor != 0))
      return name + ": needs an sm_90 GPU (TMA, wgmma, setmaxnreg); this one is sm_" + std::to_string(major) +
             std::to_string(minor);
    // One (b, h, v-block) slice per consumer warpgroup: at most 2^31 work units.
    if (s.B * s.H * (s.V / 64) * ((s.T + 63) / 64) > INT_MAX) return name + ": B * H * V/64 * T/64 too large";
  }
  return std::nullopt;
}

bool gla_can_implement(GlaVariant v, const gla::GlaShape& s) { return !gla_cannot_implement(v, s); }

std::size_t gla_workspace_bytes(GlaVariant v, const gla::GlaShape& s) {
  if (v.carry == StateCarry::Fused) return 0;
  const gla::Tiling t = gla::tiling_for(v.schedule, v.carry, static_cast<int>(s.K), static_cast<int>(s.V));
  return static_cast<std::size_t>(s.B * s.H * num_chunks(s, t) * s.K * s.V) * 2;  // bf16 S_n
}

GlaVariant default_gla_variant(const gla::GlaShape& s) {
  // pingpong_fused measured fastest at every benchmark shape, 1.4-4.7x the next variant
  // (docs/results/gla_h100.md). Where it cannot run (no sm_90 GPU), the mma.sync kernels: the
  // fused pass fills the GPU only with enough (b, h, v-block) slices, and below that the
  // materialized carry's chunk-parallel output kernel wins.
  const GlaVariant pingpong{Schedule::Pingpong, StateCarry::Fused};
  if (gla_can_implement(pingpong, s)) return pingpong;
  const std::int64_t slices = s.B * s.H * (s.V / 64);
  if (slices >= 96) return {Schedule::Pipelined, StateCarry::Fused};
  return {Schedule::Pipelined, StateCarry::Materialized};
}

void gla_forward(GlaVariant v, const GlaDeviceArgs& a, const gla::GlaShape& s, CUstream_st* stream,
                 const GlaLaunchOptions& options) {
  if (auto why = gla_cannot_implement(v, s)) fail("gla_forward: {}", *why);
  OVERLAP_REQUIRE(options.pingpong_units_per_cta >= 0 && options.pingpong_units_per_cta <= 2,
                  "gla_forward {}: pingpong_units_per_cta must be 0 (by shape), 1 or 2, not {}",
                  gla_variant_name(v), options.pingpong_units_per_cta);
  OVERLAP_REQUIRE(options.pingpong_block_v == 0 || options.pingpong_block_v == 64 ||
                      (options.pingpong_block_v == 128 && s.V % 128 == 0),
                  "gla_forward {}: pingpong_block_v must be 0 (by shape), 64, or 128 where V (= {}) is a multiple "
                  "of 128, not {}",
                  gla_variant_name(v), s.V, options.pingpong_block_v);
  OVERLAP_REQUIRE(options.pingpong_segments >= 0 && options.pingpong_segments <= gla::PingpongFusedSegments::kMax,
                  "gla_forward {}: pingpong_segments must be 0 (by shape) or 1 to {}, not {}", gla_variant_name(v),
                  gla::PingpongFusedSegments::kMax, options.pingpong_segments);
  OVERLAP_REQUIRE(a.q && a.k && a.v && a.g && a.o, "gla_forward {}: q, k, v, g and o must be device pointers",
                  gla_variant_name(v));
  OVERLAP_REQUIRE(!s.has_h0 || a.h0, "gla_forward {}: the shape says h0=1 but h0 is null", gla_variant_name(v));
  OVERLAP_REQUIRE(!s.want_hT || a.hT, "gla_forward {}: the shape says hT=1 but hT is null", gla_variant_name(v));
  const gla::Tiling t = gla::tiling_for(v.schedule, v.carry, static_cast<int>(s.K), static_cast<int>(s.V));
  gla_launch::Problem p{};
  p.q = a.q;
  p.k = a.k;
  p.v = a.v;
  p.g = a.g;
  p.h0 = s.has_h0 ? a.h0 : nullptr;
  p.hT = s.want_hT ? a.hT : nullptr;
  p.o = a.o;
  p.B = static_cast<int>(s.B);
  p.T = static_cast<int>(s.T);
  p.H = static_cast<int>(s.H);
  p.K = static_cast<int>(s.K);
  p.V = static_cast<int>(s.V);
  p.scale = static_cast<float>(s.scale_or_default());
  p.units_per_cta = options.pingpong_units_per_cta;
  p.block_v = options.pingpong_block_v;
  p.segments = options.pingpong_segments;
  require_aligned("gla_forward " + gla_variant_name(v), "states", a.states, 16);
  auto* cs = reinterpret_cast<cudaStream_t>(stream);
  if (a.varlen.active()) {
    forward_varlen(v, a, s, p, options, stream);
    return;
  }
  if (v.carry == StateCarry::Fused) {
    p.states = a.states;
    check_cuda(v.schedule == Schedule::Pingpong ? gla_launch::pingpong_fused(p, stream)
                                                : gla_launch::fused(p, t.stages, stream),
               "fused kernel launch", v);
    return;
  }
  // The materialized carry's states are the saved states: written where the caller wants them.
  void* scratch = a.states ? a.states : a.workspace;
  const bool own = !scratch;
  if (own) check_cuda(cudaMallocAsync(&scratch, gla_workspace_bytes(v, s), cs), "workspace allocation", v);
  p.states = scratch;
  const int launched = v.schedule == Schedule::Pingpong
                           ? gla_launch::pingpong_materialized(p, t.chunks_per_cta, stream)
                           : gla_launch::materialized(p, t.stages, t.chunks_per_cta, stream);
  if (own) check_cuda(cudaFreeAsync(scratch, cs), "workspace release", v);
  check_cuda(launched, "materialized kernels launch", v);
}

}  // namespace overlap::cuda
