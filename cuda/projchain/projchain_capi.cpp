// C entry points over projchain_forward for callers without C++ (the Python benchmark, through
// ctypes). Errors come back as a non-zero return and a message, never as an exception.
#include "common/capi_guard.hpp"
#include "core/error.hpp"
#include "projchain/projchain_forward.hpp"

namespace {

using overlap::cuda::capi_guard;

overlap::projchain::ProjchainShape make_shape(int B, int T, int d, int H, int dk) {
  OVERLAP_REQUIRE(B >= 1 && T >= 1 && d >= 1 && H >= 1 && dk >= 1,
                  "projchain: B, T, d, H, dk must be at least 1 (B={}, T={}, d={}, H={}, dk={})", B, T, d, H, dk);
  overlap::projchain::ProjchainShape s;
  s.B = B;
  s.T = T;
  s.d = d;
  s.H = H;
  s.dk = dk;
  // Sizes past positivity are checked by projchain_cannot_implement.
  return s;
}

}  // namespace

extern "C" {

// Row stride in elements of the packed weight [d, ld], or -1 with a message.
long long overlap_projchain_packed_ld(int B, int T, int d, int H, int dk, char* err, int err_len) {
  return capi_guard(err, err_len, -1LL,
                    [&] { return static_cast<long long>(overlap::cuda::packed_weight_ld(make_shape(B, T, d, H, dk))); });
}

// Bytes of workspace the variant needs (0: none), or -1 with a message.
long long overlap_projchain_workspace_bytes(const char* variant, int B, int T, int d, int H, int dk, int packed,
                                            char* err, int err_len) {
  return capi_guard(err, err_len, -1LL, [&] {
    return static_cast<long long>(overlap::cuda::projchain_workspace_bytes(
        overlap::cuda::parse_projchain_variant(variant), make_shape(B, T, d, H, dk), packed != 0));
  });
}

// Packs the weights for `variant` (wide_gemm or epilogue_fused) into w_packed; 0 on success,
// otherwise 1 and the reason.
int overlap_projchain_pack(const char* variant, const void* w_q, const void* w_k, const void* w_v, const void* w_g,
                           const void* w_alpha, void* w_packed, int B, int T, int d, int H, int dk, void* stream,
                           char* err, int err_len) {
  return capi_guard(err, err_len, 1, [&] {
    overlap::cuda::ProjchainDeviceArgs a;
    a.w_q = w_q;
    a.w_k = w_k;
    a.w_v = w_v;
    a.w_g = w_g;
    a.w_alpha = w_alpha;
    overlap::cuda::projchain_pack_weights(overlap::cuda::parse_projchain_variant(variant), a, w_packed,
                                          make_shape(B, T, d, H, dk), static_cast<CUstream_st*>(stream));
    return 0;
  });
}

// 0 on success; otherwise 1 and the reason (unknown variant, unsupported shape, CUDA error).
// w_packed: from overlap_projchain_pack for the same variant, or null (packed inside the call).
// fused_strip_n: epilogue_fused's tile order (ProjchainDeviceArgs::fused_strip_n); 0: the tiling's.
int overlap_projchain_forward(const char* variant, const void* x, const void* w_q, const void* w_k, const void* w_v,
                              const void* w_g, const void* w_alpha, const void* w_packed, void* q, void* k, void* v,
                              void* g, void* alpha, void* workspace, int B, int T, int d, int H,
                              int dk, int fused_strip_n, void* stream, char* err, int err_len) {
  return capi_guard(err, err_len, 1, [&] {
    overlap::cuda::ProjchainDeviceArgs a;
    a.x = x;
    a.w_q = w_q;
    a.w_k = w_k;
    a.w_v = w_v;
    a.w_g = w_g;
    a.w_alpha = w_alpha;
    a.w_packed = w_packed;
    a.q = q;
    a.k = k;
    a.v = v;
    a.g = g;
    a.alpha = alpha;
    a.workspace = workspace;
    a.fused_strip_n = fused_strip_n;
    overlap::cuda::projchain_forward(overlap::cuda::parse_projchain_variant(variant), a, make_shape(B, T, d, H, dk),
                                     static_cast<CUstream_st*>(stream));
    return 0;
  });
}

}  // extern "C"
