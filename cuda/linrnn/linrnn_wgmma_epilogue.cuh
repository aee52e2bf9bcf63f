#pragma once
// The collective epilogue of chunk_fused (linrnn_wgmma.cu): it receives one 128 x 192 output
// tile's fp32 accumulators in the registers of the two consumer warpgroups (the interface of
// cutlass/epilogue/collective/default_epilogue.hpp, wrapped by
// detail::Sm90TmaWarpSpecializedAdapter) and turns them into y without the projection ever
// leaving the SM.
//
// The tile: rows = 128 consecutive rows of the flattened [B*T] timesteps, columns = one block of
// 64 channels as [u | a_pre | z] (the weight packed by linrnn_pack.cu). In the wgmma
// accumulator layout a thread's column c, c + 64 and c + 128 are its elements (r, v), (r, v+8),
// (r, v+16) of the column mode, so each thread holds u, a_pre and z of the same (row, channel).
// Warp w of the 8 consumer warps holds rows 16w .. 16w+15 of the tile: its "slot".
//
// The scan runs over the flattened rows; the first timestep of each batch row is a reset
// (h -> a·h0 + (1-a)u ignores the carry: A = 0), so a tile may straddle batch rows and any T
// works. Per tile:
//   1. (A, B) = (a, (1-a)u) per element, (0, a·h0 + B) at resets, identity past the last row;
//      g = silu(z) in place of z.
//   2. Inclusive scan over the 8 row lanes (lane / 4) by shuffles, then rows r+8 after r: each
//      thread holds the prefix of its rows within their slot.
//   3. Each slot's aggregate to shared memory; 64 threads (one per channel) compose the 8 slot
//      aggregates into the tile's, carry across tiles by the decoupled look-back
//      (linrnn_lookback.cuh; predecessor = the previous M tile of the same channel block), and
//      store each slot's incoming h. A tile whose first row starts a batch row needs no carry
//      (that row is a reset) and publishes its inclusive h without looking back.
//   4. y = (A_prefix · h_slot + B_prefix) · g as bf16; hT at each batch row's last timestep.
// The look-back cannot deadlock on an otherwise idle GPU: the persistent scheduler hands each
// cluster its units in increasing order (raster AlongN, swizzle 1: unit = (m / 2) * channel
// blocks + n, both CTAs of a 2x1 cluster on the same unit: tiles (2j, n) and (2j+1, n)) to a
// grid that is wholly co-resident (sized by cudaOccupancyMaxActiveClusters), and a tile only
// waits for its predecessor (m-1, n): inside its own cluster, or in unit u - channel blocks. The
// lowest unfinished unit can always finish. Co-residency is computed for an empty GPU: kernels
// running concurrently on other streams (or two chunk_fused launches at once) can keep some
// clusters off the GPU while resident ones spin on them, so chunk_fused must not share the GPU
// with concurrent work (linrnn_forward.hpp says so too).
#include <cuda_bf16.h>

#include <cutlass/arch/barrier.h>

#include "common/cutlass_register_epilogue.hpp"

#include "linrnn/linrnn_lookback.cuh"

