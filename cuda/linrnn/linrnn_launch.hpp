#pragma once
// Internal: the launchers compiled by nvcc, called by linrnn_forward.cpp. Each returns a
// cudaError_t as int so that this header needs no CUDA headers.
#include <cstddef>

struct CUstream_st;

namespace overlap::cuda::linrnn_launch {

struct Problem {
  const void* x;    // bf16 [B, T, d]
  const void* w;    // bf16 [d, 3 dv]
  const float* h0;  // [B, dv] or null
  void* y;          // bf16 [B, T, dv]
  float* hT;        // [B, dv] or null
  int B, T, d, dv;
};

// Look-back workspace bytes for the scan tiles of a launch (zero-filled once before first use).
std::size_t scan_lookback_bytes(const Problem& p);

// proj: bf16 [B*T, 3 dv] rows (u | a_pre | z), from the library GEMM.
int scan_gate(const Problem& p, const void* proj, void* lookback, CUstream_st* stream);            // semi_fused
int scan_only(const Problem& p, const void* proj, float* h, void* lookback, CUstream_st* stream);  // three_kernel
int gate_only(const Problem& p, const void* proj, const float* h, CUstream_st* stream);           // three_kernel
int full_fused(const Problem& p, CUstream_st* stream);

// chunk_fused (linrnn_chunk_fused.cu) on the weight packed by pack_weight (linrnn_pack.cu):
// [channel blocks * 192, d] K-major, rows [u | a | z] of each block of 64 channels, zero rows
// past dv. The two chunk_fused functions return a message (null: fine) rather than an
// error code: CUTLASS reports its own statuses.
std::size_t packed_weight_bytes(const Problem& p);
int pack_weight(const Problem& p, void* w_packed, CUstream_st* stream);
std::size_t chunk_fused_lookback_bytes(const Problem& p);
const char* chunk_fused_check(const Problem& p);
const char* chunk_fused(const Problem& p, const void* w_packed, void* lookback, CUstream_st* stream);

}  // namespace overlap::cuda::linrnn_launch
