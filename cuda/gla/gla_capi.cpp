// C entry point over gla_forward for callers without C++ (the Python benchmark, through
// ctypes). Errors come back as a non-zero return and a message, never as an exception.
#include "common/capi_guard.hpp"
#include "gla/gla_forward.hpp"

namespace {

using overlap::cuda::capi_guard;

overlap::gla::GlaShape make_shape(int B, int T, int H, int K, int V, int has_h0, int want_hT, double scale) {
  overlap::gla::GlaShape s;
  s.B = B;
  s.T = T;
  s.H = H;
  s.K = K;
  s.V = V;
  s.has_h0 = has_h0 != 0;
  s.want_hT = want_hT != 0;
  s.scale = scale;
  return s;
}

}  // namespace

extern "C" {

// Bytes of workspace the variant needs (0: none), or -1 with a message.
long long overlap_gla_workspace_bytes(const char* variant, int B, int T, int H, int K, int V, char* err,
                                      int err_len) {
  return capi_guard(err, err_len, -1LL, [&] {
    return static_cast<long long>(overlap::cuda::gla_workspace_bytes(overlap::cuda::parse_gla_variant(variant),
                                                                      make_shape(B, T, H, K, V, 0, 0, 0)));
  });
}

// 0 on success; otherwise 1 and the reason (unknown variant, unsupported shape, CUDA error).
int overlap_gla_forward(const char* variant, const void* q, const void* k, const void* v, const float* g,
                        const float* h0, void* o, float* hT, void* workspace, int B, int T, int H, int K, int V,
                        double scale, void* stream, char* err, int err_len) {
  return capi_guard(err, err_len, 1, [&] {
    overlap::cuda::GlaDeviceArgs a;
    a.q = q;
    a.k = k;
    a.v = v;
    a.g = g;
    a.h0 = h0;
    a.o = o;
    a.hT = hT;
    a.workspace = workspace;
    overlap::cuda::gla_forward(overlap::cuda::parse_gla_variant(variant), a,
                               make_shape(B, T, H, K, V, h0 != nullptr, hT != nullptr, scale),
                               static_cast<CUstream_st*>(stream));
    return 0;
  });
}

}  // extern "C"
