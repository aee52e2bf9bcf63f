#pragma once
// Internal: the launchers compiled by nvcc (projchain_activations.cu, projchain_fused_gemm.cu),
// called by projchain_forward.cpp. Each returns nullptr on success or a static description of
// the CUDA / CUTLASS error, so that this header needs no CUDA or CUTLASS headers.
#include <cstddef>
#include <cstdint>

struct CUstream_st;

namespace overlap::cuda::projchain_launch {

// A column slice of a row-major bf16 matrix: element (r, c) at ptr[r * ld + c].
struct Slice {
  const void* src;
  std::int64_t ld_src;
  void* dst;
  std::int64_t ld_dst;
  std::int64_t rows;
  std::int64_t cols;
};

// dst = per-head l2normalize(src), heads of `dk` columns (cols = heads · dk). src may be dst.
const char* l2norm_heads(const Slice& s, int dk, CUstream_st* stream);
// dst = silu(src), dst = sigmoid(src), elementwise; src may be dst.
const char* silu(const Slice& s, CUstream_st* stream);
const char* sigmoid(const Slice& s, CUstream_st* stream);

// The epilogue-fused GEMM: [q|k|v|g|alpha] = activations(x · w_packed).
struct FusedProblem {
  const void* x;         // bf16 [M, d]
  const void* w_packed;  // bf16 [ldw, d]: the packed weight, transposed, in the epilogue's column order
  void* q;
  void* k;
  void* v;
  void* g;
  void* alpha;
  std::int64_t M, d, ldw;
  int H, dk;
  // Tile order (projchain::fused_strip_n): column tiles per strip, at least 1.
  int strip_n = 1;
};

// Transposes the five weights into w_packed [ldw, d] (rows past 4·H·dk + H zeroed), the q|k|v|g
// rows permuted inside 16-row blocks (projchain_fused_columns.hpp; needs 16 | H·dk, true for the
// dk = 64 and 128 that epilogue_fused takes).
struct PackSources {
  const void* w[5];      // W_q, W_k, W_v, W_g [d, H·dk]; W_alpha [d, H]
  std::int64_t d, H, dk, ldw;
};
const char* pack_weights_k_major(const PackSources& s, void* w_packed, CUstream_st* stream);

// Whether the CUTLASS kernel accepts the problem (nullptr) or why not.
const char* fused_gemm_check(const FusedProblem& p);
std::size_t fused_gemm_workspace_bytes(const FusedProblem& p);
const char* fused_gemm(const FusedProblem& p, void* workspace, CUstream_st* stream);

}  // namespace overlap::cuda::projchain_launch
