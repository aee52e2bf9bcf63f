#pragma once
// The C entry points of the CUDA kernels (cuda/<workload>/<workload>_capi.cpp), declared for
// cuda_ops_module.cpp. python/CMakeLists.txt force-includes this file into the compilation of
// each *_capi.cpp, so a declaration here that no longer matches its definition there is a
// compile error ("conflicting declaration of C function"), not a crash at run time.
// Every function reports failure through its return value and the message in `err`.

extern "C" {

// cuda/gla/gla_capi.cpp
long long overlap_gla_workspace_bytes(const char* variant, int B, int T, int H, int K, int V, char* err,
                                      int err_len);
int overlap_gla_forward(const char* variant, const void* q, const void* k, const void* v, const float* g,
                        const float* h0, void* o, float* hT, void* workspace, int B, int T, int H, int K, int V,
                        double scale, void* stream, char* err, int err_len);
int overlap_gla_forward_saving_states(const char* variant, const void* q, const void* k, const void* v,
                                      const float* g, const float* h0, void* o, float* hT, void* states,
                                      void* workspace, int B, int T, int H, int K, int V, double scale, void* stream,
                                      char* err, int err_len);
long long overlap_gla_backward_workspace_bytes(const char* variant, int B, int T, int H, int K, int V, int want_hT,
                                               char* err, int err_len);
int overlap_gla_backward(const char* variant, const void* q, const void* k, const void* v, const float* g,
                         const float* h0, const void* d_o, const float* dhT, void* dq, void* dk, void* dv, float* dg,
                         float* dh0, const void* states, void* workspace, int B, int T, int H, int K, int V,
                         double scale, void* stream, char* err, int err_len);
long long overlap_gla_varlen_workspace_bytes(const char* backward_variant, int num_seqs, int T, int H, int K, int V,
                                             char* err, int err_len);
int overlap_gla_forward_varlen(const char* variant, const void* q, const void* k, const void* v, const float* g,
                               const float* h0, void* o, float* hT, void* states, void* workspace,
                               const int* cu_seqlens, int num_seqs, int B, int T, int H, int K, int V, double scale,
                               void* stream, char* err, int err_len);
int overlap_gla_backward_varlen(const char* variant, const void* q, const void* k, const void* v, const float* g,
                                const float* h0, const void* d_o, const float* dhT, void* dq, void* dk, void* dv,
                                float* dg, float* dh0, const void* states, void* workspace, const int* cu_seqlens,
                                int num_seqs, int B, int T, int H, int K, int V, double scale, void* stream, char* err,
                                int err_len);

// cuda/linrnn/linrnn_capi.cpp
long long overlap_linrnn_workspace_bytes(const char* variant, int B, int T, int d, int dv, char* err, int err_len);
int overlap_linrnn_forward(const char* variant, const void* x, const void* W, const void* w_packed, const float* h0,
                           void* y, float* hT, void* workspace, int B, int T, int d, int dv, void* stream, char* err,
                           int err_len);
long long overlap_linrnn_packed_weight_bytes(int B, int T, int d, int dv, char* err, int err_len);
int overlap_linrnn_pack_weight(const void* W, void* w_packed, int B, int T, int d, int dv, void* stream, char* err,
                               int err_len);

// cuda/projchain/projchain_capi.cpp
long long overlap_projchain_packed_ld(int B, int T, int d, int H, int dk, char* err, int err_len);
long long overlap_projchain_workspace_bytes(const char* variant, int B, int T, int d, int H, int dk, int packed,
                                            char* err, int err_len);
int overlap_projchain_pack(const char* variant, const void* w_q, const void* w_k, const void* w_v, const void* w_g,
                           const void* w_alpha, void* w_packed, int B, int T, int d, int H, int dk, void* stream,
                           char* err, int err_len);
int overlap_projchain_forward(const char* variant, const void* x, const void* w_q, const void* w_k, const void* w_v,
                              const void* w_g, const void* w_alpha, const void* w_packed, void* q, void* k, void* v,
                              void* g, void* alpha, void* workspace, int B, int T, int d, int H, int dk,
                              int fused_strip_n, void* stream, char* err, int err_len);

// cuda/dualgemm/dualgemm_capi.cpp
int overlap_dualgemm_variant_count();
const char* overlap_dualgemm_variant_name(int i);
int overlap_dualgemm_cannot_implement(const char* variant, int fmt, long long L, long long M, long long N, long long K,
                                      char* err, int err_len);
int overlap_dualgemm_forward(const char* variant, int fmt, long long L, long long M, long long N, long long K,
                             const void* a, const void* b1, const void* b2, const float* a_scale,
                             const float* b1_scale, const float* b2_scale, void* c, void* stream, char* err,
                             int err_len);

}  // extern "C"
