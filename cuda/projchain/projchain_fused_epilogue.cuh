#pragma once
// The collective epilogue of the epilogue_fused kernel: it receives one output tile's fp32
// accumulators in registers (the interface of cutlass/epilogue/collective/default_epilogue.hpp,
// wrapped by detail::Sm90TmaWarpSpecializedAdapter for the sm90 warp-specialized kernels),
// applies each column's activation and stores bf16 straight into the five outputs:
//
//   wide column c in [0,HD): q   [HD,2HD): k, per-head l2norm   [2HD,3HD): v
//   [3HD,4HD): g = silu          [4HD,4HD+H): alpha = sigmoid    beyond: stride padding, dropped
//
// The per-head L2 norm needs a whole head inside the tile: a 256-wide tile holds 256/dk whole
// heads when dk divides 256 (heads start at multiples of dk, tiles at multiples of 256). In the
// wgmma accumulator layout a row's columns are spread over the 4 lanes of a quad, so the sum of
// squares is a thread-local sum plus two xor-shuffles (lanes 1 and 2 apart).
//
// No shared memory and no TMA store: each thread writes its bf16 values directly, 8 bytes at a
// time (a quad then fills a 32-byte sector per row). That keeps the whole shared memory for
// mainloop stages. The packed weight's q|k|v|g columns are permuted inside 16-column blocks
// (projchain_fused_columns.hpp) so that the four values a lane holds per block are four
// adjacent output columns: no data exchange between lanes before the store.
//
// Three paths, chosen once per tile. A tile inside one of q, k, v, g (every tile but the last
// when 256 divides H·dk) runs straight-line code: fixed output, compile-time column offsets,
// fast-math activations. A tile past them holds alpha (and padding) and runs a short sigmoid
// loop. Only a tile that straddles a segment boundary runs the per-element path (each pair of
// columns finds its output). On an H100 the per-element path for every tile made the kernel
// 1.8x slower at N=2048 (249 against 138 us): thousands of instructions per thread per tile,
// stalled on instruction fetch (docs/results/projchain_h100.md as of 49a65f7, in git history).
#include <cuda_bf16.h>

#include "common/cutlass_register_epilogue.hpp"
#include "common/fast_math.cuh"
#include "projchain/projchain_fused_columns.hpp"

namespace overlap::cuda::projchain_fused {

// The five outputs and what the activations need of the shape.
struct ProjchainEpilogueArguments {
  __nv_bfloat16* q = nullptr;
  __nv_bfloat16* k = nullptr;
  __nv_bfloat16* v = nullptr;
  __nv_bfloat16* g = nullptr;
  __nv_bfloat16* alpha = nullptr;
  int64_t rows = 0;  // N tokens
  int H = 0, dk = 0;
  int dk_log2 = 0;  // dk is a power of two: head slots by shift (a 64-bit division is a call)
};

template <int kMaxHeadsPerTile>
class ProjchainEpilogue : public cutlass_sm90::RegisterEpilogueInterface<ProjchainEpilogueArguments> {
 public:
  struct SharedStorage {};
  using TensorStorage = SharedStorage;

  template <class ProblemShape>
  static bool can_implement(ProblemShape const&, Arguments const& a) {
    // The uniform path's quarter sums assume heads of 64 or 128 columns.
    return a.q && a.k && a.v && a.g && a.alpha && a.H > 0 && (a.dk == 64 || a.dk == 128) && (1 << a.dk_log2) == a.dk;
  }

  CUTLASS_HOST_DEVICE ProjchainEpilogue(Params const& params, SharedStorage const& = SharedStorage())
      : params_(params) {}

