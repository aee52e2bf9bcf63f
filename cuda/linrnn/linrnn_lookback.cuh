#pragma once
// Chunk carries across CTAs: a decoupled look-back over per-(chunk, batch row, channel block)
// tiles (CUB's single-pass scan, applied to the affine maps h -> A h + B of whole chunks).
//
// Workspace (zero-filled once before first use, then owned by the kernels):
//   header  [0] next tile id, [1] tiles finished, [2] epoch of the running launch
//   words   per tile and channel three 64-bit words {A, flag}, {B, flag}, {h, flag}: the chunk's
//           aggregate and its inclusive h (h at the chunk's last step), each value stored
//           together with its flag (epoch * 4 + state; state 1: aggregate, 2: inclusive) in one
//           single-copy-atomic store, so neither side needs a fence and each channel polls its
//           own words instead of a few shared flag lines. Words from earlier launches carry
//           older epochs, so nothing needs clearing between launches; the last CTA to finish
//           resets the two counters and advances the epoch.
// (Round 1 also had CUB's "fenced" protocol: data, __threadfence, a release-stored flag per
// warp. Measured against this one on the H100 it was slower at every shape, 17.1 vs 21.9 us for
// chunk_fused at the reference shape, and was deleted.)
// The scan kernels draw tile ids from an atomic counter, chunk-major (id = chunk * rows + row,
// row = batch row x channel block), so the tile a CTA waits for was handed to a CTA that is
// already running: the spin-waits always make progress, whatever order the hardware starts CTAs
// in. chunk_fused (a persistent GEMM) uses the words and the epoch but not the tile counter:
// its tiles are id = M tile * channel blocks + channel block, each counted finished once, in an
// order that makes every wait point at a lower, resident tile (linrnn_scan_warpgroup.cuh).
#include <cstddef>
#include <cstdint>

#include "linrnn/linrnn_device.cuh"
#include "linrnn/linrnn_tiling.hpp"

