#pragma once
// gla backward, pass 3, the single-anchor path (gla_chunk_grad_kernel.cuh): for chunks whose
// gates decay no channel by more than 2^-96 (every chunk at the usual gate strengths). With
// E = 2^b (b the in-chunk cumulative log2-gate, so 2^-96 <= E <= 1) every decay factor splits at
// the chunk's start, D_{t,j} = E_t / E_j, and each sum is one tensor-core GEMM of operands decayed
// once per element: q~ = q E and k~ = k / E (bf16, at most 2^96 |k|, in range), written over q
// and k, and kF = k E_last / E; E is written over b:
//   A     = s q~ k~^T                          (j <= t)
//   dq_t  = E_t [ s (S_n do_t) + sum_{j<t} dA_{t,j} k~_j ]              + dA_{t,t} k_t
//   dk_j  = [ E_last (dS_n v_j) + sum_{t>j} dA_{t,j} q~_t ] / E_j       + dA_{j,j} q_j
//   dv_j  = sum_{t>=j} A_{t,j} do_t + dS_n^T kF_j
// The warps keep the bracketed sums (acc): q~ acc and k~ acc are q dq and k dk without the self
// pairs, and a pair (t, j) reaches both as the same product of the same rounded q~_t, k~_j, so
// their sums over a chunk cancel as they should (gla_backward_common.cuh).
#include "gla/gla_chunk_grad_parts.cuh"

namespace overlap::cuda::gla_backward_kernel::single_anchor {

// Below this (log2 units) some channel of the chunk decays by more than 2^-96: the anchored path.
constexpr float kMinLastGate = -96.f;

// All threads: <q_t, k_t> from the undecayed rows (A's diagonal: no decay, and exact here, where
// the decayed copies' roundings would not cancel), before decay_operands changes them in place:
// 8 threads a row, 16-byte pieces (the 8 threads of a shared-memory wavefront read one row's 128
// contiguous bytes), rows i / 8 and i / 8 + 32.
template <int K, int V>
__device__ void self_dots(unsigned char* smem) {
  using L = ChunkGradLayout<K, V>;
  const bf16* q = reinterpret_cast<const bf16*>(smem + L::kQ);
  const bf16* k = reinterpret_cast<const bf16*>(smem + L::kK);
  float* self_dots = reinterpret_cast<float*>(smem + L::kSelfDots);
  {
    constexpr int kRowsAtOnce = kChunkGradThreads / 8;
    static_assert(kChunk == 2 * kRowsAtOnce && K % 64 == 0, "two rows a thread, whole 64-column passes");
    const int piece = (threadIdx.x % 8) * 8;
    float dot[2] = {0.f, 0.f};
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int t = threadIdx.x / 8 + h * kRowsAtOnce;
#pragma unroll
      for (int cc = piece; cc < K; cc += 64)
        dot[h] = dot8_bf16(*reinterpret_cast<const uint4*>(q + t * L::kQkLd + cc),
                           *reinterpret_cast<const uint4*>(k + t * L::kQkLd + cc), dot[h]);
    }
#pragma unroll
    for (int m = 1; m < 8; m <<= 1) {
      dot[0] += __shfl_xor_sync(0xffffffffu, dot[0], m);
      dot[1] += __shfl_xor_sync(0xffffffffu, dot[1], m);
    }
    if (threadIdx.x % 8 == 0) {
      self_dots[threadIdx.x / 8] = dot[0];
      self_dots[threadIdx.x / 8 + kRowsAtOnce] = dot[1];
    }
  }
}

// 2^{b_last} for the column pair this thread decays (decay_operands), read before the barrier
// after which decay_operands overwrites b.
template <int K, int V>
__device__ float2 last_gate_factors(const unsigned char* smem) {
  using L = ChunkGradLayout<K, V>;
  const int c = (threadIdx.x % (K / 2)) * 2;
  const float2 bl = *reinterpret_cast<const float2*>(reinterpret_cast<const float*>(smem + L::kB) + (kChunk - 1) * L::kBLd + c);
  return make_float2(ptx::exp2_approx(bl.x), ptx::exp2_approx(bl.y));
}

