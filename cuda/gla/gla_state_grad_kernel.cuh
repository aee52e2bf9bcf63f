#pragma once
// gla backward, pass 2 (gla_backward_common.cuh): one CTA per (b, h, 64 V columns) walks the
// chunks from the last to the first carrying dS = dL/dS (fp32, in mma accumulators):
//   at chunk n, on arrival: dS is dS_n (the gradient at the chunk's end): stored in bf16 for
//                           pass 3, and R_n = rowsum(dS_n * S_n) written for dg;
//   then                    dS <- diag(2^{b_last}) dS + (s q_t 2^{b_t})^T do   (b in log2 units)
// and after chunk 0, dh0 = dS. The same walk as the forward's state pass with q, do in place of
// the decayed keys and v; chunk n-2 (q, do, g and S_n) is loaded (cp.async) while chunk n is
// worked on.
#include "gla/gla_backward_common.cuh"

namespace overlap::cuda::gla_backward_kernel {

constexpr int kStateGradWarps = 4;
constexpr int kStateGradThreads = 32 * kStateGradWarps;
constexpr int kStateGradStages = 2;

template <int K>
struct StateGradLayout {
  static constexpr int kQLd = K + 8;
  static constexpr int kDoLd = kStateBlockV + 8;
  static constexpr int kBLd = K + 4;
  static constexpr int kQ = 0;
  static constexpr int kDo = kQ + kChunk * kQLd * 2;
  static constexpr int kB = kDo + kChunk * kDoLd * 2;
  static constexpr int kSn = kB + kChunk * kBLd * 4;  // S_n, this CTA's columns (bf16, for R_n)
  static constexpr int kStageBytes = kSn + K * kDoLd * 2;
  static constexpr int kQE = kStageBytes * kStateGradStages;  // s q 2^b, bf16
  static constexpr int kTotals = kQE + kChunk * kQLd * 2;
  static constexpr int kBytes = kTotals + kStateGradThreads * 4;
};

// The rows of dS a warp owns: K/4 rows as K/64 m-tiles of 16, each 16 x 64 in fp32 mma
// accumulators.
template <int K>
struct GradRegs {
  static constexpr int kMTiles = K / 64;
  static constexpr int kNTiles = kStateBlockV / 8;
  float s[kMTiles][kNTiles][4];
  __device__ int row(int mt, int e) const {
    return (threadIdx.x >> 5) * (K / 4) + mt * 16 + ((threadIdx.x & 31) >> 2) + (e >> 1) * 8;
  }
  __device__ int col(int nt, int e) const { return nt * 8 + 2 * (threadIdx.x & 3) + (e & 1); }
};

template <int K>
__device__ void load_state_grad_chunk(const Params& p, const Slice& sl, int v0, unsigned char* stage, int n) {
  using L = StateGradLayout<K>;
  const int t0 = n * kChunk, valid = min(kChunk, p.T - t0);
  const long long qk_stride = (long long)p.H * K, v_stride = (long long)p.H * p.V;
  load_rows<kStateGradThreads>(reinterpret_cast<bf16*>(stage + L::kQ), L::kQLd, p.q + sl.qk_row0 + t0 * qk_stride,
                               qk_stride, kChunk, K, valid);
  load_rows<kStateGradThreads>(reinterpret_cast<bf16*>(stage + L::kDo), L::kDoLd,
                               p.do_ + sl.v_row0 + t0 * v_stride + v0, v_stride, kChunk, kStateBlockV, valid);
  load_rows<kStateGradThreads>(reinterpret_cast<float*>(stage + L::kB), L::kBLd, p.g + sl.qk_row0 + t0 * qk_stride,
                               qk_stride, kChunk, K, valid);
  load_rows<kStateGradThreads>(reinterpret_cast<bf16*>(stage + L::kSn), L::kDoLd,
                               p.states + sl.states0 + (long long)n * K * p.V + v0, p.V, K, kStateBlockV, K);
}

template <int K>
__global__ void __launch_bounds__(kStateGradThreads, 1) gla_state_grad_kernel(const Params p) {
  using L = StateGradLayout<K>;
  extern __shared__ __align__(128) unsigned char smem[];
  const int v_blocks = p.V / kStateBlockV;
  const int vb = blockIdx.x, h = blockIdx.y, b = blockIdx.z, v0 = vb * kStateBlockV;
  const Slice sl = slice_of<K>(p, b, h);
  const int lane = threadIdx.x & 31;
  bf16* qe = reinterpret_cast<bf16*>(smem + L::kQE);
  float* totals = reinterpret_cast<float*>(smem + L::kTotals);
  const int NT = p.num_chunks;

  GradRegs<K> dS;
#pragma unroll
  for (int mt = 0; mt < GradRegs<K>::kMTiles; ++mt)
#pragma unroll
    for (int nt = 0; nt < GradRegs<K>::kNTiles; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        dS.s[mt][nt][e] = p.dhT ? p.dhT[sl.state0 + (long long)dS.row(mt, e) * p.V + v0 + dS.col(nt, e)] : 0.f;

#pragma unroll
  for (int s = 0; s < kStateGradStages; ++s) {
    if (s < NT) load_state_grad_chunk<K>(p, sl, v0, smem + s * L::kStageBytes, NT - 1 - s);
    ptx::cp_async_commit();
  }
  for (int it = 0; it < NT; ++it) {
    const int n = NT - 1 - it;
    unsigned char* stage = smem + (it % kStateGradStages) * L::kStageBytes;
    const bf16* q = reinterpret_cast<const bf16*>(stage + L::kQ);
    const bf16* d_o = reinterpret_cast<const bf16*>(stage + L::kDo);
    float* bl = reinterpret_cast<float*>(stage + L::kB);
    ptx::cp_async_wait<kStateGradStages - 1>();
    __syncthreads();
    cumsum_log2<K, kStateGradThreads>(bl, L::kBLd, totals);
    __syncthreads();

    // dS_n out, and R_n = rowsum(dS_n * S_n) over this CTA's columns (the gate term of
    // gla_backward_common.cuh).
    bf16* ds_out = p.dstates + sl.states0 + (long long)n * K * p.V + v0;
    const bf16* s_n = reinterpret_cast<const bf16*>(stage + L::kSn);
#pragma unroll
    for (int mt = 0; mt < GradRegs<K>::kMTiles; ++mt) {
      float row_sum[2] = {0.f, 0.f};
#pragma unroll
      for (int nt = 0; nt < GradRegs<K>::kNTiles; ++nt)
#pragma unroll
        for (int e = 0; e < 4; e += 2) {
          const long long at = (long long)dS.row(mt, e) * p.V + dS.col(nt, e);
          *reinterpret_cast<std::uint32_t*>(ds_out + at) = ptx::pack_bf16(dS.s[mt][nt][e], dS.s[mt][nt][e + 1]);
          const float2 s1 = ptx::unpack_bf16(
              *reinterpret_cast<const std::uint32_t*>(s_n + dS.row(mt, e) * L::kDoLd + dS.col(nt, e)));
          row_sum[e >> 1] += dS.s[mt][nt][e] * s1.x + dS.s[mt][nt][e + 1] * s1.y;
        }
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        float v = row_sum[half];
        v += __shfl_xor_sync(0xffffffffu, v, 1);
        v += __shfl_xor_sync(0xffffffffu, v, 2);
        if ((lane & 3) == 0)
          p.r_n[sl.r_n0 + ((long long)n * v_blocks + vb) * K + dS.row(mt, 2 * half)] = v;
      }
    }

    // s q_t 2^{b_t}: the queries as they reach the chunk's entry state.
    for (int idx = threadIdx.x; idx < kChunk * K / 2; idx += kStateGradThreads) {
      const int t = idx / (K / 2), c = (idx % (K / 2)) * 2;
      const float2 x = ptx::unpack_bf16(*reinterpret_cast<const std::uint32_t*>(q + t * L::kQLd + c));
      const float2 bt = *reinterpret_cast<const float2*>(bl + t * L::kBLd + c);
      *reinterpret_cast<std::uint32_t*>(qe + t * L::kQLd + c) =
          ptx::pack_bf16(p.scale * x.x * ptx::exp2_approx(bt.x), p.scale * x.y * ptx::exp2_approx(bt.y));
    }
    __syncthreads();

    const float* b_last = bl + (kChunk - 1) * L::kBLd;
#pragma unroll
    for (int mt = 0; mt < GradRegs<K>::kMTiles; ++mt) {
      const float d0 = ptx::exp2_approx(b_last[dS.row(mt, 0)]);
      const float d1 = ptx::exp2_approx(b_last[dS.row(mt, 2)]);
#pragma unroll
      for (int nt = 0; nt < GradRegs<K>::kNTiles; ++nt) {
        dS.s[mt][nt][0] *= d0;
        dS.s[mt][nt][1] *= d0;
        dS.s[mt][nt][2] *= d1;
        dS.s[mt][nt][3] *= d1;
      }
    }
    const int m_base = (threadIdx.x >> 5) * (K / 4);
#pragma unroll
    for (int tc = 0; tc < kChunk; tc += 16) {
#pragma unroll
      for (int mt = 0; mt < GradRegs<K>::kMTiles; ++mt) {
        std::uint32_t a[4];
        a_cols(a, qe, L::kQLd, m_base + mt * 16, tc);
#pragma unroll
        for (int np = 0; np < kStateBlockV / 16; ++np) {
          std::uint32_t bf[4];
          b_rows(bf, d_o, L::kDoLd, np * 16, tc);
          mma_pair(dS.s[mt][2 * np], dS.s[mt][2 * np + 1], a, bf);
        }
      }
    }
    __syncthreads();  // every warp is done with this stage and with qe
    if (it + kStateGradStages < NT)
      load_state_grad_chunk<K>(p, sl, v0, stage, n - kStateGradStages);
    ptx::cp_async_commit();
  }

  if (p.dh0) {
#pragma unroll
    for (int mt = 0; mt < GradRegs<K>::kMTiles; ++mt)
#pragma unroll
      for (int nt = 0; nt < GradRegs<K>::kNTiles; ++nt)
#pragma unroll
        for (int e = 0; e < 4; e += 2)
          *reinterpret_cast<float2*>(p.dh0 + sl.state0 + (long long)dS.row(mt, e) * p.V + v0 + dS.col(nt, e)) =
              make_float2(dS.s[mt][nt][e], dS.s[mt][nt][e + 1]);
  }
}

}  // namespace overlap::cuda::gla_backward_kernel
