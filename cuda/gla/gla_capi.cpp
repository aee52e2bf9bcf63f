// C entry points over gla_forward and gla_backward for callers without C++ (the Python benchmark, through
// ctypes). Errors come back as a non-zero return and a message, never as an exception.
#include <charconv>
#include <string>
#include <string_view>

#include "common/capi_guard.hpp"
#include "core/error.hpp"
#include "gla/gla_backward.hpp"
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

// A variant name, optionally with launch options the library would otherwise pick by shape:
// "pingpong_fused@block_v=128,segments=2" (keys: units_per_cta, block_v, segments). The
// benchmark times such forms beside the default.
struct VariantForm {
  overlap::cuda::GlaVariant variant;
  overlap::cuda::GlaLaunchOptions options;
};

VariantForm parse_form(const char* text) {
  const std::string_view all(text ? text : "");
  const std::size_t at = all.find('@');
  VariantForm f{overlap::cuda::parse_gla_variant(std::string(all.substr(0, at))), {}};
  if (at == std::string_view::npos) return f;
  std::string_view rest = all.substr(at + 1);
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    const std::size_t eq = item.find('=');
    int value = 0;
    const std::string_view key = item.substr(0, eq), number = eq == std::string_view::npos ? "" : item.substr(eq + 1);
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (number.empty() || ec != std::errc{} || end != number.data() + number.size())
      overlap::fail("gla variant '{}': option '{}' wants key=integer", all, item);
    if (key == "units_per_cta")
      f.options.pingpong_units_per_cta = value;
    else if (key == "block_v")
      f.options.pingpong_block_v = value;
    else if (key == "segments")
      f.options.pingpong_segments = value;
    else
      overlap::fail("gla variant '{}': unknown option '{}' (units_per_cta, block_v, segments)", all, key);
  }
  return f;
}

}  // namespace

