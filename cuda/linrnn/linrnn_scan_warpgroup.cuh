#pragma once
// chunk_fused's scan as the epilogue warpgroup of the hand-off GEMM (common/sm90_handoff_gemm.cuh):
// it receives one 128 x 192 tile of the projection in shared memory, fp32, columns
// [u | a_pre | z] of 64 channels (the weight packed by linrnn_pack.cu), rows = 128 consecutive
// rows of the flattened [B*T] timesteps, and writes y while the MMA warpgroups compute the
// next tile.
//
// Thread t of the 128: channels 2p, 2p + 1 (p = t % 32) of rows 32q .. 32q + 31 (q = t / 32, its
// warp), so a warp reads 256 contiguous bytes of a row (no bank conflicts) and stores 128
// contiguous bytes of y. Per tile:
//   1. (A, B) = (a, (1-a) u) per element, (0, a·h0 + B) at the first timestep of a batch row
//      (a reset: the tile may straddle batch rows, so any T works), identity past the last row;
//      written back in place of (u, a_pre) and composed serially into the slice's aggregate.
//   2. Threads 0..63 (one per channel) compose the four slices into the tile's aggregate and
//      carry across tiles by the decoupled look-back (linrnn_lookback.cuh; predecessor = the
//      previous M tile of the same channel block), then give each slice its incoming h.
//   3. h = A h + B row by row, y = h · silu(z) as bf16, and hT at each batch row's last
//      timestep.
// A slice with no batch-row start or end and no row past B*T (nearly all of them) runs steps 1
// and 3 without per-row checks: the checks cost about 30 us at B=8, T=4096, d=dv=1024.
// The look-back cannot deadlock on an otherwise idle GPU: all roles walk the cluster units in
// increasing order on a wholly co-resident grid (the launcher sizes it by
// cudaOccupancyMaxActiveClusters), and a tile waits only for (m - 1, n), which is in its own
// unit (the peer CTA) or a lower one. Co-residency is computed for an empty GPU, so chunk_fused
// must not share the GPU with concurrent work (linrnn_forward.hpp says so too).
#include <cuda_bf16.h>

#include <cutlass/arch/barrier.h>

#include "common/sm90_handoff_gemm.cuh"

#include "linrnn/linrnn_device.cuh"
#include "linrnn/linrnn_lookback.cuh"

namespace overlap::cuda::linrnn_kernel {

class ScanWarpgroup {
 public:
  static constexpr int kTileRows = 128;
  static constexpr int kSlices = handoff_gemm::kEpilogueThreads / 32;  // one warp each
  static constexpr int kRowsPerThread = kTileRows / kSlices;

  struct Params {
    bf16* y = nullptr;
    const float* h0 = nullptr;
    float* hT = nullptr;
    Lookback lb{};
    int rows = 0;  // B * T
    int T = 0, dv = 0;
    int channel_blocks = 0;
    int m_tiles = 0;  // ceil(rows / 128): tiles past it (cluster padding) do nothing
  };
  // The projection tile, fp32, rows padded to kStride floats (handoff_gemm::stage_fp32).
  static constexpr int kStride = 3 * kChannels + 8;
  struct HandoffStorage {
    float tile[kTileRows * kStride];
  };
  struct SharedStorage {
    float agg_a[kSlices][kChannels];
    float agg_b[kSlices][kChannels];
    float h_in[kSlices][kChannels];
  };

  // MMA warpgroups: the accumulators as they are.
  template <class Acc, class RowsCols>
  CUTLASS_DEVICE static void stage(Params const&, HandoffStorage& h, Acc const& acc, RowsCols const& rows_cols, int,
                                   int) {
    handoff_gemm::stage_fp32<kStride>(h.tile, acc, rows_cols);
  }

  CUTLASS_DEVICE void begin(Params const& p, SharedStorage&, int) { epoch_ = __ldcg(&p.lb.header[2]); }

