#pragma once
// gla backward, pass 3 (gla_backward_common.cuh): one CTA per (b, h, chunk) turns the chunk's
// q, k, v, g, do, its entry state S_n and the gradient at its end dS_n into dq, dk, dv, dg.
// With b the in-chunk cumulative log2-gate, D_{t,j} = 2^{b_t - b_j} (j <= t) and s the scale:
//   dA_{t,j} = s <do_t, v_j> (j <= t)          A_{t,j} = s <q_t D_{t,j}, k_j>
//   dq_t = s 2^{b_t} (S_n do_t)  + sum_j dA_{t,j} D_{t,j} k_j
//   dk_j = 2^{b_last-b_j} (dS_n v_j) + sum_t dA_{t,j} D_{t,j} q_t
//   dv_j = dS_n^T (k_j 2^{b_last-b_j}) + sum_t A_{t,j} do_t
//   dg_t = 2^{b_last} R_n + sum_{u >= t in chunk} (q_u dq_u - k_u dk_u) + sum_j k_j dk^inter_j
//
// Two ways to form the decays, chosen per chunk: where no channel decays by more than 2^-96
// over the chunk, one anchor at its start (gla_chunk_grad_single_anchor.cuh: every sum one
// GEMM); otherwise an anchor per 16-row sub-chunk and the pairs inside one summed directly
// (gla_chunk_grad_anchored.cuh).
//
// Eight warps, phases separated by barriers:
//   A  warps 0-3: dA for rows 16w.. (do v^T);  warps 4-7: A for rows 16(w-4)..
//   B  all warps: dq and dk for rows 16(w%4).., K columns half w/4
//   C  q dq - k dk through shared memory, reverse-summed per column -> dg
//   D  all warps: dv for rows 16(w%4).., V columns half w/4
#include "gla/gla_chunk_grad_anchored.cuh"
#include "gla/gla_chunk_grad_parts.cuh"
#include "gla/gla_chunk_grad_single_anchor.cuh"

