#pragma once
// Internal: the backward's launchers compiled by nvcc (gla_backward_launch.cu), called by
// gla_backward.cpp. Returns a cudaError_t as int so that this header needs no CUDA headers.
#include "gla/gla_varlen.cuh"

struct CUstream_st;

namespace overlap::cuda::gla_backward_launch {

struct Problem {
  const void* q;
  const void* k;
  const void* v;
  const float* g;
  const void* do_;
  const float* h0;    // or null
  const float* dhT;   // or null
  void* states;   // bf16 [B,H,NT,K,V]
  void* dstates;  // bf16 [B,H,NT,K,V]
  void* dq;
  void* dk;
  void* dv;
  float* dg;
  float* dh0;  // or null
  int B, T, H, K, V;
  float scale;
  gla_varlen::Plan varlen;  // cu_seqlens null: a dense batch
  int max_chunks;           // a variable-length batch: gla_varlen_max_chunks
};

// Pass 1: S_n for every chunk.
int states(const Problem& p, CUstream_st* stream);
// Pass 2: dS_n for every chunk, and dh0.
int state_grads(const Problem& p, CUstream_st* stream);
// Pass 3: dq, dk, dv, dg, one CTA per chunk.
int chunk_grads(const Problem& p, CUstream_st* stream);
// Pass 3 warp-specialized: a persistent CTA an SM, a producer warpgroup loading the next
// chunk's inputs as the compute warps free their buffers (gla_chunk_grad_ws_kernel.cuh).
int chunk_grads_ws(const Problem& p, CUstream_st* stream);

}  // namespace overlap::cuda::gla_backward_launch