namespace overlap::cuda::linrnn_wgmma {

using linrnn_kernel::bf16;
using linrnn_kernel::kChannels;

constexpr int kTileRows = 128;
constexpr int kEpilogueThreads = 256;   // both consumer warpgroups
constexpr int kSlots = kTileRows / 16;  // 16 rows per warp

// The epilogue does not overlap the mainloop (both warpgroups run it), so its special-function
// work counts in full (docs/results/linrnn_h100.md, tables S3-1 and S3-2): three exponentials
// and three divisions per element cost about 30 us more at B=8, T=4096, d=dv=1024 than this.
// Gate: one exponential and one approximate reciprocal; 1 - a = e·a with e = exp(-a_pre), which
// keeps its relative precision when a is near 1 (long memory) as gate_of's second exponential
// does. a_pre is clamped at -80 so that e stays finite (a ~ 1.8e-35, 1 - a = 1).
__device__ __forceinline__ linrnn_kernel::Gate gate_fast(float a_pre) {
  const float e = __expf(-fmaxf(a_pre, -80.0f));
  const float a = __fdividef(1.0f, 1.0f + e);
  return {a, e * a};
}
// silu(z) = z·sigmoid(z) = z·(1 + tanh(z/2))/2 with the hardware tanh (one MUFU operation,
// absolute error about 2^-11). For z < 0, 1 + tanh cancels and the relative error grows (about
// 1% at z = -4, tens of percent at z = -8), but there silu(z) is small, so y's absolute error
// stays below its bf16 rounding: the GPU tests' whole-tensor and per-block errors are 1.7e-3 and
// 1.9e-3 (tolerance 1e-2). It is not accurate per element for strongly negative z.
__device__ __forceinline__ float silu_fast(float z) {
  float t;
  asm("tanh.approx.f32 %0, %1;" : "=f"(t) : "f"(0.5f * z));
  return 0.5f * z * (1.0f + t);
}

struct EpilogueArgs {
  bf16* y = nullptr;
  const float* h0 = nullptr;
  float* hT = nullptr;
  linrnn_kernel::Lookback lb{};
  int rows = 0;  // B * T
  int T = 0, dv = 0;
  int channel_blocks = 0;
  int m_tiles = 0;  // ceil(rows / 128): tiles past it (cluster padding) do nothing
};

class LinrnnScanEpilogue : public cutlass_sm90::RegisterEpilogueInterface<EpilogueArgs> {
 public:
  // Slot aggregates (A, B) and each slot's incoming h, per channel. Separate arrays so that one
  // tile's aggregates can be written while a slow thread still reads the previous tile's h.
  struct SharedStorage {
    float agg_a[kSlots][kChannels];
    float agg_b[kSlots][kChannels];
    float h_slot[kSlots][kChannels];
  };
  using TensorStorage = SharedStorage;

  template <class ProblemShape>
  static bool can_implement(ProblemShape const&, Arguments const& a) {
    return a.y && a.lb.header && a.lb.words && a.rows > 0 && a.T > 0 && a.dv > 0 && a.dv % 2 == 0;
  }

  CUTLASS_HOST_DEVICE LinrnnScanEpilogue(Params const& params, SharedStorage const& = SharedStorage())
      : params_(params) {}

