// overlap._cuda_ops: the CUDA kernels for python/overlap/ops. Launches go through the kernels'
// C entry points (capi_declarations.hpp) with raw device pointers and the caller's stream, as
// bench/gpu/*.py call them through ctypes; a failure there becomes a RuntimeError carrying the
// C entry point's message unchanged. What the C entry points do not offer (which variants
// exist, which one to run by default, whether a variant can run a shape) comes from the
// kernels' C++ headers.
//
// Pointers and streams cross as integers (torch's data_ptr() and cuda_stream); 0 is null.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "capi_declarations.hpp"
#include "core/error.hpp"
#include "dualgemm/dualgemm_forward.hpp"
#include "gla/gla_backward.hpp"
#include "gla/gla_forward.hpp"
#include "linrnn/linrnn_forward.hpp"
#include "projchain/projchain_forward.hpp"

namespace nb = nanobind;

namespace {

constexpr int kErrLen = 2048;

// The C entry points take int sizes: a size that does not fit is refused here, by name,
// instead of wrapping around.
int to_int(std::int64_t value, const char* name) {
  if (value < 0 || value > INT_MAX)
    throw nb::value_error((std::string(name) + " = " + std::to_string(value) + " does not fit the kernels' int sizes")
                              .c_str());
  return static_cast<int>(value);
}

template <class T = void>
T* ptr(std::uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

// Runs a C entry point that fills `err` on failure; `failed(result)` says whether it did.
template <class Call, class Failed>
auto checked(Call call, Failed failed) {
  char err[kErrLen] = {0};
  const auto result = call(err);
  if (failed(result)) throw std::runtime_error(err[0] ? err : "overlap C entry point failed without a message");
  return result;
}

template <class Call>
long long checked_bytes(Call call) {
  return checked(call, [](long long r) { return r < 0; });
}

template <class Call>
void checked_status(Call call) {
  checked(call, [](int r) { return r != 0; });
}

overlap::gla::GlaShape gla_shape(std::int64_t B, std::int64_t T, std::int64_t H, std::int64_t K, std::int64_t V,
                                 bool has_h0, bool want_hT, double scale) {
  overlap::gla::GlaShape s;
  s.B = B, s.T = T, s.H = H, s.K = K, s.V = V, s.has_h0 = has_h0, s.want_hT = want_hT, s.scale = scale;
  return s;
}

overlap::linrnn::LinrnnShape linrnn_shape(std::int64_t B, std::int64_t T, std::int64_t d, std::int64_t dv,
                                          bool has_h0, bool want_hT) {
  overlap::linrnn::LinrnnShape s;
  s.B = B, s.T = T, s.d = d, s.dv = dv, s.has_h0 = has_h0, s.want_hT = want_hT;
  return s;
}

overlap::projchain::ProjchainShape projchain_shape(std::int64_t B, std::int64_t T, std::int64_t d, std::int64_t H,
                                                   std::int64_t dk) {
  overlap::projchain::ProjchainShape s;
  s.B = B, s.T = T, s.d = d, s.H = H, s.dk = dk;
  return s;
}

template <class Variant, class Name>
std::vector<std::string> names_of(const std::vector<Variant>& variants, Name name) {
  std::vector<std::string> out;
  for (const auto& v : variants) out.push_back(name(v));
  return out;
}

void bind_gla(nb::module_& m) {
  using namespace overlap::cuda;
  m.def("gla_variants", [] { return names_of(all_gla_variants(), [](auto v) { return gla_variant_name(v); }); });
  m.def("gla_default_variant", [](std::int64_t B, std::int64_t T, std::int64_t H, std::int64_t K, std::int64_t V,
                                  bool has_h0, bool want_hT) {
    return gla_variant_name(default_gla_variant(gla_shape(B, T, H, K, V, has_h0, want_hT, 0)));
  });
  m.def("gla_cannot_implement", [](const std::string& variant, std::int64_t B, std::int64_t T, std::int64_t H,
                                   std::int64_t K, std::int64_t V, bool has_h0, bool want_hT) {
    return gla_cannot_implement(parse_gla_variant(variant), gla_shape(B, T, H, K, V, has_h0, want_hT, 0))
        .value_or("");
  });
  m.def("gla_workspace_bytes", [](const std::string& variant, std::int64_t B, std::int64_t T, std::int64_t H,
                                  std::int64_t K, std::int64_t V) {
    return checked_bytes([&](char* err) {
      return overlap_gla_workspace_bytes(variant.c_str(), to_int(B, "B"), to_int(T, "T"), to_int(H, "H"),
                                         to_int(K, "K"), to_int(V, "V"), err, kErrLen);
    });
  });
  // states: 0, or bf16 [B, H, ceil(T/64), K, V] that the forward fills with S_n for gla_backward.
  m.def("gla_forward", [](const std::string& variant, std::uintptr_t q, std::uintptr_t k, std::uintptr_t v,
                          std::uintptr_t g, std::uintptr_t h0, std::uintptr_t o, std::uintptr_t hT,
                          std::uintptr_t states, std::uintptr_t workspace, std::int64_t B, std::int64_t T,
                          std::int64_t H, std::int64_t K, std::int64_t V, double scale, std::uintptr_t stream) {
    checked_status([&](char* err) {
      return overlap_gla_forward_saving_states(variant.c_str(), ptr(q), ptr(k), ptr(v), ptr<const float>(g),
                                               ptr<const float>(h0), ptr(o), ptr<float>(hT), ptr(states),
                                               ptr(workspace), to_int(B, "B"), to_int(T, "T"), to_int(H, "H"),
                                               to_int(K, "K"), to_int(V, "V"), scale, ptr(stream), err, kErrLen);
    });
  });
  // A variable-length batch (cuda/gla/gla_varlen.hpp): cu_seqlens int32 [N + 1] on the device,
  // B = 1, h0 and hT [N, H, K, V], states 0 or bf16 [(T + 63 N) / 64, H, K, V].
  m.def("gla_varlen_workspace_bytes", [](const std::string& backward_variant, std::int64_t N, std::int64_t T,
                                         std::int64_t H, std::int64_t K, std::int64_t V) {
    return checked_bytes([&](char* err) {
      return overlap_gla_varlen_workspace_bytes(backward_variant.empty() ? nullptr : backward_variant.c_str(),
                                                to_int(N, "N"), to_int(T, "T"), to_int(H, "H"), to_int(K, "K"),
                                                to_int(V, "V"), err, kErrLen);
    });
  });
  m.def("gla_forward_varlen", [](const std::string& variant, std::uintptr_t q, std::uintptr_t k, std::uintptr_t v,
                                 std::uintptr_t g, std::uintptr_t h0, std::uintptr_t o, std::uintptr_t hT,
                                 std::uintptr_t states, std::uintptr_t workspace, std::uintptr_t cu_seqlens,
                                 std::int64_t N, std::int64_t T, std::int64_t H, std::int64_t K, std::int64_t V,
                                 double scale, std::uintptr_t stream) {
    checked_status([&](char* err) {
      return overlap_gla_forward_varlen(variant.c_str(), ptr(q), ptr(k), ptr(v), ptr<const float>(g),
                                        ptr<const float>(h0), ptr(o), ptr<float>(hT), ptr(states), ptr(workspace),
                                        ptr<const int>(cu_seqlens), to_int(N, "N"), 1, to_int(T, "T"), to_int(H, "H"),
                                        to_int(K, "K"), to_int(V, "V"), scale, ptr(stream), err, kErrLen);
    });
  });
  m.def("gla_backward_varlen", [](const std::string& variant, std::uintptr_t q, std::uintptr_t k, std::uintptr_t v,
                                  std::uintptr_t g, std::uintptr_t h0, std::uintptr_t d_o, std::uintptr_t dhT,
                                  std::uintptr_t dq, std::uintptr_t dk, std::uintptr_t dv, std::uintptr_t dg,
                                  std::uintptr_t dh0, std::uintptr_t states, std::uintptr_t workspace,
                                  std::uintptr_t cu_seqlens, std::int64_t N, std::int64_t T, std::int64_t H,
                                  std::int64_t K, std::int64_t V, double scale, std::uintptr_t stream) {
    checked_status([&](char* err) {
      return overlap_gla_backward_varlen(variant.c_str(), ptr(q), ptr(k), ptr(v), ptr<const float>(g),
                                         ptr<const float>(h0), ptr(d_o), ptr<const float>(dhT), ptr(dq), ptr(dk),
                                         ptr(dv), ptr<float>(dg), ptr<float>(dh0), ptr(states), ptr(workspace),
                                         ptr<const int>(cu_seqlens), to_int(N, "N"), 1, to_int(T, "T"),
                                         to_int(H, "H"), to_int(K, "K"), to_int(V, "V"), scale, ptr(stream), err,
                                         kErrLen);
    });
  });
  m.def("gla_backward_variants",
        [] { return names_of(all_gla_backward_variants(), [](auto v) { return gla_backward_variant_name(v); }); });
  m.def("gla_backward_cannot_implement", [](const std::string& variant, std::int64_t B, std::int64_t T,
                                            std::int64_t H, std::int64_t K, std::int64_t V) {
    return gla_backward_cannot_implement(parse_gla_backward_variant(variant), gla_shape(B, T, H, K, V, false, false, 0))
        .value_or("");
  });
  m.def("gla_backward_workspace_bytes", [](const std::string& variant, std::int64_t B, std::int64_t T,
                                           std::int64_t H, std::int64_t K, std::int64_t V) {
    return checked_bytes([&](char* err) {
      return overlap_gla_backward_workspace_bytes(variant.c_str(), to_int(B, "B"), to_int(T, "T"), to_int(H, "H"),
                                                  to_int(K, "K"), to_int(V, "V"), 0, err, kErrLen);
    });
  });
  // dq, dk, dv (bf16), dg (fp32), dh0 (fp32, 0 for none) from do (bf16) and dhT (fp32 or 0);
  // states: the forward's saved S_n (saved_states) or 0 (materialized).
  m.def("gla_backward", [](const std::string& variant, std::uintptr_t q, std::uintptr_t k, std::uintptr_t v,
                           std::uintptr_t g, std::uintptr_t h0, std::uintptr_t d_o, std::uintptr_t dhT,
                           std::uintptr_t dq, std::uintptr_t dk, std::uintptr_t dv, std::uintptr_t dg,
                           std::uintptr_t dh0, std::uintptr_t states, std::uintptr_t workspace, std::int64_t B,
                           std::int64_t T, std::int64_t H, std::int64_t K, std::int64_t V, double scale,
                           std::uintptr_t stream) {
    checked_status([&](char* err) {
      return overlap_gla_backward(variant.c_str(), ptr(q), ptr(k), ptr(v), ptr<const float>(g), ptr<const float>(h0),
                                  ptr(d_o), ptr<const float>(dhT), ptr(dq), ptr(dk), ptr(dv), ptr<float>(dg),
                                  ptr<float>(dh0), ptr(states), ptr(workspace), to_int(B, "B"), to_int(T, "T"),
                                  to_int(H, "H"), to_int(K, "K"), to_int(V, "V"), scale, ptr(stream), err, kErrLen);
    });
  });
}

void bind_linrnn(nb::module_& m) {
  using namespace overlap::cuda;
  m.def("linrnn_variants", [] { return names_of(all_linrnn_variants(), [](auto v) { return linrnn_variant_name(v); }); });
  m.def("linrnn_cannot_implement", [](const std::string& variant, std::int64_t B, std::int64_t T, std::int64_t d,
                                      std::int64_t dv, bool has_h0, bool want_hT) {
    return linrnn_cannot_implement(parse_linrnn_variant(variant), linrnn_shape(B, T, d, dv, has_h0, want_hT))
        .value_or("");
  });
  m.def("linrnn_workspace_bytes", [](const std::string& variant, std::int64_t B, std::int64_t T, std::int64_t d,
                                     std::int64_t dv) {
    return checked_bytes([&](char* err) {
      return overlap_linrnn_workspace_bytes(variant.c_str(), to_int(B, "B"), to_int(T, "T"), to_int(d, "d"),
                                            to_int(dv, "dv"), err, kErrLen);
    });
  });
  m.def("linrnn_packed_weight_bytes", [](std::int64_t B, std::int64_t T, std::int64_t d, std::int64_t dv) {
    return checked_bytes([&](char* err) {
      return overlap_linrnn_packed_weight_bytes(to_int(B, "B"), to_int(T, "T"), to_int(d, "d"), to_int(dv, "dv"), err,
                                                kErrLen);
    });
  });
  m.def("linrnn_pack_weight", [](std::uintptr_t W, std::uintptr_t w_packed, std::int64_t B, std::int64_t T,
                                 std::int64_t d, std::int64_t dv, std::uintptr_t stream) {
    checked_status([&](char* err) {
      return overlap_linrnn_pack_weight(ptr(W), ptr(w_packed), to_int(B, "B"), to_int(T, "T"), to_int(d, "d"),
                                        to_int(dv, "dv"), ptr(stream), err, kErrLen);
    });
  });
  m.def("linrnn_forward", [](const std::string& variant, std::uintptr_t x, std::uintptr_t W, std::uintptr_t w_packed,
                             std::uintptr_t h0, std::uintptr_t y, std::uintptr_t hT, std::uintptr_t workspace,
                             std::int64_t B, std::int64_t T, std::int64_t d, std::int64_t dv, std::uintptr_t stream) {
    checked_status([&](char* err) {
      return overlap_linrnn_forward(variant.c_str(), ptr(x), ptr(W), ptr(w_packed), ptr<const float>(h0), ptr(y),
                                    ptr<float>(hT), ptr(workspace), to_int(B, "B"), to_int(T, "T"), to_int(d, "d"),
                                    to_int(dv, "dv"), ptr(stream), err, kErrLen);
    });
  });
}

void bind_projchain(nb::module_& m) {
  using namespace overlap::cuda;
  m.def("projchain_variants", [] { return names_of(all_projchain_variants(), [](auto v) { return projchain_variant_name(v); }); });
  m.def("projchain_cannot_implement", [](const std::string& variant, std::int64_t B, std::int64_t T, std::int64_t d,
                                         std::int64_t H, std::int64_t dk) {
    return projchain_cannot_implement(parse_projchain_variant(variant), projchain_shape(B, T, d, H, dk)).value_or("");
  });
  m.def("projchain_packed_ld", [](std::int64_t B, std::int64_t T, std::int64_t d, std::int64_t H, std::int64_t dk) {
    return checked_bytes([&](char* err) {
      return overlap_projchain_packed_ld(to_int(B, "B"), to_int(T, "T"), to_int(d, "d"), to_int(H, "H"),
                                         to_int(dk, "dk"), err, kErrLen);
    });
  });
  m.def("projchain_workspace_bytes", [](const std::string& variant, std::int64_t B, std::int64_t T, std::int64_t d,
                                        std::int64_t H, std::int64_t dk, bool packed) {
    return checked_bytes([&](char* err) {
      return overlap_projchain_workspace_bytes(variant.c_str(), to_int(B, "B"), to_int(T, "T"), to_int(d, "d"),
                                               to_int(H, "H"), to_int(dk, "dk"), packed ? 1 : 0, err, kErrLen);
    });
  });
  m.def("projchain_pack", [](const std::string& variant, std::uintptr_t w_q, std::uintptr_t w_k, std::uintptr_t w_v,
                             std::uintptr_t w_g, std::uintptr_t w_alpha, std::uintptr_t w_packed, std::int64_t B,
                             std::int64_t T, std::int64_t d, std::int64_t H, std::int64_t dk, std::uintptr_t stream) {
    checked_status([&](char* err) {
      return overlap_projchain_pack(variant.c_str(), ptr(w_q), ptr(w_k), ptr(w_v), ptr(w_g), ptr(w_alpha),
                                    ptr(w_packed), to_int(B, "B"), to_int(T, "T"), to_int(d, "d"), to_int(H, "H"),
                                    to_int(dk, "dk"), ptr(stream), err, kErrLen);
    });
  });
  m.def("projchain_forward", [](const std::string& variant, std::uintptr_t x, std::uintptr_t w_q, std::uintptr_t w_k,
                                std::uintptr_t w_v, std::uintptr_t w_g, std::uintptr_t w_alpha,
                                std::uintptr_t w_packed, std::uintptr_t q, std::uintptr_t k, std::uintptr_t v,
                                std::uintptr_t g, std::uintptr_t alpha, std::uintptr_t workspace, std::int64_t B,
                                std::int64_t T, std::int64_t d, std::int64_t H, std::int64_t dk,
                                std::uintptr_t stream) {
    checked_status([&](char* err) {
      return overlap_projchain_forward(variant.c_str(), ptr(x), ptr(w_q), ptr(w_k), ptr(w_v), ptr(w_g), ptr(w_alpha),
                                       ptr(w_packed), ptr(q), ptr(k), ptr(v), ptr(g), ptr(alpha), ptr(workspace),
                                       to_int(B, "B"), to_int(T, "T"), to_int(d, "d"), to_int(H, "H"),
                                       to_int(dk, "dk"), 0, ptr(stream), err, kErrLen);
    });
  });
}

overlap::dualgemm::DualGemmShape dualgemm_shape(std::int64_t M, std::int64_t N, std::int64_t K, std::int64_t fmt) {
  overlap::dualgemm::DualGemmShape s;
  s.M = M, s.N = N, s.K = K;
  s.format = overlap::dualgemm::format_from_code(fmt);  // nvfp4 then refused by dualgemm_cannot_implement
  return s;
}

void bind_dualgemm(nb::module_& m) {
  using namespace overlap::cuda;
  m.def("dualgemm_variants", [] { return dualgemm_variant_names(); });
  m.def("dualgemm_cannot_implement", [](const std::string& variant, std::int64_t M, std::int64_t N, std::int64_t K,
                                        std::int64_t fmt) {
    return dualgemm_cannot_implement(dualgemm_tiling(variant), dualgemm_shape(M, N, K, fmt)).value_or("");
  });
  m.def("dualgemm_forward", [](const std::string& variant, std::int64_t fmt, std::int64_t M, std::int64_t N,
                               std::int64_t K, std::uintptr_t a, std::uintptr_t b1, std::uintptr_t b2,
                               std::uintptr_t scale_a, std::uintptr_t scale_b1, std::uintptr_t scale_b2, std::uintptr_t c,
                               std::uintptr_t stream) {
    checked_status([&](char* err) {
      return overlap_dualgemm_forward(variant.c_str(), int(fmt), 1, M, N, K, ptr(a), ptr(b1), ptr(b2),
                                      ptr<const float>(scale_a), ptr<const float>(scale_b1), ptr<const float>(scale_b2),
                                      ptr(c), ptr(stream), err, kErrLen);
    });
  });
}

}  // namespace

NB_MODULE(_cuda_ops, m) {
  m.doc() = "overlap's CUDA kernels (sm_90a) through their C entry points; used by overlap.ops";
  // overlap::Error (an unknown variant name, a shape a variant cannot run) arrives as the same
  // overlap.OverlapError the rest of the package raises.
  // Held for the life of the process (released, never decref'd at exit).
  static PyObject* overlap_error = nb::object(nb::module_::import_("overlap._core").attr("OverlapError")).release().ptr();
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const overlap::Error& e) {
      PyErr_SetString(overlap_error, e.what());
    }
  });
  bind_gla(m);
  bind_dualgemm(m);
  bind_linrnn(m);
  bind_projchain(m);
}