namespace overlap::cuda::gla_backward_kernel {

// The chunk's four input groups, in the order the phases first read them.
enum class InputGroup { Gates = 0, QK = 1, DoV = 2, States = 3 };

// One chunk's work, by the kChunkGradThreads compute threads, from inputs that `in` says when
// they have landed (in.wait(group), for this thread; a barrier follows each), telling `in` when
// the compute threads are done with them (in.release_after_gates / in.release_after_dv, given
// whether the chunk took the single-anchor path). The pipelined kernel (cp.async groups its
// threads issued themselves) and the warp-specialized one (gla_chunk_grad_ws_kernel.cuh: a
// producer warpgroup's, through mbarriers) share these phases.
// The model charges the single-anchor path's compiled code by these `sass:` regions
// (sim/models/generated/gla_chunk_grad_sass.hpp, tools/make_sass_mix.sh): the all.* phases run by
// every warp, two a scheduler; phase A by warps 0-3 (dA) beside warps 4-7 (A) on the same
// schedulers.
// sass-beside: phaseA.dA=dA.rows/A.rows
// sass-beside: phaseA.A=A.rows/dA.rows
template <int K, int V, class Inputs>
__device__ __forceinline__ void chunk_grads(const Params& p, const Slice& sl, unsigned char* smem, int n, Inputs& in) {
  using L = ChunkGradLayout<K, V>;
  const int warp = threadIdx.x >> 5;
  const int rows0 = (warp % 4) * kSub;  // the 16 rows this warp serves
  const int t0 = n * kChunk;
  const long long qk_stride = (long long)p.H * K, v_stride = (long long)p.H * V;
  float* b = reinterpret_cast<float*>(smem + L::kB);

  in.wait(InputGroup::Gates);
  chunk_sync();
  cumsum_log2<K>(b, L::kBLd, reinterpret_cast<float*>(smem + L::kTotals));  // sass:all.cumsum {
  chunk_sync();  // the last row of b is read below
  const bool mild = chunk_sync_and(threadIdx.x >= K || b[(kChunk - 1) * L::kBLd + threadIdx.x] >=
                                                           single_anchor::kMinLastGate);  // } sass:all.cumsum
  in.wait(InputGroup::QK);
  chunk_sync();

  // Phase B: every warp forms dq and dk for its 16 rows and half the K columns, so that the
  // triangular intra-chunk sums (row block w: w + 1 key blocks for dq, 4 - w for dk) add up to
  // the same work in every warp, and q dq - k dk is formed in the warp that holds both.
  constexpr int kNT = K / 16;  // n-tiles of 8 columns in half of K
  const int c0 = (warp / 4) * (K / 2);
  float dq_acc[kNT][4] = {}, dk_acc[kNT][4] = {};
  float* col_sums = reinterpret_cast<float*>(smem + L::kColSums) + (warp % 4) * K;
  const float* diag = reinterpret_cast<const float*>(smem + L::kDAdiag) + (warp % 4) * kSub * kSub;
  bf16* dq = p.dq + sl.qk_row0 + t0 * qk_stride;
  bf16* dk = p.dk + sl.qk_row0 + t0 * qk_stride;
  const bf16* q_smem = reinterpret_cast<const bf16*>(smem + L::kQ);
  const bf16* k_smem = reinterpret_cast<const bf16*>(smem + L::kK);
  if (mild) {
    const float2 e_last = single_anchor::last_gate_factors<K, V>(smem);  // sass:all.self_dots {}
    single_anchor::self_dots<K, V>(smem);                                // sass:all.self_dots {}
    chunk_sync();  // q, k and b_last are read before they change in place
    single_anchor::decay_operands<K, V>(smem, e_last);  // sass:all.decay.loops {}
    in.wait(InputGroup::DoV);
    chunk_sync();  // and the phase before it has written what this one reads
    if (warp < 4) form_dA<K, V>(smem, rows0, p.scale);  // sass:dA.rows {}
    else single_anchor::form_A<K, V>(smem, rows0, p.scale);  // sass:A.rows {}
    in.wait(InputGroup::States);
    chunk_sync();  // and the phase before it has written what this one reads
    state_dots<K, V>(smem);  // sass:all.dq_dk { read in phase C, after several barriers
    single_anchor::form_dq<K, V>(dq_acc, smem, rows0, c0, p.scale);
    store_grad_rows(dq_acc, diag, k_smem, L::kQkLd, b, L::kBLd, dq, qk_stride, rows0, c0, t0, sl.T);
    single_anchor::form_dk<K, V>(dk_acc, smem, rows0, c0, col_sums);
    store_grad_rows<kNT, true>(dk_acc, diag, q_smem, L::kQkLd, b, L::kBLd, dk, qk_stride, rows0, c0, t0, sl.T);  // } sass:all.dq_dk
  } else {
    in.wait(InputGroup::DoV);
    chunk_sync();  // and the phase before it has written what this one reads
    if (warp < 4) form_dA<K, V>(smem, rows0, p.scale);
    else anchored::form_A<K, V>(smem, rows0, p.scale);
    in.wait(InputGroup::States);
    chunk_sync();  // and the phase before it has written what this one reads
    state_dots<K, V>(smem);
    anchored::form_dq<K, V>(dq_acc, smem, rows0, c0, p.scale);
    store_grad_rows(dq_acc, diag, k_smem, L::kQkLd, nullptr, 0, dq, qk_stride, rows0, c0, t0, sl.T);
    anchored::form_dk<K, V>(dk_acc, smem, rows0, c0, col_sums);
    store_grad_rows(dk_acc, diag, q_smem, L::kQkLd, nullptr, 0, dk, qk_stride, rows0, c0, t0, sl.T);
  }
  chunk_sync();  // S_n, v and dA are no longer read: their space takes q dq - k dk

  gates_grad<K, V>(p, smem, dq_acc, dk_acc, rows0, c0, n, mild, p.dg + sl.qk_row0 + t0 * qk_stride, sl.T);  // sass:all.dg {}
  in.release_after_gates(mild);

  float dv[V / 16][4] = {};
  const int v0 = (warp / 4) * (V / 2);
  dv_from_A<K, V>(dv, smem, rows0, v0);                                // sass:all.dv {}
  if (mild) single_anchor::dv_from_state<K, V>(dv, smem, rows0, v0);  // sass:all.dv {}
  else anchored::dv_from_state<K, V>(dv, smem, rows0, v0);
  in.release_after_dv(mild);
  store_rows_bf16(dv, p.dv + sl.v_row0 + t0 * v_stride + v0, v_stride, rows0, t0, sl.T);  // sass:all.dv {}
}

// The pipelined kernel's inputs: the four cp.async groups each thread issued at the start
// (load_chunk_grad_inputs), waited for in order; nothing to release (one chunk a CTA).
struct OwnLoads {
  __device__ void wait(InputGroup g) {
    if (g == InputGroup::Gates) ptx::cp_async_wait<3>();
    else if (g == InputGroup::QK) ptx::cp_async_wait<2>();
    else if (g == InputGroup::DoV) ptx::cp_async_wait<1>();
    else ptx::cp_async_wait<0>();
  }
  __device__ void release_after_gates(bool) {}
  __device__ void release_after_dv(bool) {}
};

// Chunk i of the launch: a dense batch's (n, h, b) with n fastest, so that the CTAs in flight
// walk one head's consecutive chunks; a variable-length batch's chunk state i / H of head i % H
// (the heads of a chunk side by side, so that the CTAs in flight read whole rows of [T, H, K]
// rather than one head's 2 or 4 hundred bytes each), up to a bound on the chunk count (false:
// past the true count, nothing to do).
struct ChunkRef {
  int n, h, b;
};
__device__ __forceinline__ bool chunk_at(const Params& p, long long i, ChunkRef& c) {
  if (p.varlen.cu_seqlens) {
    c.h = int(i % p.H);
    const int state = int(i / p.H);
    c.b = p.varlen.chunk_seq[state];
    if (c.b < 0) return false;
    c.n = state - p.varlen.chunk_begin[c.b];
    return true;
  }
  c.n = int(i % p.num_chunks);
  const long long bh = i / p.num_chunks;
  c.h = int(bh % p.H);
  c.b = int(bh / p.H);
  return true;
}

// Two CTAs an SM where two layouts fit (K = V = 64): one CTA's loads then overlap the other's
// work, which asks the compiler for at most 128 registers a thread.
template <int K, int V>
constexpr int kChunkGradMinBlocks = 2 * (ChunkGradLayout<K, V>::kBytes + 1024) <= 228 * 1024 ? 2 : 1;

// The pipelined pass 3: one CTA per chunk, loading its own inputs. Grid: (chunks, H, B) for a
// dense batch, (chunk state bound x H) for a variable-length one.
template <int K, int V>
__global__ void __launch_bounds__(kChunkGradThreads, (kChunkGradMinBlocks<K, V>)) gla_chunk_grad_kernel(const Params p) {
  extern __shared__ __align__(128) unsigned char smem[];
  ChunkRef c;
  if (!chunk_at(p, blockIdx.x + (long long)p.num_chunks * (blockIdx.y + (long long)p.H * blockIdx.z), c)) return;
  const Slice sl = slice_of<K>(p, c.b, c.h);
  load_chunk_grad_inputs<K, V>(chunk_sources<K, V>(p, sl, c.n), smem);
  OwnLoads in;
  chunk_grads<K, V>(p, sl, smem, c.n, in);
}

}  // namespace overlap::cuda::gla_backward_kernel
