// Host side of the linrnn forward: variant names, what each variant supports, workspace
// layout, and the dispatch onto cuBLAS and the launchers.
#include "linrnn/linrnn_forward.hpp"

#include <cuda_runtime.h>

#include <climits>
#include <cstdint>

#include "common/cublas_gemm.hpp"
#include "core/error.hpp"
#include "linrnn/linrnn_launch.hpp"
#include "runtime/cuda_check.hpp"

namespace overlap::cuda {
namespace {

using linrnn::Variant;

std::size_t align256(std::size_t n) { return (n + 255) / 256 * 256; }

// The launchers' view of a call; problem_of({}, s) is the sizes alone.
linrnn_launch::Problem problem_of(const LinrnnDeviceArgs& a, const linrnn::LinrnnShape& s) {
  return {a.x, a.W, s.has_h0 ? a.h0 : nullptr, a.y, s.want_hT ? a.hT : nullptr, static_cast<int>(s.B),
          static_cast<int>(s.T), static_cast<int>(s.d), static_cast<int>(s.dv)};
}

// Workspace: [look-back (zeroed once)] [projection bf16 B*T x 3dv] [h fp32 B*T x dv]
// chunk_fused: [look-back (zeroed once)] [packed weight, used when none is given]
struct WorkspaceLayout {
  std::size_t lookback = 0, proj = 0, h = 0, packed = 0, bytes = 0;
};
WorkspaceLayout workspace_layout(Variant v, const linrnn::LinrnnShape& s) {
  const linrnn_launch::Problem p = problem_of({}, s);  // sizes only
  WorkspaceLayout l;
  const std::size_t rows = static_cast<std::size_t>(s.B * s.T);
  switch (v) {
    case Variant::FullFused: return l;
    case Variant::ChunkFused:
      l.lookback = align256(linrnn_launch::chunk_fused_lookback_bytes(p));
      l.packed = align256(linrnn_launch::packed_weight_bytes(p));
      l.bytes = l.lookback + l.packed;
      return l;
    case Variant::SemiFused:
    case Variant::ThreeKernel:
      l.lookback = align256(linrnn_launch::scan_lookback_bytes(p));
      l.proj = align256(rows * 3 * static_cast<std::size_t>(s.dv) * 2);
      l.h = v == Variant::ThreeKernel ? align256(rows * static_cast<std::size_t>(s.dv) * 4) : 0;
      l.bytes = l.lookback + l.proj + l.h;
      return l;
  }
  return l;
}

void check_launch(int code, Variant v, std::string_view what) {
  if (code != cudaSuccess)
    fail("linrnn_forward {}: {} failed: {}", linrnn_variant_name(v), what,
         cudaGetErrorString(static_cast<cudaError_t>(code)));
}

}  // namespace

std::size_t linrnn_packed_weight_bytes(const linrnn::LinrnnShape& s) {
  const linrnn_launch::Problem p = problem_of({}, s);  // sizes only
  return linrnn_launch::packed_weight_bytes(p);
}

void linrnn_pack_weight(const void* W, void* w_packed, const linrnn::LinrnnShape& s, CUstream_st* stream) {
  if (auto why = linrnn_cannot_implement(Variant::ChunkFused, s)) fail("linrnn_pack_weight: {}", *why);
  OVERLAP_REQUIRE(W && w_packed, "linrnn_pack_weight: W and w_packed must be device pointers");
  const linrnn_launch::Problem p = problem_of({.W = W}, s);
  check_launch(linrnn_launch::pack_weight(p, w_packed, stream), Variant::ChunkFused, "weight packing");
}

const std::vector<Variant>& all_linrnn_variants() {
  static const std::vector<Variant> all = {Variant::ThreeKernel, Variant::SemiFused, Variant::FullFused,
                                           Variant::ChunkFused};
  return all;
}

std::string linrnn_variant_name(Variant v) {
  switch (v) {
    case Variant::ThreeKernel: return "three_kernel";
    case Variant::SemiFused: return "semi_fused";
    case Variant::FullFused: return "full_fused";
    case Variant::ChunkFused: return "chunk_fused";
  }
  return "?";
}

Variant parse_linrnn_variant(std::string_view name) {
  std::string known;
  for (Variant v : all_linrnn_variants()) {
    if (linrnn_variant_name(v) == name) return v;
    known += (known.empty() ? "" : ", ") + linrnn_variant_name(v);
  }
  fail("linrnn: unknown variant '{}' (known: {})", name, known);
}

std::optional<std::string> linrnn_cannot_implement(Variant v, const linrnn::LinrnnShape& s) {
  const std::string name = linrnn_variant_name(v);
  if (s.B < 1 || s.T < 1 || s.d < 1 || s.dv < 1) return name + ": B, T, d and dv must be at least 1";
  // 16-byte rows: x, W and the projection are read in 8-element (16-byte) pieces.
  if (s.d % 8 != 0) return name + ": d = " + std::to_string(s.d) + " not supported (d must be a multiple of 8)";
  if (s.dv % 8 != 0) return name + ": dv = " + std::to_string(s.dv) + " not supported (dv must be a multiple of 8)";
  // 32-bit sizes inside the kernels and cuBLAS; tile ids are one grid dimension.
  if (s.B * s.T > INT_MAX / 4 || s.d > INT_MAX / 4 || s.dv > INT_MAX / 12)
    return name + ": sizes beyond 32-bit indexing (B*T = " + std::to_string(s.B * s.T) + ")";
  if (v == Variant::FullFused && s.B > 65535) return name + ": B = " + std::to_string(s.B) + " over the grid limit 65535";
  if (v == Variant::ChunkFused) {
    const linrnn_launch::Problem p = problem_of({}, s);
    if (const char* why = linrnn_launch::chunk_fused_check(p)) return why;
  }
  return std::nullopt;
}

bool linrnn_can_implement(Variant v, const linrnn::LinrnnShape& s) { return !linrnn_cannot_implement(v, s); }

std::size_t linrnn_workspace_bytes(Variant v, const linrnn::LinrnnShape& s) { return workspace_layout(v, s).bytes; }

void linrnn_forward(Variant v, const LinrnnDeviceArgs& a, const linrnn::LinrnnShape& s, CUstream_st* stream) {
  if (auto why = linrnn_cannot_implement(v, s)) fail("linrnn_forward: {}", *why);
  const std::string name = linrnn_variant_name(v);
  OVERLAP_REQUIRE(a.x && a.W && a.y, "linrnn_forward {}: x, W and y must be device pointers", name);
  OVERLAP_REQUIRE(!s.has_h0 || a.h0, "linrnn_forward {}: the shape says h0=1 but h0 is null", name);
  OVERLAP_REQUIRE(!s.want_hT || a.hT, "linrnn_forward {}: the shape says hT=1 but hT is null", name);
  const linrnn_launch::Problem p = problem_of(a, s);
  auto* cs = reinterpret_cast<cudaStream_t>(stream);
  if (v == Variant::FullFused) {
    check_launch(linrnn_launch::full_fused(p, stream), v, "kernel launch");
    return;
  }
  const WorkspaceLayout l = workspace_layout(v, s);
  void* ws = a.workspace;
  OVERLAP_REQUIRE(reinterpret_cast<std::uintptr_t>(ws) % 256 == 0,
                  "linrnn_forward: the workspace must be 256-byte aligned (its 64-bit look-back words and "
                  "16-byte projection loads rely on it)");
  if (!ws) {
    OVERLAP_CUDA_CHECK(cudaMallocAsync(&ws, l.bytes, cs));
    OVERLAP_CUDA_CHECK(cudaMemsetAsync(ws, 0, l.lookback, cs));
  }
  auto* base = static_cast<unsigned char*>(ws);
  int launched = cudaSuccess;
  if (v == Variant::ChunkFused) {
    const void* w_packed = a.w_packed;
    if (!w_packed) {
      void* scratch = base + l.lookback;
      launched = linrnn_launch::pack_weight(p, scratch, stream);
      w_packed = scratch;
    }
    if (launched == cudaSuccess) {
      if (const char* why = linrnn_launch::chunk_fused(p, w_packed, base, stream)) {
        if (!a.workspace) OVERLAP_CUDA_CHECK(cudaFreeAsync(ws, cs));
        fail("linrnn_forward {}: {}", name, why);
      }
    }
  } else {
    void* proj = base + l.lookback;
    RowMajorGemm g;
    g.M = s.B * s.T;
    g.N = 3 * s.dv;
    g.K = s.d;
    g.A = a.x;
    g.lda = s.d;
    g.B = a.W;
    g.ldb = 3 * s.dv;
    g.C = proj;
    g.ldc = 3 * s.dv;
    g.out = GemmOut::BF16;
    cublas_gemm_bf16(g, stream);
    if (v == Variant::SemiFused) {
      launched = linrnn_launch::scan_gate(p, proj, base, stream);
    } else {
      auto* h = reinterpret_cast<float*>(base + l.lookback + l.proj);
      launched = linrnn_launch::scan_only(p, proj, h, base, stream);
      if (launched == cudaSuccess) launched = linrnn_launch::gate_only(p, proj, h, stream);
    }
  }
  if (!a.workspace) OVERLAP_CUDA_CHECK(cudaFreeAsync(ws, cs));
  check_launch(launched, v, "kernel launch");
}

}  // namespace overlap::cuda