  template <class ProblemShapeMNKL, class BlockShapeMNK, class BlockCoordMNKL, class FrgEngine, class FrgLayout,
            class TiledMma, class ResidueMNK>
  CUTLASS_DEVICE void operator()(ProblemShapeMNKL problem_shape_mnkl, BlockShapeMNK blk_shape_MNK,
                                 BlockCoordMNKL blk_coord_mnkl, cute::Tensor<FrgEngine, FrgLayout>& accumulators,
                                 TiledMma tiled_mma, ResidueMNK, int thread_idx, char* smem_buf) {
    using namespace cute;
    static_assert(is_static<BlockShapeMNK>::value && is_static<FrgLayout>::value);
    static_assert(decltype(size<0>(blk_shape_MNK))::value == kTileRows &&
                      decltype(size<1>(blk_shape_MNK))::value == 3 * kChannels,
                  "the epilogue expects 128 rows x [u|a|z] of 64 channels");
    auto [m_coord, n_coord, k_coord, l_coord] = blk_coord_mnkl;
    const int m_tile = int(m_coord), n_tile = int(n_coord);
    if (m_tile >= params_.m_tiles) return;  // cluster padding past the last row: uniform per tile
    static_assert(decltype(size(tiled_mma))::value == kEpilogueThreads, "two consumer warpgroups share the tile");
    SharedStorage& smem = *reinterpret_cast<SharedStorage*>(smem_buf);
    // The first user barrier id (CUTLASS's reserved ones come before it).
    auto sync = [] { cutlass::arch::NamedBarrier::sync(kEpilogueThreads, 0); };

    Tensor coords = local_tile(make_identity_tensor(make_shape(get<0>(problem_shape_mnkl), get<1>(problem_shape_mnkl))),
                               take<0, 2>(blk_shape_MNK), make_coord(m_coord, n_coord));
    auto thr_mma = tiled_mma.get_thread_slice(thread_idx);
    Tensor tCcD = thr_mma.partition_C(coords);
    Tensor acc = make_tensor(accumulators.data(), cutlass_sm90::accumulator_rows_cols(accumulators.layout()));
    Tensor crd = make_tensor(tCcD.data(), cutlass_sm90::accumulator_rows_cols(tCcD.layout()));
    constexpr int kRows = decltype(size<0>(acc))::value;  // r and r + 8
    constexpr int kCols = decltype(size<1>(acc))::value;  // 48: u, a, z of 16 channels
    static_assert(kRows == 2 && kCols == 48, "expects one m64n192 wgmma atom per warpgroup");
    constexpr int kCh = kCols / 3;  // element c: u at c, a_pre at c + 16, z at c + 32 (64 columns apart)

    const int lane = thread_idx % 32;
    const int tile_row0 = m_tile * kTileRows;
    const int ch_base = n_tile * kChannels;
    const int col0 = int(get<1>(crd(0, 0))) - n_tile * 3 * kChannels;  // this thread's first channel in the block
    int local_row[kRows], batch[kRows], step[kRows];
    bool row_ok[kRows];
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < kRows; ++i) {
      local_row[i] = int(get<0>(crd(i, 0))) - tile_row0;
      const int row = tile_row0 + local_row[i];
      row_ok[i] = row < params_.rows;
      batch[i] = row / params_.T;
      step[i] = row - batch[i] * params_.T;
    }

    // 1. Per element (A, B, g).
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < kRows; ++i) {
      const bool reset = step[i] == 0 && row_ok[i];  // rows past B*T would read h0 of batch B
      CUTLASS_PRAGMA_UNROLL
      for (int c = 0; c < kCh; ++c) {
        const float u = acc(i, c), ap = acc(i, c + kCh), z = acc(i, c + 2 * kCh);
        const linrnn_kernel::Gate gate = gate_fast(ap);
        float A = gate.a, B = gate.one_minus_a * u;
        if (reset) {
          const int ch = ch_base + col0 + channel_offset(c);
          if (params_.h0 && ch < params_.dv) B = fmaf(A, params_.h0[batch[i] * params_.dv + ch], B);
          A = 0.0f;
        }
        if (!row_ok[i]) A = 1.0f, B = 0.0f;
        acc(i, c) = A;
        acc(i, c + kCh) = B;
        acc(i, c + 2 * kCh) = silu_fast(z);
      }
    }

