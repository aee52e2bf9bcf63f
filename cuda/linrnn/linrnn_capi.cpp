// C entry point over linrnn_forward for callers without C++ (the Python benchmark, through
// ctypes). Errors come back as a failure value and a message (capi_guard), never as an exception.
#include "common/capi_guard.hpp"
#include "linrnn/linrnn_forward.hpp"

namespace {

overlap::linrnn::LinrnnShape make_shape(int B, int T, int d, int dv, bool has_h0, bool want_hT) {
  overlap::linrnn::LinrnnShape s;
  s.B = B;
  s.T = T;
  s.d = d;
  s.dv = dv;
  s.has_h0 = has_h0;
  s.want_hT = want_hT;
  return s;
}

}  // namespace

extern "C" {

// Bytes of workspace the variant needs (0: none; zero-fill it once before first use), or -1
// with a message.
long long overlap_linrnn_workspace_bytes(const char* variant, int B, int T, int d, int dv, char* err, int err_len) {
  return overlap::cuda::capi_guard(err, err_len, -1LL, [&] {
    return static_cast<long long>(overlap::cuda::linrnn_workspace_bytes(overlap::cuda::parse_linrnn_variant(variant),
                                                                        make_shape(B, T, d, dv, false, false)));
  });
}

// 0 on success; otherwise 1 and the reason (unknown variant, unsupported shape, CUDA error).
// w_packed: the weight packed by overlap_linrnn_pack_weight, or null (chunk_fused then packs W
// into the workspace in the call).
int overlap_linrnn_forward(const char* variant, const void* x, const void* W,
                           const void* w_packed, const float* h0, void* y, float* hT, void* workspace, int B, int T,
                           int d, int dv, void* stream, char* err, int err_len) {
  return overlap::cuda::capi_guard(err, err_len, 1, [&] {
    overlap::cuda::LinrnnDeviceArgs a;
    a.x = x;
    a.W = W;
    a.w_packed = w_packed;
    a.h0 = h0;
    a.y = y;
    a.hT = hT;
    a.workspace = workspace;
    overlap::cuda::linrnn_forward(overlap::cuda::parse_linrnn_variant(variant), a,
                                  make_shape(B, T, d, dv, h0 != nullptr, hT != nullptr),
                                  static_cast<CUstream_st*>(stream));
    return 0;
  });
}

// Bytes of chunk_fused's packed weight, or -1 with a message.
long long overlap_linrnn_packed_weight_bytes(int B, int T, int d, int dv, char* err, int err_len) {
  return overlap::cuda::capi_guard(err, err_len, -1LL, [&] {
    return static_cast<long long>(overlap::cuda::linrnn_packed_weight_bytes(make_shape(B, T, d, dv, false, false)));
  });
}

// Packs W for chunk_fused (enqueued on `stream`): 0, or 1 and the reason.
int overlap_linrnn_pack_weight(const void* W, void* w_packed, int B, int T, int d, int dv, void* stream, char* err,
                               int err_len) {
  return overlap::cuda::capi_guard(err, err_len, 1, [&] {
    overlap::cuda::linrnn_pack_weight(W, w_packed, make_shape(B, T, d, dv, false, false),
                                      static_cast<CUstream_st*>(stream));
    return 0;
  });
}

}  // extern "C"
