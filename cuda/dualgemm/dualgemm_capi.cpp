// C entry point over dualgemm_forward for callers without C++ (the Python benchmark, through
// ctypes). Errors come back as a non-zero return and a message, never as an exception.
#include <string>

#include "common/capi_guard.hpp"
#include "core/error.hpp"
#include "dualgemm/dualgemm_forward.hpp"

namespace {

overlap::dualgemm::DualGemmShape make_shape(int fmt, long long L, long long M, long long N, long long K) {
  overlap::dualgemm::DualGemmShape s;
  s.L = L;
  s.M = M;
  s.N = N;
  s.K = K;
  s.format = overlap::dualgemm::format_from_code(fmt);
  return s;
}

}  // namespace

extern "C" {

// Number of variants; overlap_dualgemm_variant_name(i) names the i-th (kTilings' order).
int overlap_dualgemm_variant_count() { return static_cast<int>(overlap::dualgemm::kTilings.size()); }
const char* overlap_dualgemm_variant_name(int i) {
  return i >= 0 && i < overlap_dualgemm_variant_count() ? overlap::dualgemm::kTilings[std::size_t(i)].name : nullptr;
}

// 0 when `variant` can run the shape; otherwise 1 and the reason.
int overlap_dualgemm_cannot_implement(const char* variant, int fmt, long long L, long long M, long long N, long long K,
                                      char* err, int err_len) {
  return overlap::cuda::capi_guard(err, err_len, 1, [&] {
    const auto why = overlap::cuda::dualgemm_cannot_implement(overlap::cuda::dualgemm_tiling(variant ? variant : ""),
                                                              make_shape(fmt, L, M, N, K));
    if (why) overlap::cuda::copy_capi_message(why->c_str(), err, err_len);
    return why ? 1 : 0;
  });
}

// Enqueues C = silu(A B1^T) * (A B2^T) on `stream`. The scales are read for fmt=1 only.
// 0 on success; otherwise 1 and the reason (unknown variant, unsupported shape, CUDA error).
int overlap_dualgemm_forward(const char* variant, int fmt, long long L, long long M, long long N, long long K,
                             const void* a, const void* b1, const void* b2, const float* a_scale,
                             const float* b1_scale, const float* b2_scale, void* c, void* stream, char* err,
                             int err_len) {
  return overlap::cuda::capi_guard(err, err_len, 1, [&] {
    overlap::cuda::DualGemmDeviceArgs args;
    args.a = a;
    args.b1 = b1;
    args.b2 = b2;
    args.a_scale = a_scale;
    args.b1_scale = b1_scale;
    args.b2_scale = b2_scale;
    args.c = c;
    overlap::cuda::dualgemm_forward(overlap::cuda::dualgemm_tiling(variant ? variant : ""), args,
                                    make_shape(fmt, L, M, N, K), static_cast<CUstream_st*>(stream));
    return 0;
  });
}

}  // extern "C"
