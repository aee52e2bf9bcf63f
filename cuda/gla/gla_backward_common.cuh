#pragma once
// What the two gla backward kernels share (gla_state_walk_kernel.cuh, gla_chunk_grad_kernel.cuh):
// their parameters, the in-chunk cumulative sum of the gates, and the mma.sync operand loads.
//
// The backward runs in three passes over 64-token chunks (ref/gla/chunked_backward.cpp is the
// same algorithm in fp32 on the CPU):
//   1. states      the chunks walked forwards (gla_state_walk_kernel.cuh): S_n entering every
//                  chunk, bf16;
//   2. state grads the same walk backwards: dS_n = dL/dS at the end of chunk n (bf16), and dh0;
//   3. chunk grads one CTA per (b, h, chunk), all chunks at once: dq, dk, dv and dg from the
//                  chunk's q, k, v, g, do, S_n and dS_n.
//
// The gates. dg_t is the sum over u >= t of dL/da_u = q_u * dq_u - k_u * dk_u (a_u the
// cumulative gate). Summed naively across chunks, that sum cancels: the pairs (u, j) with both
// u, j >= t contribute q_u dA D k_j to the first term and k_j dA D q_u to the second, and the
// inter-chunk terms cancel against the later chunks' state. The kernels keep only what does not
// cancel. For t in chunk n (b the in-chunk cumulative log2-gate, b_last its last row):
//   dg_t = 2^{b_last} R_n + sum_{u >= t} (q_u * dq_u - k_u * dk_u) + sum_{j in chunk} k_j * dk^inter_j
// with R_n = rowsum(dS_n * S_n) (pass 3, from the bf16 copies), dk^inter_j = 2^{b_last - b_j}
// (dS_n v_j), and the self pairs (u = j) left out of both dq_u and dk_u in the sum (they cancel
// exactly). What is left cancels only between pairs inside the chunk, which pass 3 forms from the
// same rounded operands on both sides (up to the order of fp32 sums), and no scan runs across
// chunks. Where dg is 0 (T = 1 without h0) the test measures 0.
#include <cstdint>
#include <cuda_bf16.h>

#include "common/mma_operands.cuh"
#include "common/ptx_sm80.cuh"
#include "common/sm90_ptx.cuh"
#include "gla/gla_backward_tiling.hpp"
#include "gla/gla_gate_cumsum.cuh"
#include "gla/gla_varlen.cuh"

