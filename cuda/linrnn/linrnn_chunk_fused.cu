// chunk_fused: one kernel. Each CTA owns one (batch row, chunk of chunk_t timesteps, 64
// channels) tile: it computes the tile's projection x_chunk [chunk_t, d] @ W[:, u|a|z columns of
// its channels] on tensor cores (mma.sync m16n8k16, fp32 accumulate; d streamed through a
// cp.async ring), turns the accumulators into (a, b, silu z) in shared memory, and runs the
// same scan_tile as the scan kernels (two-level scan, look-back across chunks). The projection
// never leaves the SM.
#include <cuda_runtime.h>

#include "linrnn/linrnn_launch.hpp"
#include "linrnn/linrnn_scan_tile.cuh"
#include "linrnn/linrnn_tiling.hpp"

namespace overlap::cuda::linrnn_launch {
namespace {

using namespace linrnn_kernel;

struct Config {
  static constexpr linrnn::ChunkFusedTiling kT = linrnn::chunk_fused_tiling();
  static constexpr int kChunkT = kT.chunk_t;                   // GEMM M: timesteps per tile
  static constexpr int kK = kT.tile_k;                         // d-slice per stage
  static constexpr int kN = 3 * kT.block_dv;                   // [u | a | z] columns
  static constexpr int kStages = kT.stages;
  static constexpr int kWarpsM = kT.warps_m;
  static constexpr int kWarpsN = kT.warps / kT.warps_m;
  static constexpr int kWarpRows = kChunkT / kWarpsM;           // timesteps per warp
  static constexpr int kWarpChannels = kT.block_dv / kWarpsN;  // channels per warp (in each of u, a, z)
  static constexpr int kMTiles = kWarpRows / 16;
  static constexpr int kXStage = kChunkT * kK;                  // bf16 elements
  static constexpr int kWStage = kK * kN;
  static constexpr int kRing = kT.ring_bytes();
  static constexpr int kScan = kT.scan_bytes();
  static constexpr int kUnion = kRing > kScan ? kRing : kScan;
  static constexpr int kBytes = kT.smem_bytes();
  static_assert(kT.block_dv == kChannels && kT.threads() == kScanThreads && kT.segments == kSegments,
                "chunk_fused kernel and linrnn_tiling.hpp disagree");
  static_assert(kK == 64 && kWarpChannels == 16 && kWarpRows % 16 == 0, "fragment layout assumes these");
  static_assert(kScan == 3 * kChunkT * kRowPitch * 4, "scan arrays and linrnn_tiling.hpp disagree");
  static_assert(kBytes == kUnion + (2 * kSegments + 1) * kChannels * 4 + 16, "smem layout disagrees");
};

struct Args {
  const bf16* x;
  const bf16* w;
  int B, T, d, dv;
  int channel_blocks, num_chunks, k_tiles;
};

// x rows are 64 bf16 = 8 chunks of 16 bytes; W rows 192 bf16 = 24 chunks. Chunk c of row r
// lives at c ^ (r & 7) (within its group of 8), so the 8 rows one ldmatrix reads fall in
// different banks.
__device__ __forceinline__ int swz(int chunk, int row) { return chunk ^ (row & 7); }

__device__ __forceinline__ void load_stage(const Args& a, const Tile& tile, bf16* sx, bf16* sw, int kt) {
  using C = Config;
  const int k0 = kt * C::kK;
  for (int i = threadIdx.x; i < C::kChunkT * 8; i += kScanThreads) {
    const int r = i >> 3, c = i & 7;
    const int t = tile.chunk * C::kChunkT + r, k = k0 + c * 8;
    const bool ok = t < a.T && k < a.d;
    const bf16* src = ok ? a.x + (static_cast<long long>(tile.b) * a.T + t) * a.d + k : a.x;
    ptx::cp_async_16(sx + r * C::kK + swz(c, r) * 8, src, ok ? 16 : 0);
  }
  for (int i = threadIdx.x; i < C::kK * (C::kN / 8); i += kScanThreads) {
    const int kr = i / (C::kN / 8), c = i % (C::kN / 8);
    const int part = c / 8, ch = tile.cb * kChannels + (c % 8) * 8, k = k0 + kr;
    const bool ok = k < a.d && ch < a.dv;
    const bf16* src = ok ? a.w + static_cast<long long>(k) * 3 * a.dv + part * a.dv + ch : a.w;
    ptx::cp_async_16(sw + kr * C::kN + swz(c, kr) * 8, src, ok ? 16 : 0);
  }
}

__global__ void __launch_bounds__(kScanThreads, 2) chunk_fused_kernel(Args args, Lookback lb, ScanOut out) {
  using C = Config;
  extern __shared__ __align__(128) unsigned char smem[];
  bf16* ring = reinterpret_cast<bf16*>(smem);
  float* small = reinterpret_cast<float*>(smem + C::kUnion);
  unsigned* slot = reinterpret_cast<unsigned*>(smem + C::kBytes - 16);
  const Tile tile = next_tile(lb, args.B, args.channel_blocks, slot);

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = warp % C::kWarpsM, wn = warp / C::kWarpsM;
  auto sx = [&](int stage) { return ring + stage * (C::kXStage + C::kWStage); };
  auto sw = [&](int stage) { return ring + stage * (C::kXStage + C::kWStage) + C::kXStage; };

  // acc[m-tile][part u/a/z][n8 half][4]: this thread's u, a_pre, z of the same (t, channel).
  float acc[C::kMTiles][3][2][4];
#pragma unroll
  for (int mi = 0; mi < C::kMTiles; ++mi)
#pragma unroll
    for (int p = 0; p < 3; ++p)
#pragma unroll
      for (int q = 0; q < 2; ++q)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[mi][p][q][e] = 0.0f;

#pragma unroll
  for (int s = 0; s < C::kStages - 1; ++s) {
    if (s < args.k_tiles) load_stage(args, tile, sx(s), sw(s), s);
    ptx::cp_async_commit();
  }
  const int m = lane >> 3;  // which 8x8 matrix this lane addresses in ldmatrix.x4
  for (int kt = 0; kt < args.k_tiles; ++kt) {
    ptx::cp_async_wait<C::kStages - 2>();
    __syncthreads();
    const int next = kt + C::kStages - 1;
    if (next < args.k_tiles) load_stage(args, tile, sx(next % C::kStages), sw(next % C::kStages), next);
    ptx::cp_async_commit();
    const bf16* xs = sx(kt % C::kStages);
    const bf16* ws = sw(kt % C::kStages);
#pragma unroll
    for (int kk = 0; kk < C::kK / 16; ++kk) {
      std::uint32_t bfr[3][4];
#pragma unroll
      for (int p = 0; p < 3; ++p) {
        const int kr = kk * 16 + (m & 1) * 8 + (lane & 7);
        const int nc = p * 8 + wn * 2 + (m >> 1);
        ptx::ldmatrix_x4_trans(bfr[p], ws + kr * C::kN + swz(nc, kr) * 8);
      }
#pragma unroll
      for (int mi = 0; mi < C::kMTiles; ++mi) {
        const int row = wm * C::kWarpRows + mi * 16 + (m & 1) * 8 + (lane & 7);
        std::uint32_t afr[4];
        ldmatrix_x4(afr, xs + row * C::kK + swz(kk * 2 + (m >> 1), row) * 8);
#pragma unroll
        for (int p = 0; p < 3; ++p)
#pragma unroll
          for (int q = 0; q < 2; ++q) ptx::mma_bf16_16816(acc[mi][p][q], afr, bfr[p][2 * q], bfr[p][2 * q + 1]);
      }
    }
  }
  ptx::cp_async_wait<0>();
  __syncthreads();  // the ring is reused by the scan arrays below

  float* fa = reinterpret_cast<float*>(smem);
  const ScanSmem s{fa, fa + C::kChunkT * kRowPitch, fa + 2 * C::kChunkT * kRowPitch, small, small + kSegments * kChannels,
                   small + 2 * kSegments * kChannels};
#pragma unroll
  for (int mi = 0; mi < C::kMTiles; ++mi)
#pragma unroll
    for (int q = 0; q < 2; ++q)
#pragma unroll
      for (int hf = 0; hf < 2; ++hf) {
        const int r = wm * C::kWarpRows + mi * 16 + (lane >> 2) + hf * 8;
        const int c = wn * C::kWarpChannels + q * 8 + (lane & 3) * 2;
        const bool t_ok = tile.chunk * C::kChunkT + r < args.T;
        float av[2], bv[2], gv[2];
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float u = acc[mi][0][q][hf * 2 + e], ap = acc[mi][1][q][hf * 2 + e], z = acc[mi][2][q][hf * 2 + e];
          const Gate g = gate_of(ap);
          // Past T (and past dv, where W was zero-filled) the step is the identity map.
          const bool ok = t_ok && tile.cb * kChannels + c + e < args.dv;
          av[e] = ok ? g.a : 1.0f;
          bv[e] = ok ? g.one_minus_a * u : 0.0f;
          gv[e] = silu(z);
        }
        *reinterpret_cast<float2*>(s.a + r * kRowPitch + c) = make_float2(av[0], av[1]);
        *reinterpret_cast<float2*>(s.b + r * kRowPitch + c) = make_float2(bv[0], bv[1]);
        *reinterpret_cast<float2*>(s.g + r * kRowPitch + c) = make_float2(gv[0], gv[1]);
      }
  __syncthreads();
  scan_tile<C::kChunkT>(s, lb, tile, args.B * args.channel_blocks, args.num_chunks, out);
  finish_tile(lb, tile, args.num_chunks * args.B * args.channel_blocks);
}

std::size_t tiles_of(const Problem& p) {
  return static_cast<std::size_t>((p.T + Config::kChunkT - 1) / Config::kChunkT) * p.B *
         ((p.dv + kChannels - 1) / kChannels);
}

cudaError_t launch(const Problem& p, void* lookback, cudaStream_t stream) {
  using C = Config;
  auto kernel = chunk_fused_kernel;
  if (cudaError_t e = allow_tile_smem(kernel, C::kBytes); e != cudaSuccess) return e;
  Args a{};
  a.x = static_cast<const bf16*>(p.x);
  a.w = static_cast<const bf16*>(p.w);
  a.B = p.B;
  a.T = p.T;
  a.d = p.d;
  a.dv = p.dv;
  a.channel_blocks = (p.dv + kChannels - 1) / kChannels;
  a.num_chunks = (p.T + C::kChunkT - 1) / C::kChunkT;
  a.k_tiles = (p.d + C::kK - 1) / C::kK;
  ScanOut out{};
  out.y = static_cast<bf16*>(p.y);
  out.h0 = p.h0;
  out.hT = p.hT;
  out.T = p.T;
  out.dv = p.dv;
  const std::size_t tiles = tiles_of(p);
  kernel<<<static_cast<unsigned>(tiles), kScanThreads, C::kBytes, stream>>>(a, lookback_view(lookback, tiles), out);
  return cudaGetLastError();
}

}  // namespace

std::size_t chunk_fused_lookback_bytes(const Problem& p) { return lookback_layout(tiles_of(p)).bytes; }

int chunk_fused(const Problem& p, void* lookback, CUstream_st* stream) { return launch(p, lookback, stream); }

}  // namespace overlap::cuda::linrnn_launch