extern "C" {

// Bytes of workspace the variant needs (0: none), or -1 with a message.
long long overlap_gla_workspace_bytes(const char* variant, int B, int T, int H, int K, int V, char* err,
                                      int err_len) {
  return capi_guard(err, err_len, -1LL, [&] {
    return static_cast<long long>(
        overlap::cuda::gla_workspace_bytes(parse_form(variant).variant, make_shape(B, T, H, K, V, 0, 0, 0)));
  });
}

int overlap_gla_forward_saving_states(const char* variant, const void* q, const void* k, const void* v,
                                      const float* g, const float* h0, void* o, float* hT, void* states,
                                      void* workspace, int B, int T, int H, int K, int V, double scale, void* stream,
                                      char* err, int err_len);

// `variant`: a name, or name@options (parse_form). 0 on success; otherwise 1 and the reason
// (unknown variant or option, unsupported shape, CUDA error).
int overlap_gla_forward(const char* variant, const void* q, const void* k, const void* v, const float* g,
                        const float* h0, void* o, float* hT, void* workspace, int B, int T, int H, int K, int V,
                        double scale, void* stream, char* err, int err_len) {
  return overlap_gla_forward_saving_states(variant, q, k, v, g, h0, o, hT, nullptr, workspace, B, T, H, K, V, scale,
                                           stream, err, err_len);
}

int overlap_gla_forward_varlen(const char* variant, const void* q, const void* k, const void* v, const float* g,
                               const float* h0, void* o, float* hT, void* states, void* workspace,
                               const int* cu_seqlens, int num_seqs, int B, int T, int H, int K, int V, double scale,
                               void* stream, char* err, int err_len);

// overlap_gla_forward that also writes S_n entering every 64-step chunk (bf16 [B,H,NT,K,V],
// GlaDeviceArgs::states; null: not saved), what overlap_gla_backward's saved_states reads.
int overlap_gla_forward_saving_states(const char* variant, const void* q, const void* k, const void* v,
                                      const float* g, const float* h0, void* o, float* hT, void* states,
                                      void* workspace, int B, int T, int H, int K, int V, double scale, void* stream,
                                      char* err, int err_len) {
  return overlap_gla_forward_varlen(variant, q, k, v, g, h0, o, hT, states, workspace, nullptr, 0, B, T, H, K, V,
                                    scale, stream, err, err_len);
}

// overlap_gla_forward_saving_states over a variable-length batch (cuda/gla/gla_varlen.hpp) where
// cu_seqlens (device, int32, num_seqs + 1) is given: B = 1, h0 and hT [num_seqs, H, K, V], states
// in gla_varlen_states_shape's layout, the workspace (or null) gla_varlen_plan_bytes.
int overlap_gla_forward_varlen(const char* variant, const void* q, const void* k, const void* v, const float* g,
                               const float* h0, void* o, float* hT, void* states, void* workspace,
                               const int* cu_seqlens, int num_seqs, int B, int T, int H, int K, int V, double scale,
                               void* stream, char* err, int err_len) {
  return capi_guard(err, err_len, 1, [&] {
    overlap::cuda::GlaDeviceArgs a;
    a.q = q;
    a.k = k;
    a.v = v;
    a.g = g;
    a.h0 = h0;
    a.o = o;
    a.hT = hT;
    a.states = states;
    a.workspace = workspace;
    OVERLAP_REQUIRE(cu_seqlens || num_seqs == 0, "gla forward: num_seqs = {} but cu_seqlens is null", num_seqs);
    a.varlen = {cu_seqlens, num_seqs};
    const VariantForm f = parse_form(variant);
    overlap::cuda::gla_forward(f.variant, a, make_shape(B, T, H, K, V, h0 != nullptr, hT != nullptr, scale),
                               static_cast<CUstream_st*>(stream), f.options);
    return 0;
  });
}

// Bytes of workspace the backward variant needs, or -1 with a message.
long long overlap_gla_backward_workspace_bytes(const char* variant, int B, int T, int H, int K, int V, int want_hT,
                                               char* err, int err_len) {
  return capi_guard(err, err_len, -1LL, [&] {
    return static_cast<long long>(overlap::cuda::gla_backward_workspace_bytes(
        overlap::cuda::parse_gla_backward_variant(variant ? variant : ""), make_shape(B, T, H, K, V, 0, want_hT, 0)));
  });
}

// A variable-length batch of num_seqs sequences, T steps in all: the workspace of the backward
// variant, or with variant null the forward's (its plan); -1 with a message.
long long overlap_gla_varlen_workspace_bytes(const char* backward_variant, int num_seqs, int T, int H, int K, int V,
                                             char* err, int err_len) {
  return capi_guard(err, err_len, -1LL, [&] {
    OVERLAP_REQUIRE(num_seqs >= 1, "gla varlen: num_seqs must be at least 1, not {}", num_seqs);
    if (!backward_variant)
      return static_cast<long long>(overlap::cuda::gla_varlen_plan_bytes(make_shape(1, T, H, K, V, 0, 0, 0), num_seqs));
    return static_cast<long long>(overlap::cuda::gla_backward_workspace_bytes(
        overlap::cuda::parse_gla_backward_variant(backward_variant), make_shape(1, T, H, K, V, 0, 0, 0), num_seqs));
  });
}

// The gradients of overlap_gla_forward: dq, dk, dv (bf16), dg (fp32) and dh0 (fp32, when h0 is
// given) from do (bf16) and dhT (fp32 or null); `states`: the forward's saved S_n (variant
// saved_states; null for materialized). 0 on success; otherwise 1 and the reason.
int overlap_gla_backward_varlen(const char* variant, const void* q, const void* k, const void* v, const float* g,
                                const float* h0, const void* d_o, const float* dhT, void* dq, void* dk, void* dv,
                                float* dg, float* dh0, const void* states, void* workspace, const int* cu_seqlens,
                                int num_seqs, int B, int T, int H, int K, int V, double scale, void* stream, char* err,
                                int err_len);

int overlap_gla_backward(const char* variant, const void* q, const void* k, const void* v, const float* g,
                         const float* h0, const void* d_o, const float* dhT, void* dq, void* dk, void* dv, float* dg,
                         float* dh0, const void* states, void* workspace, int B, int T, int H, int K, int V,
                         double scale, void* stream, char* err, int err_len) {
  return overlap_gla_backward_varlen(variant, q, k, v, g, h0, d_o, dhT, dq, dk, dv, dg, dh0, states, workspace,
                                     nullptr, 0, B, T, H, K, V, scale, stream, err, err_len);
}

// overlap_gla_backward over a variable-length batch where cu_seqlens is given (as
// overlap_gla_forward_varlen; the workspace overlap_gla_varlen_workspace_bytes(variant, ...)).
int overlap_gla_backward_varlen(const char* variant, const void* q, const void* k, const void* v, const float* g,
                                const float* h0, const void* d_o, const float* dhT, void* dq, void* dk, void* dv,
                                float* dg, float* dh0, const void* states, void* workspace, const int* cu_seqlens,
                                int num_seqs, int B, int T, int H, int K, int V, double scale, void* stream, char* err,
                                int err_len) {
  return capi_guard(err, err_len, 1, [&] {
    overlap::cuda::GlaBackwardArgs a;
    a.q = q;
    a.k = k;
    a.v = v;
    a.g = g;
    a.h0 = h0;
    a.do_ = d_o;
    a.dhT = dhT;
    a.dq = dq;
    a.dk = dk;
    a.dv = dv;
    a.dg = dg;
    a.dh0 = dh0;
    a.states = states;
    a.workspace = workspace;
    OVERLAP_REQUIRE(cu_seqlens || num_seqs == 0, "gla backward: num_seqs = {} but cu_seqlens is null", num_seqs);
    a.varlen = {cu_seqlens, num_seqs};
    overlap::cuda::gla_backward(overlap::cuda::parse_gla_backward_variant(variant ? variant : ""), a,
                                make_shape(B, T, H, K, V, h0 != nullptr, dhT != nullptr, scale),
                                static_cast<CUstream_st*>(stream));
    return 0;
  });
}

}  // extern "C"