namespace overlap::cuda::linrnn_kernel {

constexpr int kChannels = 64;  // channels per tile (scan_tiling channels_per_cta / chunk_fused_tiling block_dv)

struct Lookback {
  unsigned* header;
  unsigned long long* words;
};

// Byte offsets inside the look-back workspace for `tiles` tiles.
struct LookbackLayout {
  std::size_t words, bytes;
};
__host__ __device__ constexpr std::size_t align256(std::size_t n) { return (n + 255) / 256 * 256; }
__host__ __device__ constexpr LookbackLayout lookback_layout(std::size_t tiles) {
  const std::size_t words = 256;
  return {words, words + align256(tiles * 3 * kChannels * 8)};
}
inline Lookback lookback_view(void* base, std::size_t tiles) {
  auto* p = static_cast<unsigned char*>(base);
  return {reinterpret_cast<unsigned*>(p), reinterpret_cast<unsigned long long*>(p + lookback_layout(tiles).words)};
}

// Where a CTA's tile lies.
struct Tile {
  int id, chunk, b, cb;
  unsigned epoch;
};

// Thread 0 draws the next tile id; every thread gets it through `slot` (two shared words).
__device__ __forceinline__ Tile next_tile(const Lookback& lb, int B, int channel_blocks, unsigned* slot) {
  if (threadIdx.x == 0) {
    slot[0] = atomicAdd(&lb.header[0], 1u);
    slot[1] = __ldcg(&lb.header[2]);
  }
  __syncthreads();
  const int id = static_cast<int>(slot[0]);
  const int rows = B * channel_blocks;
  const int row = id % rows;
  return {id, id / rows, row / channel_blocks, row % channel_blocks, slot[1]};
}

// `n` more tiles of this launch are finished (one thread calls it, after its tiles' threads
// have read the epoch): the launch's last tile resets the counters and advances the epoch for
// the next launch (nothing of this launch reads them any more).
__device__ __forceinline__ void count_finished_tiles(const Lookback& lb, unsigned n, unsigned total_tiles,
                                                     unsigned epoch) {
  __threadfence();
  if (atomicAdd(&lb.header[1], n) + n == total_tiles) {
    atomicExch(&lb.header[0], 0u);
    atomicExch(&lb.header[1], 0u);
    atomicExch(&lb.header[2], epoch + 1);
    __threadfence();
  }
}

// The scan kernels' form, after every global write of the CTA (every CTA drew its id and read
// the epoch before it counted itself finished).
__device__ __forceinline__ void finish_tile(const Lookback& lb, const Tile& tile, int total_tiles) {
  __syncthreads();
  if (threadIdx.x == 0) count_finished_tiles(lb, 1u, static_cast<unsigned>(total_tiles), tile.epoch);
}

// Called by the first kChannels threads (thread c = channel c of the tile) with the chunk's
// aggregate (A, B); returns h before the chunk's first step. Publishes the aggregate, walks back
// over predecessors (composing aggregates until one has its inclusive h), then publishes this
// chunk's inclusive h = A h_in + B. `h_start` is h0 (or 0) for chunk 0. Each thread stores and
// polls only its own channel's words. A predecessor is usable when its h word carries this
// launch's inclusive flag, or its A and B words both carry the aggregate flag. kWindow
// predecessors are polled with independent loads per step, so a tile waits about one L2 round
// trip per kWindow chunks instead of one per chunk.
constexpr int kWindow = linrnn::kLookbackWindow;  // three words per predecessor in flight: 48 registers

__device__ __forceinline__ unsigned long long pack_word(float v, unsigned flag) {
  return (static_cast<unsigned long long>(flag) << 32) | __float_as_uint(v);
}
__device__ __forceinline__ unsigned flag_of(unsigned long long w) { return static_cast<unsigned>(w >> 32); }
__device__ __forceinline__ float value_of(unsigned long long w) { return __uint_as_float(static_cast<unsigned>(w)); }

// One channel's look-back. `id` is the tile's word index, its predecessors are id - stride,
// id - 2 stride, ...; `first`: no predecessor (h_in = h_start). A tile whose aggregate A is 0
// (it contains a reset: chunk_fused's tiles span batch rows) publishes its inclusive h = B at
// once, since that does not depend on h_in: its successors stop there without waiting for its
// look-back.
__device__ __forceinline__ float look_back_channel(const Lookback& lb, int id, int stride, int c, unsigned epoch,
                                                   bool first, float A, float B, float h_start, float* h_end) {
  const unsigned aggregate = epoch * 4 + 1, inclusive = epoch * 4 + 2;
  // word k (0: A, 1: B, 2: h) of tile t, this channel
  auto word = [&](int t, int k) { return &lb.words[(static_cast<std::size_t>(t) * 3 + k) * kChannels + c]; };
  float h_in = h_start;
  if (!first) {
    if (A == 0.0f) {
      store_relaxed_u64(word(id, 2), pack_word(B, inclusive));
    } else {
      store_relaxed_u64(word(id, 0), pack_word(A, aggregate));
      store_relaxed_u64(word(id, 1), pack_word(B, aggregate));
    }
    float acc_a = 1.0f, acc_b = 0.0f;
    for (int first_t = id - stride;; first_t -= kWindow * stride) {
      unsigned long long wa[kWindow], wb[kWindow], wh[kWindow];
      int n;
      for (;;) {
#pragma unroll
        for (int k = 0; k < kWindow; ++k) {
          const int t = first_t - k * stride;
          wh[k] = t >= 0 ? load_relaxed_u64(word(t, 2)) : 0ull;
          wa[k] = t >= 0 ? load_relaxed_u64(word(t, 0)) : 0ull;
          wb[k] = t >= 0 ? load_relaxed_u64(word(t, 1)) : 0ull;
        }
        n = kWindow;
        bool ready = true;
#pragma unroll
        for (int k = kWindow - 1; k >= 0; --k) {
          // A first tile (t < stride) publishes only its inclusive h, so an aggregate flag there
          // is a stale word of an earlier launch (possible once the 30-bit epoch wraps): wait.
          const bool chunk0 = first_t - k * stride < stride;
          if (flag_of(wh[k]) == inclusive) n = k, ready = true;
          else if (chunk0 || flag_of(wa[k]) != aggregate || flag_of(wb[k]) != aggregate) n = k, ready = false;
        }
        if (ready) break;
      }
#pragma unroll
      for (int k = 0; k < kWindow; ++k)
        if (k < n) {
          acc_b = fmaf(acc_a, value_of(wb[k]), acc_b);
          acc_a *= value_of(wa[k]);
        }
      if (n < kWindow) {
        float hv = 0.0f;
#pragma unroll
        for (int k = 0; k < kWindow; ++k)
          if (k == n) hv = value_of(wh[k]);
        h_in = fmaf(acc_a, hv, acc_b);
        break;
      }
    }
  }
  const float h_out = fmaf(A, h_in, B);
  store_relaxed_u64(word(id, 2), pack_word(h_out, inclusive));
  *h_end = h_out;
  return h_in;
}

// The tile kernels' form: thread c = channel c of the tile, predecessors `rows` tiles apart.
__device__ __forceinline__ float look_back(const Lookback& lb, const Tile& tile, int rows, float A, float B,
                                           float h_start, float* h_end) {
  return look_back_channel(lb, tile.id, rows, static_cast<int>(threadIdx.x), tile.epoch, tile.chunk == 0, A, B,
                           h_start, h_end);
}

}  // namespace overlap::cuda::linrnn_kernel