// All threads, after self_dots and a barrier (q and k are read before they change in place):
// q <- q 2^b, k <- k 2^-b (bf16, in place), kF = k 2^{b_last - b} (bf16), and b <- 2^b (fp32,
// in place), in one pass of two MUFU an element: kF's factor is 2^-b times e_last = 2^{b_last}
// (last_gate_factors; a per-channel constant: the product stays in fp32 range, 2^-96 <= 2^{b_last}).
template <int K, int V>
__device__ void decay_operands(unsigned char* smem, float2 e_last) {
  using L = ChunkGradLayout<K, V>;
  static_assert(kChunkGradThreads % (K / 2) == 0, "a thread keeps one column pair in every row it visits");
  bf16* q = reinterpret_cast<bf16*>(smem + L::kQ);
  bf16* k = reinterpret_cast<bf16*>(smem + L::kK);
  bf16* kf = reinterpret_cast<bf16*>(smem + L::kKF);
  float* b = reinterpret_cast<float*>(smem + L::kB);
  const int c = (threadIdx.x % (K / 2)) * 2;
  // Rows t0, t0 + kRowStep, ...: read kBatch of them before writing any back, so that the
  // reads are not held behind the in-place writes the compiler cannot tell apart from them.
  constexpr int kRowStep = kChunkGradThreads / (K / 2), kBatch = 8;
  static_assert(kChunk % (kRowStep * kBatch) == 0, "whole batches of rows");
  const int t0 = threadIdx.x / (K / 2);
#pragma unroll 1
  for (int t1 = t0; t1 < kChunk; t1 += kRowStep * kBatch) {
    float2 x[kBatch], qv[kBatch], kv[kBatch];
#pragma unroll
    for (int i = 0; i < kBatch; ++i) {
      const int t = t1 + i * kRowStep;
      x[i] = *reinterpret_cast<const float2*>(b + t * L::kBLd + c);
      qv[i] = ptx::unpack_bf16(*reinterpret_cast<const std::uint32_t*>(q + t * L::kQkLd + c));
      kv[i] = ptx::unpack_bf16(*reinterpret_cast<const std::uint32_t*>(k + t * L::kQkLd + c));
    }
#pragma unroll
    for (int i = 0; i < kBatch; ++i) {
      const int t = t1 + i * kRowStep;
      const float2 e = make_float2(ptx::exp2_approx(x[i].x), ptx::exp2_approx(x[i].y));
      const float2 r = make_float2(ptx::exp2_approx(-x[i].x), ptx::exp2_approx(-x[i].y));
      *reinterpret_cast<std::uint32_t*>(q + t * L::kQkLd + c) = ptx::pack_bf16(qv[i].x * e.x, qv[i].y * e.y);
      *reinterpret_cast<std::uint32_t*>(k + t * L::kQkLd + c) = ptx::pack_bf16(kv[i].x * r.x, kv[i].y * r.y);
      *reinterpret_cast<std::uint32_t*>(kf + t * L::kQkLd + c) =
          ptx::pack_bf16(kv[i].x * (r.x * e_last.x), kv[i].y * (r.y * e_last.y));
      *reinterpret_cast<float2*>(b + t * L::kBLd + c) = e;
    }
  }
}

// Phase A, warps 4-7: A = s q~ k~^T for rows i0..i0+15, masked to j <= t, zero right of it; its
// diagonal s <q_t, k_t> from the undecayed rows (decay_operands).
template <int K, int V>
__device__ void form_A(unsigned char* smem, int i0, float scale) {
  using L = ChunkGradLayout<K, V>;
  const bf16* q = reinterpret_cast<const bf16*>(smem + L::kQ);
  const bf16* k = reinterpret_cast<const bf16*>(smem + L::kK);
  bf16* A = reinterpret_cast<bf16*>(smem + L::kA);
  const float* self_dots = reinterpret_cast<const float*>(smem + L::kSelfDots);
  const int lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3;
  float acc[kChunk / 8][4] = {};
  causal_rows_product<K>(acc, q, k, L::kQkLd, i0);
#pragma unroll
  for (int nt = 0; nt < kChunk / 8; ++nt)
#pragma unroll
    for (int e = 0; e < 4; e += 2) {
      const int t = i0 + gq + (e >> 1) * 8, j = nt * 8 + 2 * tq;
      const float x0 = j < t ? acc[nt][e] : j == t ? self_dots[t] : 0.f;
      const float x1 = j + 1 < t ? acc[nt][e + 1] : j + 1 == t ? self_dots[t] : 0.f;
      *reinterpret_cast<std::uint32_t*>(A + t * L::kCLd + j) = ptx::pack_bf16(scale * x0, scale * x1);
    }
}

