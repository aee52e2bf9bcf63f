// C entry point over linrnn_forward for callers without C++ (the Python benchmark, through
// ctypes). Errors come back as a non-zero return and a message, never as an exception.
#include <cstring>
#include <exception>

#include "linrnn/linrnn_forward.hpp"

namespace {

void copy_message(const char* text, char* out, int out_len) {
  if (!out || out_len <= 0) return;
  std::strncpy(out, text, static_cast<std::size_t>(out_len - 1));
  out[out_len - 1] = '\0';
}

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
  try {
    return static_cast<long long>(overlap::cuda::linrnn_workspace_bytes(overlap::cuda::parse_linrnn_variant(variant),
                                                                        make_shape(B, T, d, dv, false, false)));
  } catch (const std::exception& e) {
    copy_message(e.what(), err, err_len);
    return -1;
  }
}

// 0 on success; otherwise 1 and the reason (unknown variant, unsupported shape, CUDA error).
int overlap_linrnn_forward(const char* variant, const void* x, const void* W, const float* h0, void* y, float* hT,
                           void* workspace, int B, int T, int d, int dv, void* stream, char* err, int err_len) {
  try {
    overlap::cuda::LinrnnDeviceArgs a;
    a.x = x;
    a.W = W;
    a.h0 = h0;
    a.y = y;
    a.hT = hT;
    a.workspace = workspace;
    overlap::cuda::linrnn_forward(overlap::cuda::parse_linrnn_variant(variant), a,
                                  make_shape(B, T, d, dv, h0 != nullptr, hT != nullptr),
                                  static_cast<CUstream_st*>(stream));
    return 0;
  } catch (const std::exception& e) {
    copy_message(e.what(), err, err_len);
    return 1;
  }
}

}  // extern "C"
