#pragma once
// The fused-carry pingpong kernel with the two consumer warpgroups splitting ONE slice's
// chunk loop by role (gla_pingpong_kernel.cuh holds the pieces and the paired form):
//
//   state role (warpgroup 2): per chunk n, the gate cumsum, the keys decayed to the end of
//     their sub-chunk (G1's B), the 16x16 diagonal blocks (mma.sync), the keys decayed to the
//     chunk's end, the state update S_{n+1} = 2^{b_last} S_n + kd^T v (wgmma, S in its
//     registers) and the bf16 copy of S_{n+1} for the output role;
//   output role (warpgroup 1): G1, the off-diagonal blocks of the intra-chunk matrix
//     (wgmma), then G2, o = (q 2^b) S_n + A v (wgmma), and the store of o.
//
// The state recurrence stays in one warpgroup; what crosses between them per chunk is the
// prepared chunk (b, decayed keys), the diagonal blocks and S_n, through double-buffered
// shared memory guarded by mbarriers (count 128: every thread of the writing warpgroup
// arrives). The state role runs up to one chunk ahead, so one role's element-wise work runs
// while the other's wgmmas do: the pingpong happens inside one slice, and a slice count that
// only matches the SM count (B*H*V/64 = 128 at (4,4096,32,64,64)) still fills every SM with
// two busy warpgroups.
//
// Buffer p = n & 1 of chunk n is reused by chunk n + 2; every wait is on parity (n >> 1) & 1
// of barrier p, and no role can get two phases ahead of a wait (each is held back by the
// other's arrival for the chunk in between), so the parities never alias.
#include "gla/gla_pingpong_kernel.cuh"