// Phase B: dq's bracket for rows i0..i0+15 and the 8 NT columns from c0:
// s (S_n do_t) + sum_{j<t} dA_{t,j} k~_j, over the key blocks up to the diagonal one (dA's bf16
// copy is zero on and right of the diagonal; the self pairs come back when stored).
template <int K, int V, int NT>
__device__ void form_dq(float (&acc)[NT][4], unsigned char* smem, int i0, int c0, float scale) {
  using L = ChunkGradLayout<K, V>;
  const bf16* k = reinterpret_cast<const bf16*>(smem + L::kK);
  const bf16* d_o = reinterpret_cast<const bf16*>(smem + L::kDo);
  const bf16* Sn = reinterpret_cast<const bf16*>(smem + L::kSn);
  const bf16* dA = reinterpret_cast<const bf16*>(smem + L::kDA);
  rows_times_state_t<K, V>(acc, d_o, Sn, i0, c0);
#pragma unroll
  for (int nt = 0; nt < NT; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc[nt][e] *= scale;
  for (int jc = 0; jc <= i0; jc += 16) {
    std::uint32_t a[4];
    a_rows(a, dA, L::kCLd, i0, jc);
    mma_b_rows(acc, a, k, L::kQkLd, c0, jc);
  }
}

// One halving exchange of form_dk's column sums with the lane across `Mask`: sums[0..Half) become
// the pairwise totals of the half this lane keeps (the upper one where its Mask bit is set);
// returns that half's offset. Compile-time indices throughout (a select between two array
// elements would become a select of their address and put the array in local memory).
template <int Half, int Mask, int N>
__device__ __forceinline__ int halve_sums(float (&sums)[N], int lane) {
  const std::uint32_t m = (lane & Mask) ? 0xffffffffu : 0u;
#pragma unroll
  for (int i = 0; i < Half; ++i) {
    const std::uint32_t lo = __float_as_uint(sums[i]), hi = __float_as_uint(sums[i + Half]);
    const float keep = __uint_as_float((hi & m) | (lo & ~m)), send = __uint_as_float((lo & m) | (hi & ~m));
    sums[i] = keep + __shfl_xor_sync(0xffffffffu, send, Mask);
  }
  return (lane & Mask) ? Half : 0;
}

// Phase B: dk's bracket for rows j0..j0+15 and the 8 NT columns from c0:
// E_last (dS_n v_j) + sum_{t>j} dA_{t,j} q~_t, and col_sum[c] = sum over its rows of
// k~_j E_last (dS_n v_j)[c] (k_j dk^inter_j, gla_backward_common.cuh).
template <int K, int V, int NT>
__device__ void form_dk(float (&acc)[NT][4], unsigned char* smem, int j0, int c0, float* col_sum) {
  using L = ChunkGradLayout<K, V>;
  const bf16* q = reinterpret_cast<const bf16*>(smem + L::kQ);
  const bf16* k = reinterpret_cast<const bf16*>(smem + L::kK);
  const bf16* v = reinterpret_cast<const bf16*>(smem + L::kV);
  const bf16* dS = reinterpret_cast<const bf16*>(smem + L::kDS);
  const bf16* dA = reinterpret_cast<const bf16*>(smem + L::kDA);
  const int lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3;
  const float* e_last = reinterpret_cast<const float*>(smem + L::kB) + (kChunk - 1) * L::kBLd;
  rows_times_state_t<K, V>(acc, v, dS, j0, c0);
  // Per column c of the thread's 2 NT: k~ dk^inter summed over its two rows, then over the 8
  // lanes of its column (lane bits 2-4, gq) by three halving exchanges: at each a lane keeps half
  // of its sums and sends the other half to its partner (7 NT / 4 shuffles in all, not 3 a
  // column in a dependent chain), and ends with NT / 4 of the sums.
  static_assert(NT % 4 == 0, "three halvings of 2 NT sums");
  float sums[2 * NT];
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
    const int c = c0 + nt * 8 + 2 * tq;
    const float2 el = *reinterpret_cast<const float2*>(e_last + c);
    const float2 k_lo = ptx::unpack_bf16(*reinterpret_cast<const std::uint32_t*>(k + (j0 + gq) * L::kQkLd + c));
    const float2 k_hi = ptx::unpack_bf16(*reinterpret_cast<const std::uint32_t*>(k + (j0 + gq + 8) * L::kQkLd + c));
    acc[nt][0] *= el.x, acc[nt][2] *= el.x, acc[nt][1] *= el.y, acc[nt][3] *= el.y;
    sums[2 * nt] = k_lo.x * acc[nt][0] + k_hi.x * acc[nt][2];
    sums[2 * nt + 1] = k_lo.y * acc[nt][1] + k_hi.y * acc[nt][3];
  }
  int base = 0;  // index into sums of what this lane keeps
  base += halve_sums<NT, 16>(sums, lane);
  base += halve_sums<NT / 2, 8>(sums, lane);
  base += halve_sums<NT / 4, 4>(sums, lane);
  // sums[i] is sums index base + i of the start: column 8 (idx / 2) + 2 tq + idx % 2.
#pragma unroll
  for (int i = 0; i < NT / 4; ++i) col_sum[c0 + ((base + i) / 2) * 8 + 2 * tq + (base + i) % 2] = sums[i];
  for (int tc = j0; tc < kChunk; tc += 16) {
    std::uint32_t a[4];
    a_cols(a, dA, L::kCLd, j0, tc);
    mma_b_rows(acc, a, q, L::kQkLd, c0, tc);
  }
}

// Phase D, second part: dv rows j0..j0+15, columns v0.. += dS_n^T kF_j.
template <int K, int V>
__device__ void dv_from_state(float (&acc)[V / 16][4], unsigned char* smem, int j0, int v0) {
  using L = ChunkGradLayout<K, V>;
  const bf16* kf = reinterpret_cast<const bf16*>(smem + L::kKF);
  const bf16* dS = reinterpret_cast<const bf16*>(smem + L::kDS);
#pragma unroll
  for (int kc = 0; kc < K; kc += 16) {
    std::uint32_t a[4];
    a_rows(a, kf, L::kQkLd, j0, kc);
    mma_b_rows(acc, a, dS, L::kVLd, v0, kc);
  }
}

}  // namespace overlap::cuda::gla_backward_kernel::single_anchor
