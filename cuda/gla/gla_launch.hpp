#pragma once
// Internal: the launchers compiled by nvcc (gla_launch.cu), called by gla_forward.cpp.
// Returns a cudaError_t as int so that this header needs no CUDA headers.
#include "gla/gla_varlen.cuh"

struct CUstream_st;

namespace overlap::cuda::gla_launch {

struct Problem {
  const void* q;
  const void* k;
  const void* v;
  const float* g;
  const float* h0;
  float* hT;
  void* o;
  void* states;  // bf16 [B,H,NT,K,V] (materialized carry)
  int B, T, H, K, V;
  float scale;
  // Pingpong, materialized carry: work units per CTA (1 or 2); 0 = gla::pingpong_units_per_cta.
  int units_per_cta;
  // Pingpong, fused carry: V columns per CTA (64 or 128); 0 = gla::pingpong_fused_block_v.
  int block_v;
  // Pingpong, fused carry: CTAs per (b, h, v-block) along T, 1-8 (at most one per chunk);
  // 0 = gla::PingpongFusedSegments::count_for.
  int segments;
  // A variable-length batch (pingpong_fused only; B = 1, h0 and hT one per sequence, states in
  // gla_varlen.hpp's layout): the plan gla_varlen_plan built. cu_seqlens null: dense.
  gla_varlen::Plan varlen;
};

// stages: 1 = sequential, 2 = pipelined. chunks_per_cta: the output kernel's chunk group.
int fused(const Problem& p, int stages, CUstream_st* stream);
int materialized(const Problem& p, int stages, int chunks_per_cta, CUstream_st* stream);
// The pingpong schedule (gla_pingpong_launch.cu): TMA producer, two wgmma consumer warpgroups.
int pingpong_fused(const Problem& p, CUstream_st* stream);
int pingpong_materialized(const Problem& p, int chunks_per_cta, CUstream_st* stream);

}  // namespace overlap::cuda::gla_launch