namespace overlap::cuda::gla_backward_kernel {

using bf16 = __nv_bfloat16;
namespace ptx = overlap::cuda::ptx;
using namespace overlap::cuda::mma;


struct Params {
  const bf16* q;      // [B,T,H,K]
  const bf16* k;      // [B,T,H,K]
  const bf16* v;      // [B,T,H,V]
  const float* g;     // [B,T,H,K]
  const bf16* do_;    // [B,T,H,V]
  const float* h0;    // [B,H,K,V] or null (a zero initial state)
  const float* dhT;   // [B,H,K,V] or null (no gradient into hT)
  bf16* states;       // [B,H,NT,K,V]: S_n entering chunk n (pass 1)
  bf16* dstates;      // [B,H,NT,K,V]: dL/dS at the end of chunk n (pass 2)
  bf16* dq;            // [B,T,H,K]
  bf16* dk;            // [B,T,H,K]
  bf16* dv;            // [B,T,H,V]
  float* dg;           // [B,T,H,K]
  float* dh0;          // [B,H,K,V] or null
  int T, H, V;
  int num_chunks;
  float scale;
  // A variable-length batch (gla_varlen.hpp; B = 1): h0, dhT, dh0 one per sequence, the states
  // in its layout. cu_seqlens null: a dense batch.
  gla_varlen::Plan varlen;
};

// The chunk kernel's compute threads, 0 .. kChunkGradThreads-1, meet at named barrier 1: all of
// the pipelined kernel's threads, the consumers of the warp-specialized one (whose producer
// warpgroup does not take part).
constexpr int kChunkBarrier = 1;
__device__ __forceinline__ void chunk_sync() { sm90::named_sync(kChunkBarrier, kChunkGradThreads); }
// chunk_sync that also returns whether `pred` held in every compute thread.
__device__ __forceinline__ bool chunk_sync_and(bool pred) {
  return sm90::named_sync_and(kChunkBarrier, kChunkGradThreads, pred);
}
struct ChunkBarrier {
  __device__ void operator()() const { chunk_sync(); }
};

// g -> log2(e) * inclusive cumulative sum over the chunk's rows, in place (gla_gate_cumsum.cuh),
// by the chunk kernel's compute threads.
template <int K>
__device__ void cumsum_log2(float* b, int ld, float* totals) {
  gla_gates::cumsum_log2<K, kChunkGradThreads, kChunk, ChunkBarrier>(b, ld, totals);
}

// acc + <a, b> for 8 bf16 each (16-byte pieces of two rows), summed pairwise in order.
__device__ __forceinline__ float dot8_bf16(const uint4& a, const uint4& b, float acc) {
  const std::uint32_t as[4] = {a.x, a.y, a.z, a.w}, bs[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 x = ptx::unpack_bf16(as[i]), y = ptx::unpack_bf16(bs[i]);
    acc += x.x * y.x + x.y * y.y;
  }
  return acc;
}

// Element offsets of one sequence's head h (a batch row's, or a packed sequence's) in the
// token-major tensors and in the per-sequence arrays, and its length.
struct Slice {
  long long qk_row0;  // (its first step, h, 0) in q, k, g, dq, dk, dg
  long long v_row0;   // (its first step, h, 0) in v, do, dv
  long long state0;   // (sequence, h, 0, 0) in h0, dhT, dh0
  long long states0;  // its S_0 of head h in states, dstates
  int T;              // its steps
  int num_chunks;     // ceil(T / 64)
};

// Sequence i of the batch: batch row i of a dense batch, or the packed sequence i.
template <int K>
__device__ __forceinline__ Slice slice_of(const Params& p, int i, int h) {
  long long t0 = (long long)i * p.T, chunk0 = (long long)i * p.num_chunks;
  int length = p.T, chunks = p.num_chunks;
  if (p.varlen.cu_seqlens) {
    const gla_varlen::Sequence q = gla_varlen::sequence(p.varlen, i);
    t0 = q.t_begin, length = q.length, chunks = q.chunks, chunk0 = q.chunk0;
  }
  Slice s;
  s.qk_row0 = (t0 * p.H + h) * K;
  s.v_row0 = (t0 * p.H + h) * p.V;
  s.state0 = ((long long)i * p.H + h) * K * p.V;
  // [H, chunks, K, V] from chunk state chunk0 on: a dense batch's [B, H, NT, K, V].
  s.states0 = (chunk0 * p.H + (long long)h * chunks) * K * p.V;
  s.T = length;
  s.num_chunks = chunks;
  return s;
}

// cp.async of Rows rows of Cols elements (bf16 or fp32) from a strided source into shared
// memory with row stride ld, by Threads threads (tid: this one's index among them); rows at or
// past `valid` arrive as zeros. A thread keeps one 16-byte column of the rows and steps down
// them by pointer, so that a piece costs an add and a compare rather than a division and a
// 64-bit multiply.
template <int Threads, int Rows, int Cols, class Elem>
__device__ __forceinline__ void load_rows(Elem* dst, int ld, const Elem* src, long long src_stride, int valid,
                                          int tid) {
  constexpr int kPer16 = 16 / sizeof(Elem);
  constexpr int kPieces = Cols / kPer16;       // 16-byte pieces of a row
  constexpr int kRowStep = Threads / kPieces;  // rows between one thread's pieces
  static_assert(kPieces * kPer16 == Cols && kRowStep * kPieces == Threads && Rows % kRowStep == 0,
                "the threads tile the rows in whole 16-byte columns");
  const int r0 = tid / kPieces, c = (tid % kPieces) * kPer16;
  const Elem* s = src + r0 * src_stride + c;
  Elem* d = dst + r0 * ld + c;
  const long long step = kRowStep * src_stride;
#pragma unroll
  for (int i = 0; i < Rows / kRowStep; ++i, s += step) {
    const bool in = r0 + i * kRowStep < valid;
    ptx::cp_async_16(d + i * kRowStep * ld, in ? s : src, in ? 16 : 0);
  }
}

}  // namespace overlap::cuda::gla_backward_kernel
