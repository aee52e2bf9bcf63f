#pragma once
// The scan of one tile (chunk_t timesteps x 64 channels of one batch row) once its (a, b) pairs
// and gate factors are in shared memory: two-level scan inside the chunk (serial runs in
// registers, then the segment aggregates), carries across chunks by look-back, then a second
// pass that applies the carry-in and emits each step. Used by the scan kernels of three_kernel
// and semi_fused (scan_tiling in linrnn_tiling.hpp); chunk_fused scans in its GEMM epilogue.
#include <cuda_runtime.h>

#include "linrnn/linrnn_lookback.cuh"

namespace overlap::cuda::linrnn_kernel {

constexpr int kScanThreads = 256;
constexpr int kSegments = kScanThreads / kChannels;  // 4
constexpr int kRowPitch = kChannels + 4;             // floats per row of the (a, b, g) arrays

// fp32 arrays [chunk_t][kRowPitch]: a (1 on steps past T), b = (1 - a) u (0 past T), g = silu z.
struct ScanSmem {
  float* a;
  float* b;
  float* g;
  float* seg_a;  // [kSegments][kChannels]
  float* seg_b;
  float* h_in;   // [kChannels]
};

// What one tile writes: y = h * g in bf16 (semi_fused), or h in fp32 (three_kernel).
struct ScanOut {
  bf16* y;          // [B, T, dv] or null
  float* h;         // [B, T, dv] or null
  const float* h0;  // [B, dv] or null (zeros)
  float* hT;        // [B, dv] or null
  int T, dv;
};

// Host side, before a tile kernel's launch: its dynamic shared memory, and the largest
// shared-memory carveout so that several CTAs fit on an SM.
template <class Kernel>
cudaError_t allow_tile_smem(Kernel* kernel, int bytes) {
  if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes); e != cudaSuccess)
    return e;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared);
}

template <int ChunkT>
__device__ __forceinline__ void scan_tile(const ScanSmem& s, const Lookback& lb, const Tile& tile, int rows,
                                          int num_chunks, const ScanOut& out) {
  static_assert(ChunkT % kSegments == 0, "chunk must split into equal segments");
  constexpr int kRun = ChunkT / kSegments;
  const int c = threadIdx.x % kChannels, seg = threadIdx.x / kChannels;
  const int r0 = seg * kRun;
  // Pass 1: this segment's aggregate, composing h -> a h + b step by step.
  float A = 1.0f, Bv = 0.0f;  // sass:scan.pass1 {
#pragma unroll 8
  for (int r = r0; r < r0 + kRun; ++r) {
    const float a = s.a[r * kRowPitch + c];
    Bv = fmaf(a, Bv, s.b[r * kRowPitch + c]);
    A *= a;
  }
  s.seg_a[seg * kChannels + c] = A;
  s.seg_b[seg * kChannels + c] = Bv;
  __syncthreads();  // } sass:scan.pass1
  const int ch = tile.cb * kChannels + c;
  if (threadIdx.x < kChannels) {  // sass:scan.carry {
    float ca = 1.0f, cbv = 0.0f;
#pragma unroll
    for (int k = 0; k < kSegments; ++k) {
      const float sa = s.seg_a[k * kChannels + c];
      cbv = fmaf(sa, cbv, s.seg_b[k * kChannels + c]);
      ca *= sa;
    }
    const float h_start = (tile.chunk == 0 && out.h0 && ch < out.dv) ? out.h0[tile.b * out.dv + ch] : 0.0f;
    float h_end;
    s.h_in[c] = look_back(lb, tile, rows, ca, cbv, h_start, &h_end);  // sass:scan.lookback {}
    if (tile.chunk == num_chunks - 1 && out.hT && ch < out.dv) out.hT[tile.b * out.dv + ch] = h_end;
  }
  __syncthreads();  // } sass:scan.carry
  // Pass 2: carry into this segment, then every step.
  float h = s.h_in[c];  // sass:scan.pass2 {
  for (int k = 0; k < seg; ++k) h = fmaf(s.seg_a[k * kChannels + c], h, s.seg_b[k * kChannels + c]);
  const bool channel_ok = ch < out.dv;
  const long long row0 = static_cast<long long>(tile.b) * out.T + static_cast<long long>(tile.chunk) * ChunkT;
  const int steps = min(kRun, out.T - (tile.chunk * ChunkT + r0));  // may be <= 0 in the tail chunk
#pragma unroll 8
  for (int r = r0; r < r0 + kRun; ++r) {
    h = fmaf(s.a[r * kRowPitch + c], h, s.b[r * kRowPitch + c]);
    if (channel_ok && r - r0 < steps) {
      const long long at = (row0 + r) * out.dv + ch;
      if (out.y) out.y[at] = __float2bfloat16_rn(h * s.g[r * kRowPitch + c]);
      else out.h[at] = h;
    }
  }  // } sass:scan.pass2
}

}  // namespace overlap::cuda::linrnn_kernel