    // 2. Inclusive scan over each slot's 16 rows: 8 row lanes (4 lanes apart), then r+8 after r.
    //    Composition (earlier (Ap, Bp), then (A, B)): h -> A (Ap h + Bp) + B.
    CUTLASS_PRAGMA_UNROLL
    for (int off = 4; off < 32; off *= 2) {
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < kRows; ++i)
        CUTLASS_PRAGMA_UNROLL
        for (int c = 0; c < kCh; ++c) {
          const float Ap = __shfl_up_sync(0xffffffffu, acc(i, c), off);
          const float Bp = __shfl_up_sync(0xffffffffu, acc(i, c + kCh), off);
          if (lane >= off) {
            acc(i, c + kCh) = fmaf(acc(i, c), Bp, acc(i, c + kCh));
            acc(i, c) *= Ap;
          }
        }
    }
    const int last_lane = 28 + (lane & 3);  // row 7 of the 8 (same channels)
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < kRows; i += 2)
      CUTLASS_PRAGMA_UNROLL
      for (int c = 0; c < kCh; ++c) {
        const float At = __shfl_sync(0xffffffffu, acc(i, c), last_lane);
        const float Bt = __shfl_sync(0xffffffffu, acc(i, c + kCh), last_lane);
        acc(i + 1, c + kCh) = fmaf(acc(i + 1, c), Bt, acc(i + 1, c + kCh));
        acc(i + 1, c) *= At;
      }

    // 3. Slot aggregates (row 15 of each slot = lanes 28..31, second row of the pair).
    if (lane >= 28) {
      CUTLASS_PRAGMA_UNROLL
      for (int i = 1; i < kRows; i += 2)
        CUTLASS_PRAGMA_UNROLL
        for (int c = 0; c < kCh; ++c) {
          smem.agg_a[local_row[i] / 16][col0 + channel_offset(c)] = acc(i, c);
          smem.agg_b[local_row[i] / 16][col0 + channel_offset(c)] = acc(i, c + kCh);
        }
    }
    sync();
    if (thread_idx < kChannels) {
      const int c = thread_idx;
      float ta = 1.0f, tb = 0.0f;
      CUTLASS_PRAGMA_UNROLL
      for (int w = 0; w < kSlots; ++w) {
        const float wa = smem.agg_a[w][c];
        tb = fmaf(wa, tb, smem.agg_b[w][c]);
        ta *= wa;
      }
      const unsigned epoch = __ldcg(&params_.lb.header[2]);
      const int id = m_tile * params_.channel_blocks + n_tile;
      float h_end;
      const bool no_carry = tile_row0 % params_.T == 0;  // row 0 is a reset: h_in is not used
      float h = linrnn_kernel::look_back_channel(params_.lb, id, params_.channel_blocks, c, epoch, no_carry, ta, tb,
                                                 0.0f, &h_end);
      CUTLASS_PRAGMA_UNROLL
      for (int w = 0; w < kSlots; ++w) {
        smem.h_slot[w][c] = h;
        h = fmaf(smem.agg_a[w][c], h, smem.agg_b[w][c]);
      }
    }
    sync();
    // Every thread of the tile has read the epoch by now: count the tile; the launch's last
    // tile resets the counter and advances the epoch for the next launch.
    if (thread_idx == 0) {
      const unsigned epoch = __ldcg(&params_.lb.header[2]);
      const unsigned total = static_cast<unsigned>(params_.m_tiles * params_.channel_blocks);
      if (atomicAdd(&params_.lb.header[1], 1u) == total - 1) {
        atomicExch(&params_.lb.header[1], 0u);
        atomicExch(&params_.lb.header[2], epoch + 1);
      }
    }

    // 4. y and hT.
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < kRows; ++i) {
      if (!row_ok[i]) continue;
      const int row = tile_row0 + local_row[i];
      const int slot = local_row[i] / 16;
      const bool last = step[i] == params_.T - 1;
      CUTLASS_PRAGMA_UNROLL
      for (int c = 0; c < kCh; c += 2) {
        const int cl = col0 + channel_offset(c);  // even: the pair (cl, cl + 1)
        const int ch = ch_base + cl;
        if (ch >= params_.dv) continue;
        const float h0v = fmaf(acc(i, c), smem.h_slot[slot][cl], acc(i, c + kCh));
        const float h1v = fmaf(acc(i, c + 1), smem.h_slot[slot][cl + 1], acc(i, c + 1 + kCh));
        *reinterpret_cast<__nv_bfloat162*>(params_.y + static_cast<long long>(row) * params_.dv + ch) =
            __floats2bfloat162_rn(h0v * acc(i, c + 2 * kCh), h1v * acc(i, c + 1 + 2 * kCh));
        if (last && params_.hT) {
          params_.hT[batch[i] * params_.dv + ch] = h0v;
          params_.hT[batch[i] * params_.dv + ch + 1] = h1v;
        }
      }
    }
  }

 private:
  // Column element c = e + 2v lies e + 8v columns after the thread's first.
  static CUTLASS_DEVICE int channel_offset(int c) { return (c & 1) + 8 * (c >> 1); }

  Params params_;
};

}  // namespace overlap::cuda::linrnn_wgmma