  template <class ProblemShapeMNKL, class BlockShapeMNK, class BlockCoordMNKL, class FrgEngine, class FrgLayout,
            class TiledMma, class ResidueMNK>
  CUTLASS_DEVICE void operator()(ProblemShapeMNKL problem_shape_mnkl, BlockShapeMNK blk_shape_MNK,
                                 BlockCoordMNKL blk_coord_mnkl, cute::Tensor<FrgEngine, FrgLayout> const& accumulators,
                                 TiledMma tiled_mma, ResidueMNK, int thread_idx, char*) {
    using namespace cute;
    static_assert(is_static<BlockShapeMNK>::value && is_static<FrgLayout>::value);
    constexpr int kTileN = decltype(size<1>(blk_shape_MNK))::value;
    const auto M = get<0>(problem_shape_mnkl);
    const auto N = get<1>(problem_shape_mnkl);
    auto [m_coord, n_coord, k_coord, l_coord] = blk_coord_mnkl;

    // Global (row, wide column) of every accumulator this thread holds.
    Tensor coords = local_tile(make_identity_tensor(make_shape(M, N)), take<0, 2>(blk_shape_MNK),
                               make_coord(m_coord, n_coord));
    auto thr_mma = tiled_mma.get_thread_slice(thread_idx);
    Tensor tCcD = thr_mma.partition_C(coords);
    CUTE_STATIC_ASSERT_V(size(tCcD) == size(accumulators));
    Tensor acc = make_tensor(accumulators.data(), cutlass_sm90::accumulator_rows_cols(accumulators.layout()));
    Tensor crd = make_tensor(tCcD.data(), cutlass_sm90::accumulator_rows_cols(tCcD.layout()));

    // Columns fit in 32 bits (the host checks ldw < 2^31). No divisions per element: they are
    // long instruction sequences, and a slow-path call inside the kernel would serialize wgmma.
    const int HD = params_.H * params_.dk;
    const int n_tile0 = int(n_coord) * kTileN;
    const int col0 = int(get<1>(crd(0, 0))) - n_tile0;  // this thread's first column in the tile

    // Most tiles lie inside one of q, k, v, g (always when 256 divides H·dk): one branch per
    // tile, then straight-line code per output. A tile past the q|k|v|g columns holds only
    // alpha and stride padding: its own short path, which also stores nothing for a tile wholly
    // past alpha (none unless the scheduler rounds its tile grid up; an early return for those
    // made ptxas spill). Only tiles that straddle a segment boundary take the per-element path:
    // its unrolled code is ~130 KB of SASS, and running it on every row's alpha tile (and on the
    // scheduler's padding tiles) took 14% of the consumer warps' time at the reference shape,
    // mostly stalled on instruction fetch (Nsight Compute, docs/results/projchain_h100.md).
    const int seg = n_tile0 / HD;  // once per tile
    const bool uniform = seg < 4 && n_tile0 + kTileN <= (seg + 1) * HD && col0 < 8;
    if (n_tile0 >= 4 * HD && col0 < 8) {
      store_alpha(acc, crd, M, n_tile0 - 4 * HD, col0);
    } else if (uniform) {
      // Lane t's four output columns in each 16-column block start at 4t (col0 = 2t).
      const int lane_col = projchain::fused_output_column_in_block(col0);
      __nv_bfloat16* const out = (seg == 0 ? params_.q : seg == 1 ? params_.k : seg == 2 ? params_.v : params_.g) +
                                 (n_tile0 - seg * HD) + lane_col;
      if (seg == 1) store_uniform<1>(acc, crd, out, M, HD);
      else if (seg == 3) store_uniform<3>(acc, crd, out, M, HD);
      else store_uniform<0>(acc, crd, out, M, HD);
    } else {
      store_generic<kTileN>(acc, crd, M, HD, n_tile0);
    }
  }

 private:
  static CUTLASS_DEVICE float sigmoid(float a) { return __fdividef(1.0f, 1.0f + __expf(-a)); }
  static CUTLASS_DEVICE float silu(float a) { return silu_fast(a); }
  // 1 / max(‖x‖, 1e-12) as rsqrt(max(‖x‖², 1e-24)): a zero head is scaled by 1e12 and stays 0.
  static CUTLASS_DEVICE float inverse_norm(float sum_sq) { return rsqrtf(fmaxf(sum_sq, 1e-24f)); }

  // A row's partial sums over the 4 lanes of its quad (the wgmma accumulator layout); every
  // lane runs the shuffles, whatever its row.
  static CUTLASS_DEVICE float quad_sum(float s) {
    s += __shfl_xor_sync(0xffffffffu, s, 1);
    s += __shfl_xor_sync(0xffffffffu, s, 2);
    return s;
  }