  CUTLASS_DEVICE void tile(Params const& p, SharedStorage& s, HandoffStorage& h, int m, int n, int t) {
    if (m >= p.m_tiles) return;  // uniform over the warpgroups
    ++tiles_;
    const int pair = t % 32, slice = t / 32;
    const int cl = 2 * pair, ch = n * kChannels + cl;  // the thread's first channel: in the block, in dv
    const int row0 = m * kTileRows + slice * kRowsPerThread;
    float* const base = h.tile + slice * kRowsPerThread * kStride + cl;
    const int batch0 = row0 / p.T, step0 = row0 - batch0 * p.T;
    // Most slices hold neither a batch row's first or last timestep nor rows past B*T: no
    // per-row checks there.
    const bool plain = step0 > 0 && step0 + kRowsPerThread < p.T && row0 + kRowsPerThread <= p.rows;
    auto sync = [] { cutlass::arch::NamedBarrier::sync(handoff_gemm::kEpilogueThreads, handoff_gemm::kEpilogueBarrier); };

    // 1. (A, B) in place of (u, a_pre); the slice's aggregate. `adjust` turns row i's gate maps
    //    into resets or identities where needed (the same code on both paths otherwise).
    float ta0 = 1.0f, tb0 = 0.0f, ta1 = 1.0f, tb1 = 0.0f;  // sass:cf.map {
    auto map_row = [&](int i, auto adjust) {
      float* r = base + i * kStride;
      const float2 u = *reinterpret_cast<const float2*>(r);
      const float2 ap = *reinterpret_cast<const float2*>(r + kChannels);
      const Gate g0 = gate_fast(ap.x), g1 = gate_fast(ap.y);
      float A0 = g0.a, B0 = g0.one_minus_a * u.x, A1 = g1.a, B1 = g1.one_minus_a * u.y;
      adjust(A0, B0, A1, B1);
      *reinterpret_cast<float2*>(r) = make_float2(B0, B1);
      *reinterpret_cast<float2*>(r + kChannels) = make_float2(A0, A1);
      tb0 = fmaf(A0, tb0, B0), ta0 *= A0;
      tb1 = fmaf(A1, tb1, B1), ta1 *= A1;
    };
    if (plain) {
#pragma unroll 4
      for (int i = 0; i < kRowsPerThread; ++i) map_row(i, [](float&, float&, float&, float&) {});  // sass:@plain
    } else {
      int batch = batch0, step = step0;
      for (int i = 0; i < kRowsPerThread; ++i) {
        const bool ok = row0 + i < p.rows;
        map_row(i, [&](float& A0, float& B0, float& A1, float& B1) {  // sass:@edge
          if (step == 0 && ok) {  // a reset; rows past B*T would read h0 of batch B
            if (p.h0 && ch < p.dv) {
              B0 = fmaf(A0, p.h0[batch * p.dv + ch], B0);
              B1 = fmaf(A1, p.h0[batch * p.dv + ch + 1], B1);
            }
            A0 = A1 = 0.0f;
          }
          if (!ok) A0 = A1 = 1.0f, B0 = B1 = 0.0f;
        });
        if (++step == p.T) step = 0, ++batch;
      }
    }
    *reinterpret_cast<float2*>(&s.agg_a[slice][cl]) = make_float2(ta0, ta1);
    *reinterpret_cast<float2*>(&s.agg_b[slice][cl]) = make_float2(tb0, tb1);
    sync();  // } sass:cf.map

    // 2. The tile's carry (one thread per channel), then each slice's incoming h.
    if (t < kChannels) {  // sass:cf.carry {
      float ta = 1.0f, tb = 0.0f;
      CUTLASS_PRAGMA_UNROLL
      for (int q = 0; q < kSlices; ++q) {
        const float a = s.agg_a[q][t];
        tb = fmaf(a, tb, s.agg_b[q][t]);
        ta *= a;
      }
      const int tile_row0 = m * kTileRows;
      const bool no_carry = tile_row0 % p.T == 0;  // its row 0 is a reset: h_in is not used
      float h_end;
      const int id = m * p.channel_blocks + n;
      float h = look_back_channel(p.lb, id, p.channel_blocks, t, epoch_, no_carry, ta, tb, 0.0f, &h_end);  // sass:cf.lookback {}
      CUTLASS_PRAGMA_UNROLL
      for (int q = 0; q < kSlices; ++q) {
        s.h_in[q][t] = h;
        h = fmaf(s.agg_a[q][t], h, s.agg_b[q][t]);
      }
    }
    sync();  // } sass:cf.carry

    // 3. h = A h + B row by row; y = h · silu(z); hT at each batch row's last timestep.
    if (ch >= p.dv) return;  // dv is even: the pair is wholly in or out  sass:cf.emit {
    float h0v = s.h_in[slice][cl], h1v = s.h_in[slice][cl + 1];
    bf16* yp = p.y + static_cast<long long>(row0) * p.dv + ch;
    // Row i of the slice: h = A h + B and y (the same code on both paths).
    auto emit = [&](int i) {
      const float* r = base + i * kStride;
      const float2 B = *reinterpret_cast<const float2*>(r);
      const float2 A = *reinterpret_cast<const float2*>(r + kChannels);
      const float2 z = *reinterpret_cast<const float2*>(r + 2 * kChannels);
      h0v = fmaf(A.x, h0v, B.x);
      h1v = fmaf(A.y, h1v, B.y);
      *reinterpret_cast<__nv_bfloat162*>(yp + static_cast<long long>(i) * p.dv) =
          __floats2bfloat162_rn(h0v * silu_fast(z.x), h1v * silu_fast(z.y));
    };
    if (plain) {
#pragma unroll 4
      for (int i = 0; i < kRowsPerThread; ++i) emit(i);  // sass:@plain
    } else {
      int batch = batch0, step = step0;
      for (int i = 0; i < kRowsPerThread && row0 + i < p.rows; ++i) {
        emit(i);  // sass:@edge
        if (++step == p.T) {
          if (p.hT) {
            p.hT[batch * p.dv + ch] = h0v;
            p.hT[batch * p.dv + ch + 1] = h1v;
          }
          step = 0, ++batch;
        }
      }
    }  // } sass:cf.emit
  }

  // Counts this CTA's tiles finished (linrnn_lookback.cuh): every CTA read the epoch in begin.
  CUTLASS_DEVICE void end(Params const& p, SharedStorage&, int t) {
    if (t == 0 && tiles_ > 0)
      count_finished_tiles(p.lb, tiles_, static_cast<unsigned>(p.m_tiles * p.channel_blocks), epoch_);
  }

 private:
  unsigned epoch_ = 0;
  unsigned tiles_ = 0;  // real tiles (not cluster padding) this CTA finished
};

}  // namespace overlap::cuda::linrnn_kernel