namespace overlap::cuda::gla_pingpong {

template <int K>
struct SplitLayout {
  using Ring = Layout<K, Pass::Fused>;  // stage offsets (q, k, v, g)
  static constexpr int kStages = Ring::kStages;
  static constexpr int kStageBytes = Ring::kStageBytes;
  static constexpr int kKdBytes = kChunk * K * 2;
  static constexpr int kSBytes = K * kBlockV * 2;
  static constexpr int kDiagBytes = 4 * 256 * 4;
  static constexpr int kKd = kStageBytes * kStages;  // [2] decayed keys (sub-chunk end, then chunk end)
  static constexpr int kSbuf = kKd + 2 * kKdBytes;   // [2] bf16 S_n, swizzled [k][v]
  static constexpr int kDiag = kSbuf + 2 * kSBytes;  // [2] four 16x16 fp32 diagonal blocks
  static constexpr int kTotals = kDiag + 2 * kDiagBytes;
  static constexpr int kBars = kTotals + 128 * 4;
  // full[stages], empty[stages], then [2] each: prep, diag, s_full, g1_done, out_done.
  static constexpr int kNumBars = 2 * kStages + 10;
  static constexpr int kBytes = kBars + 8 * kNumBars + 1024;
};

struct SplitBars {
  std::uint64_t* full;
  std::uint64_t* empty;
  std::uint64_t* prep;      // state -> output: b and the sub-chunk-decayed keys of chunk n
  std::uint64_t* diag;      // state -> output: the diagonal blocks of chunk n
  std::uint64_t* s_full;    // state -> output: S_n in sbuf[n & 1]
  std::uint64_t* g1_done;   // output -> state: G1 of chunk n has read kd[n & 1]
  std::uint64_t* out_done;  // output -> state: chunk n's kd, diag and sbuf buffers are free
  __device__ SplitBars(std::uint64_t* base, int stages)
      : full(base), empty(base + stages), prep(base + 2 * stages), diag(prep + 2), s_full(diag + 2),
        g1_done(s_full + 2), out_done(g1_done + 2) {}
};

template <int K>
__device__ void split_state_role(const Params& p, unsigned char* smem, const SplitBars& bars) {
  using L = SplitLayout<K>;
  const Unit w = unit_of<Pass::Fused>(p, blockIdx.x);
  const Lane l;
  const int bar = 2;
  float* totals = reinterpret_cast<float*>(smem + L::kTotals);
  const long long state0 = ((long long)w.b * p.H + w.h) * K * p.V + w.vb * kBlockV;
  for (int pb = 0; pb < 2; ++pb) {  // upper triangles of the diagonal blocks stay zero
    float* scratch = reinterpret_cast<float*>(smem + L::kDiag + pb * L::kDiagBytes) + l.warp * 256;
    for (int e = l.t & 31; e < 256; e += 32) scratch[e] = 0.f;
  }
  State<K> S;
  S.load(l, p.h0 ? p.h0 + state0 : nullptr, p.V);
  S.store_smem_bf16(l, smem + L::kSbuf);  // S_0 -> sbuf[0]
  sm90::fence_proxy_async();
  sm90::mbar_arrive(&bars.s_full[0]);

  for (int n = 0; n < w.count; ++n) {
    const int s = n % L::kStages, pb = n & 1, ph = (n >> 1) & 1;
    unsigned char* st = smem + s * L::kStageBytes;
    const unsigned char* q = st + L::Ring::kQ;
    const unsigned char* k = st + L::Ring::kK;
    const unsigned char* v = st + L::Ring::kV;
    unsigned char* b = st + L::Ring::kG;
    unsigned char* kd = smem + L::kKd + pb * L::kKdBytes;
    float* scratch = reinterpret_cast<float*>(smem + L::kDiag + pb * L::kDiagBytes) + l.warp * 256;
    sm90::mbar_wait(&bars.full[s], (n / L::kStages) & 1);
    sm90::mbar_wait(&bars.out_done[pb], ph ^ 1);  // chunk n - 2 has released kd[pb], diag[pb]

    cumsum_gates<K>(b, totals, bar);
    sm90::named_sync(bar, 128);
    decay_keys<K, false>(k, b, kd);
    sm90::fence_proxy_async();
    sm90::mbar_arrive(&bars.prep[pb]);

    diagonal_block<K>(q, k, b, l, scratch);
    sm90::mbar_arrive(&bars.diag[pb]);

    sm90::mbar_wait(&bars.g1_done[pb], ph);  // the output role's G1 is done with kd[pb]
    decay_keys<K, true>(k, b, kd);
    sm90::fence_proxy_async();
    sm90::named_sync(bar, 128);
    S.update(l, b, kd, v);
    sm90::wgmma_wait<0>();
#pragma unroll
    for (int mt = 0; mt < State<K>::kTiles; ++mt) sm90::fence_regs(S.s[mt]);
    sm90::fence_proxy_async();  // in-place b writes before the TMA unit refills the stage
    sm90::mbar_arrive(&bars.empty[s]);

    // S_{n+1} -> sbuf[(n + 1) & 1], once the output role's chunk n - 1 has read it.
    const int nb = (n + 1) & 1;
    sm90::mbar_wait(&bars.out_done[nb], (((n + 1) >> 1) & 1) ^ 1);
    S.store_smem_bf16(l, smem + L::kSbuf + nb * L::kSBytes);
    sm90::fence_proxy_async();
    sm90::mbar_arrive(&bars.s_full[nb]);
  }
  if (p.hT) S.store(l, p.hT + state0, p.V);
}

template <int K>
__device__ void split_output_role(const Params& p, unsigned char* smem, const SplitBars& bars) {
  using L = SplitLayout<K>;
  const Unit w = unit_of<Pass::Fused>(p, blockIdx.x);
  const Lane l;
  const long long v_row0 = ((long long)w.b * p.T * p.H + w.h) * p.V + w.vb * kBlockV;
  for (int n = 0; n < w.count; ++n) {
    const int s = n % L::kStages, pb = n & 1, ph = (n >> 1) & 1;
    unsigned char* st = smem + s * L::kStageBytes;
    const unsigned char* q = st + L::Ring::kQ;
    const unsigned char* v = st + L::Ring::kV;
    const unsigned char* b = st + L::Ring::kG;
    const unsigned char* kd = smem + L::kKd + pb * L::kKdBytes;
    const float* scratch = reinterpret_cast<const float*>(smem + L::kDiag + pb * L::kDiagBytes) + l.warp * 256;
    sm90::mbar_wait(&bars.full[s], (n / L::kStages) & 1);
    sm90::mbar_wait(&bars.prep[pb], ph);

    float acc_a[3][8];
    std::uint32_t qe[K / 16][4];
    intra_off_diagonal<K>(acc_a, qe, q, b, kd, l);
    sm90::mbar_arrive(&bars.g1_done[pb]);

    sm90::mbar_wait(&bars.diag[pb], ph);
    sm90::mbar_wait(&bars.s_full[pb], ph);
    float acc_o[32];
    std::uint32_t am[4][4];
    issue_output_gemms<K>(acc_o, am, qe, acc_a, scratch, smem + L::kSbuf + pb * L::kSBytes, v, l);
    finish_output_gemms<K>(acc_o, am, qe);
    sm90::mbar_arrive(&bars.out_done[pb]);
    sm90::mbar_arrive(&bars.empty[s]);
    store_o(p, acc_o, v_row0, n, l);
  }
}

// One (b, h, v-block) slice per CTA: producer warpgroup 0, output role 1, state role 2.
template <int K>
__global__ void __launch_bounds__(kThreads, 1) gla_pingpong_split_kernel(const __grid_constant__ Params p) {
  using L = SplitLayout<K>;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  unsigned char* smem = aligned_smem(smem_raw);
  auto* base = reinterpret_cast<std::uint64_t*>(smem + L::kBars);
  const SplitBars bars(base, L::kStages);
  if (threadIdx.x == 0) {
    for (int s = 0; s < L::kStages; ++s) {
      sm90::mbar_init(&bars.full[s], 1);
      sm90::mbar_init(&bars.empty[s], 256);  // both roles read every stage
    }
    for (int i = 0; i < 2; ++i) {
      sm90::mbar_init(&bars.prep[i], 128);
      sm90::mbar_init(&bars.diag[i], 128);
      sm90::mbar_init(&bars.s_full[i], 128);
      sm90::mbar_init(&bars.g1_done[i], 128);
      sm90::mbar_init(&bars.out_done[i], 128);
    }
    sm90::mbar_init_fence();
  }
  __syncthreads();
  const int wg = threadIdx.x / 128;
  if (wg == 0) {
    producer_warpgroup<K, Pass::Fused>(p, smem, bars.full, bars.empty);
  } else {
    sm90::setmaxnreg_inc<kConsumerRegs>();
    if (wg == 1) split_output_role<K>(p, smem, bars);
    else split_state_role<K>(p, smem, bars);
  }
}

}  // namespace overlap::cuda::gla_pingpong