  // kSeg 0: identity (q or v), 1: k (per-head l2norm), 3: g (silu). `out` points at this
  // lane's first output column (4t of the tile's first 16-column block) in row 0; each block's
  // columns are that plus a compile-time offset (the accumulator layout is static), so stores
  // use immediate offsets.
  // The 64-column quarter of an element is then offset / 64 when the first column is below 8
  // (the caller checks): k's sums are kept per quarter and combined per head (dk = 64 or 128).
  template <int kSeg, class Acc, class Crd>
  CUTLASS_DEVICE void store_uniform(Acc const& acc, Crd const& crd, __nv_bfloat16* out, int64_t M, int HD) const {
    using namespace cute;
    CUTLASS_PRAGMA_UNROLL
    for (int r = 0; r < size<0>(acc); ++r) {
      const int64_t row = get<0>(crd(r, 0));
      float inv[4] = {1.0f, 1.0f, 1.0f, 1.0f};
      if constexpr (kSeg == 1) {
        float sum[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        CUTLASS_PRAGMA_UNROLL
        for (int c = 0; c < size<1>(acc); ++c) {
          const int offset = int(get<1>(crd(r, c)) - get<1>(crd(r, 0)));
          sum[offset / 64] += acc(r, c) * acc(r, c);
        }
        CUTLASS_PRAGMA_UNROLL
        for (int q = 0; q < 4; ++q) sum[q] = quad_sum(sum[q]);
        CUTLASS_PRAGMA_UNROLL
        for (int q = 0; q < 4; ++q)
          inv[q] = inverse_norm(params_.dk == 64 ? sum[q] : sum[q & 2] + sum[(q & 2) + 1]);
      }
      // Lane t's accumulator columns 2t, 2t+1, 2t+8, 2t+9 of each 16-column block hold output
      // columns 4t .. 4t+3 (the packed column order): one 8-byte store, and a warp's store
      // fills whole 32-byte sectors (8 rows x 32 bytes). 4-byte stores half-filled every sector
      // and stalled the consumer warps on the store queue (lg_throttle, Nsight Compute); the
      // previous version swapped words between neighbour lanes instead of permuting the weight
      // (a shuffle and three selects per four values: 1.0% slower at the reference shape and
      // 0.6% at N = 8192, docs/results/projchain_h100.md).
      CUTLASS_PRAGMA_UNROLL
      for (int c = 0; c < size<1>(acc); c += 4) {
        const int offset = int(get<1>(crd(r, c)) - get<1>(crd(r, 0)));  // 16q; c + 2 is 8 further
        uint2 both;
        const float block_inv = inv[offset / 64];  // a 16-column block lies inside one quarter
        both.x = activate_pair<kSeg>(acc(r, c), acc(r, c + 1), block_inv);
        both.y = activate_pair<kSeg>(acc(r, c + 2), acc(r, c + 3), block_inv);
        if (row < M) *reinterpret_cast<uint2*>(out + row * HD + offset) = both;
      }
    }
  }

  // One pair of adjacent columns, activated and packed as bf16x2 (low half: the first column).
  template <int kSeg>
  static CUTLASS_DEVICE uint32_t activate_pair(float y0, float y1, float inv) {
    if constexpr (kSeg == 1) {
      y0 *= inv;
      y1 *= inv;
    } else if constexpr (kSeg == 3) {
      y0 = silu(y0);
      y1 = silu(y1);
    }
    const __nv_bfloat162 pair = __floats2bfloat162_rn(y0, y1);
    return *reinterpret_cast<const uint32_t*>(&pair);
  }

  // A tile of alpha columns (and padding): sigmoid, element by element (alpha's row stride H
  // may be odd). `a0` is the tile's first alpha column; the columns this thread holds grow
  // with c (pairs 8 apart), so the loop stops at the first one past alpha.
  template <class Acc, class Crd>
  CUTLASS_DEVICE void store_alpha(Acc const& acc, Crd const& crd, int64_t M, int a0, int col0) const {
    using namespace cute;
    const int H = params_.H;
    CUTLASS_PRAGMA_UNROLL
    for (int r = 0; r < size<0>(acc); ++r) {
      const int64_t row = get<0>(crd(r, 0));
      if (row >= M) continue;
      __nv_bfloat16* const out_row = params_.alpha + row * H;
      CUTLASS_PRAGMA_UNROLL
      for (int c = 0; c < size<1>(acc); c += 2) {
        const int a = a0 + col0 + int(get<1>(crd(r, c)) - get<1>(crd(r, 0)));
        if (a >= H) break;
        out_row[a] = __float2bfloat16(sigmoid(acc(r, c)));
        if (a + 1 < H) out_row[a + 1] = __float2bfloat16(sigmoid(acc(r, c + 1)));
      }
    }
  }

  // Any tile: each element finds its output from its column.
  template <int kTileN, class Acc, class Crd>
  CUTLASS_DEVICE void store_generic(Acc const& acc, Crd const& crd, int64_t M, int HD, int n_tile0) const {
    using namespace cute;
    const int wide = 4 * HD + params_.H;
    CUTLASS_PRAGMA_UNROLL
    for (int r = 0; r < size<0>(acc); ++r) {
      const int64_t row = get<0>(crd(r, 0));
      // Sum of squares of each head of k in this tile (slot = column in tile / dk).
      float sum_sq[kMaxHeadsPerTile];
      CUTLASS_PRAGMA_UNROLL
      for (int h = 0; h < kMaxHeadsPerTile; ++h) sum_sq[h] = 0.0f;
      CUTLASS_PRAGMA_UNROLL
      for (int c = 0; c < size<1>(acc); ++c) {
        const int col = int(get<1>(crd(r, c)));
        if (col >= HD && col < 2 * HD) {
          const int slot = (col - n_tile0) >> params_.dk_log2;
          CUTLASS_PRAGMA_UNROLL
          for (int h = 0; h < kMaxHeadsPerTile; ++h)
            if (h == slot) sum_sq[h] += acc(r, c) * acc(r, c);  // static index: stays in registers
        }
      }
      float inv_norm[kMaxHeadsPerTile];
      CUTLASS_PRAGMA_UNROLL
      for (int h = 0; h < kMaxHeadsPerTile; ++h) inv_norm[h] = inverse_norm(quad_sum(sum_sq[h]));
      if (row >= M) continue;

      // Pairs of adjacent columns (c, c+1) sit in one thread: q, k, v, g segments have even
      // widths and even starts, so a pair never straddles two of them and stores as bf16x2.
      // The packed column order keeps a pair adjacent: it maps even column 2j to an even
      // column and 2j + 1 to the one after it.
      CUTLASS_PRAGMA_UNROLL
      for (int c = 0; c < size<1>(acc); c += 2) {
        const int col = int(get<1>(crd(r, c)));
        const float a0 = acc(r, c), a1 = acc(r, c + 1);
        if (col < 4 * HD) {
          const int seg = int(col >= HD) + int(col >= 2 * HD) + int(col >= 3 * HD);
          // The pair's output columns (the packed order, projchain_fused_columns.hpp).
          const int64_t offset = row * HD + (int(projchain::fused_source_column(col, 4 * HD)) - seg * HD);
          float y0 = a0, y1 = a1;
          __nv_bfloat16* out = params_.q;
          if (seg == 1) {
            const int slot = (col - n_tile0) >> params_.dk_log2;
            float inv = inv_norm[0];
            CUTLASS_PRAGMA_UNROLL
            for (int h = 1; h < kMaxHeadsPerTile; ++h)
              if (h == slot) inv = inv_norm[h];
            y0 *= inv;
            y1 *= inv;
            out = params_.k;
          } else if (seg == 2) {
            out = params_.v;
          } else if (seg == 3) {
            y0 = silu(a0);
            y1 = silu(a1);
            out = params_.g;
          }
          *reinterpret_cast<__nv_bfloat162*>(out + offset) = __floats2bfloat162_rn(y0, y1);
        } else {
          // alpha: H columns, an odd row stride possible, so element by element.
          const int a = col - 4 * HD;
          if (col < wide) params_.alpha[row * params_.H + a] = __float2bfloat16(sigmoid(a0));
          if (col + 1 < wide) params_.alpha[row * params_.H + a + 1] = __float2bfloat16(sigmoid(a1));
        }
      }
    }
  }

  Params params_;
};

}  // namespace overlap::cuda::projchain_fused
