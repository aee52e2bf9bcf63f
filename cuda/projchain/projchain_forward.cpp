// Host side of projchain: variant names, what each variant supports, weight packing, and the
// dispatch onto cuBLAS (unfused, wide_gemm), the activation kernels and the fused CUTLASS GEMM.
#include "projchain/projchain_forward.hpp"

#include <cuda_runtime.h>

#include <climits>

#include "common/cublas_gemm.hpp"
#include "core/error.hpp"
#include "projchain/projchain_launch.hpp"
#include "runtime/cuda_check.hpp"

namespace overlap::cuda {
namespace {

using projchain::Variant;
namespace launch = projchain_launch;

constexpr std::size_t kWorkspaceAlign = 256;

std::size_t align_up(std::size_t bytes) { return (bytes + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign; }

std::size_t wide_output_bytes(const ProjchainShape& s) {
  return static_cast<std::size_t>(s.N() * packed_weight_ld(s)) * 2;
}

void check_launch(const char* error, std::string_view what, Variant v) {
  if (error) fail("projchain_forward {}: {} failed: {}", projchain_variant_name(v), what, error);
}

// The fused GEMM's problem; its tile order comes from projchain_tiling.hpp, as its tiling does,
// unless the caller names one (benchmark comparisons).
launch::FusedProblem fused_problem(const ProjchainDeviceArgs& a, const void* w_packed, const ProjchainShape& s) {
  launch::FusedProblem p{a.x, w_packed, a.q, a.k, a.v, a.g, a.alpha, s.N(), s.d, packed_weight_ld(s),
                         static_cast<int>(s.H), static_cast<int>(s.dk)};
  p.strip_n = a.fused_strip_n > 0 ? a.fused_strip_n : projchain::fused_strip_n(s.N(), s.d, s.wide_width());
  return p;
}

// The slice of a row-major [rows, ld] bf16 matrix starting at column `col`.
const void* column(const void* base, std::int64_t col) { return static_cast<const char*>(base) + col * 2; }

void gemm(const void* x, const void* w, std::int64_t ldw, void* out, std::int64_t ldo, std::int64_t width,
          const ProjchainShape& s, CUstream_st* stream) {
  RowMajorGemm g;
  g.M = s.N();
  g.N = width;
  g.K = s.d;
  g.A = x;
  g.lda = s.d;
  g.B = w;
  g.ldb = ldw;
  g.C = out;
  g.ldc = ldo;
  cublas_gemm_bf16(g, stream);
}

// unfused: five GEMMs straight into the outputs, then three activation kernels in place.
void run_unfused(const ProjchainDeviceArgs& a, const ProjchainShape& s, CUstream_st* stream) {
  const std::int64_t HD = s.heads_width(), N = s.N();
  gemm(a.x, a.w_q, HD, a.q, HD, HD, s, stream);
  gemm(a.x, a.w_k, HD, a.k, HD, HD, s, stream);
  gemm(a.x, a.w_v, HD, a.v, HD, HD, s, stream);
  gemm(a.x, a.w_g, HD, a.g, HD, HD, s, stream);
  gemm(a.x, a.w_alpha, s.H, a.alpha, s.H, s.H, s, stream);
  const int dk = static_cast<int>(s.dk);
  check_launch(launch::l2norm_heads({a.k, HD, a.k, HD, N, HD}, dk, stream), "l2norm kernel", Variant::Unfused);
  check_launch(launch::silu({a.g, HD, a.g, HD, N, HD}, stream), "silu kernel", Variant::Unfused);
  check_launch(launch::sigmoid({a.alpha, s.H, a.alpha, s.H, N, s.H}, stream), "sigmoid kernel", Variant::Unfused);
}

// wide_gemm: one cuBLAS GEMM into a [N, ldw] intermediate, then q and v copied out of it
// (strided 2-D copies: the outputs are separate tensors) and three activation kernels reading
// their slices of it. The intermediate's HBM round trip is what epilogue_fused removes.
void run_wide_gemm(const ProjchainDeviceArgs& a, const void* w_packed, void* wide_out, const ProjchainShape& s,
                   CUstream_st* stream) {
  const std::int64_t HD = s.heads_width(), N = s.N(), ld = packed_weight_ld(s);
  gemm(a.x, w_packed, ld, wide_out, ld, s.wide_width(), s, stream);
  auto* cs = reinterpret_cast<cudaStream_t>(stream);
  const auto row_bytes = static_cast<std::size_t>(HD) * 2, pitch = static_cast<std::size_t>(ld) * 2;
  OVERLAP_CUDA_CHECK(cudaMemcpy2DAsync(a.q, row_bytes, wide_out, pitch, row_bytes, N, cudaMemcpyDeviceToDevice, cs));
  OVERLAP_CUDA_CHECK(cudaMemcpy2DAsync(a.v, row_bytes, column(wide_out, 2 * HD), pitch, row_bytes, N,
                                       cudaMemcpyDeviceToDevice, cs));
  const int dk = static_cast<int>(s.dk);
  check_launch(launch::l2norm_heads({column(wide_out, HD), ld, a.k, HD, N, HD}, dk, stream), "l2norm kernel",
               Variant::WideGemm);
  check_launch(launch::silu({column(wide_out, 3 * HD), ld, a.g, HD, N, HD}, stream), "silu kernel",
               Variant::WideGemm);
  check_launch(launch::sigmoid({column(wide_out, 4 * HD), ld, a.alpha, s.H, N, s.H}, stream), "sigmoid kernel",
               Variant::WideGemm);
}

bool fits_int(std::int64_t v) { return v >= 0 && v <= INT_MAX; }

}  // namespace

const std::vector<ProjchainVariant>& all_projchain_variants() {
  static const std::vector<ProjchainVariant> all = {Variant::Unfused, Variant::WideGemm, Variant::EpilogueFused,
                                                    Variant::ClusterFused};
  return all;
}

std::string projchain_variant_name(ProjchainVariant v) {
  switch (v) {
    case Variant::Unfused: return "unfused";
    case Variant::WideGemm: return "wide_gemm";
    case Variant::EpilogueFused: return "epilogue_fused";
    case Variant::ClusterFused: return "cluster_fused";
  }
  return "?";
}

ProjchainVariant parse_projchain_variant(std::string_view name) {
  std::string known;
  for (const ProjchainVariant v : all_projchain_variants()) {
    if (projchain_variant_name(v) == name) return v;
    known += (known.empty() ? "" : ", ") + projchain_variant_name(v);
  }
  fail("projchain: unknown variant '{}' (known: {})", name, known);
}

std::int64_t packed_weight_ld(const ProjchainShape& s) { return (s.wide_width() + 7) / 8 * 8; }

std::size_t packed_weight_bytes(const ProjchainShape& s) {
  return static_cast<std::size_t>(s.d * packed_weight_ld(s)) * 2;
}

void projchain_pack_weights(ProjchainVariant v, const ProjchainDeviceArgs& w, void* w_packed,
                            const ProjchainShape& s, CUstream_st* stream) {
  OVERLAP_REQUIRE(w.w_q && w.w_k && w.w_v && w.w_g && w.w_alpha && w_packed,
                  "projchain_pack_weights: W_q, W_k, W_v, W_g, W_alpha and the destination must be device pointers");
  OVERLAP_REQUIRE(v == Variant::WideGemm || v == Variant::EpilogueFused,
                  "projchain_pack_weights: {} takes no packed weight", projchain_variant_name(v));
  const std::int64_t HD = s.heads_width(), ld = packed_weight_ld(s);
  if (v == Variant::EpilogueFused) {
    const launch::PackSources src{{w.w_q, w.w_k, w.w_v, w.w_g, w.w_alpha}, s.d, s.H, s.dk, ld};
    check_launch(launch::pack_weights_k_major(src, w_packed, stream), "weight packing", v);
    return;
  }
  auto* cs = reinterpret_cast<cudaStream_t>(stream);
  const auto pitch = static_cast<std::size_t>(ld) * 2;
  const void* blocks[] = {w.w_q, w.w_k, w.w_v, w.w_g, w.w_alpha};
  for (int i = 0; i < 5; ++i) {
    const auto width_bytes = static_cast<std::size_t>(i < 4 ? HD : s.H) * 2;
    OVERLAP_CUDA_CHECK(cudaMemcpy2DAsync(static_cast<char*>(w_packed) + i * HD * 2, pitch, blocks[i], width_bytes,
                                         width_bytes, s.d, cudaMemcpyDeviceToDevice, cs));
  }
  if (ld > s.wide_width())  // the stride padding is read by the GEMM: zeros, never garbage
    OVERLAP_CUDA_CHECK(cudaMemset2DAsync(static_cast<char*>(w_packed) + s.wide_width() * 2, pitch, 0,
                                         static_cast<std::size_t>(ld - s.wide_width()) * 2, s.d, cs));
}

std::optional<std::string> projchain_cannot_implement(ProjchainVariant v, const ProjchainShape& s) {
  const std::string name = projchain_variant_name(v);
  if (v == Variant::ClusterFused)
    return name + ": not implemented (optional in SPEC section 3): epilogue_fused's 128x256 tile holds whole heads "
                  "for every supported dk (64, 128), so no head has to be split across a cluster";
  if (s.B < 1 || s.T < 1 || s.d < 1 || s.H < 1 || s.dk < 1) return name + ": B, T, d, H, dk must be at least 1";
  // cuBLAS and the CUTLASS kernel take 32-bit sizes and leading dimensions.
  if (!fits_int(s.N()) || !fits_int(s.d) || !fits_int(packed_weight_ld(s)))
    return name + ": N = " + std::to_string(s.N()) + ", d or the packed width exceeds 2^31 - 1";
  if (s.dk > 256 || s.dk % 2 != 0)
    return name + ": dk = " + std::to_string(s.dk) + " not supported (even, at most 256: one warp per head)";
  if (v == Variant::EpilogueFused) {
    if (s.dk != 64 && s.dk != 128)
      return name + ": dk = " + std::to_string(s.dk) + " not supported (64 or 128: whole heads in a 256-wide tile)";
    if (s.d % 8 != 0)
      return name + ": d = " + std::to_string(s.d) + " not supported (a multiple of 8: TMA needs 16-byte rows)";
    ProjchainDeviceArgs dummy;
    // can_implement only reads sizes; placeholder pointers stand for the outputs.
    dummy.q = dummy.k = dummy.v = dummy.g = dummy.alpha = reinterpret_cast<void*>(kWorkspaceAlign);
    if (const char* why = launch::fused_gemm_check(fused_problem(dummy, dummy.q, s))) return name + ": " + why;
  }
  return std::nullopt;
}

bool projchain_can_implement(ProjchainVariant v, const ProjchainShape& s) { return !projchain_cannot_implement(v, s); }

std::size_t projchain_workspace_bytes(ProjchainVariant v, const ProjchainShape& s, bool weights_packed) {
  const std::size_t packing = weights_packed ? 0 : align_up(packed_weight_bytes(s));
  switch (v) {
    case Variant::Unfused:
    case Variant::ClusterFused: return 0;
    case Variant::WideGemm: return packing + align_up(wide_output_bytes(s));
    case Variant::EpilogueFused: {
      ProjchainDeviceArgs dummy;
      return packing + align_up(launch::fused_gemm_workspace_bytes(fused_problem(dummy, nullptr, s)));
    }
  }
  return 0;
}

void projchain_forward(ProjchainVariant v, const ProjchainDeviceArgs& a, const ProjchainShape& s,
                       CUstream_st* stream) {
  if (auto why = projchain_cannot_implement(v, s)) fail("projchain_forward: {}", *why);
  const std::string name = projchain_variant_name(v);
  OVERLAP_REQUIRE(a.x && a.q && a.k && a.v && a.g && a.alpha,
                  "projchain_forward {}: x, q, k, v, g and alpha must be device pointers", name);
  const bool packed = a.w_packed != nullptr;
  OVERLAP_REQUIRE(packed || v == Variant::Unfused || (a.w_q && a.w_k && a.w_v && a.w_g && a.w_alpha),
                  "projchain_forward {}: give w_packed or all five weights", name);
  OVERLAP_REQUIRE(v != Variant::Unfused || (a.w_q && a.w_k && a.w_v && a.w_g && a.w_alpha),
                  "projchain_forward {}: W_q, W_k, W_v, W_g and W_alpha must be device pointers", name);
  if (v == Variant::Unfused) {
    run_unfused(a, s, stream);
    return;
  }
  auto* cs = reinterpret_cast<cudaStream_t>(stream);
  const std::size_t need = projchain_workspace_bytes(v, s, packed);
  void* scratch = a.workspace;
  if (!scratch && need) OVERLAP_CUDA_CHECK(cudaMallocAsync(&scratch, need, cs));
  try {
    char* next = static_cast<char*>(scratch);
    const void* w_packed = a.w_packed;
    if (!packed) {
      projchain_pack_weights(v, a, next, s, stream);
      w_packed = next;
      next += align_up(packed_weight_bytes(s));
    }
    if (v == Variant::WideGemm)
      run_wide_gemm(a, w_packed, next, s, stream);
    else
      check_launch(launch::fused_gemm(fused_problem(a, w_packed, s), next, stream), "fused GEMM", v);
  } catch (...) {
    if (!a.workspace && need) cudaFreeAsync(scratch, cs);  // the error being thrown is the one to report
    throw;
  }
  if (!a.workspace && need) OVERLAP_CUDA_CHECK(cudaFreeAsync(scratch, cs));
}

}  // namespace overlap::cuda
