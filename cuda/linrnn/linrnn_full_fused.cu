// full_fused: one kernel that walks T one timestep at a time, doing the projection of x_t as a
// vector-matrix product on the FMA pipes, then one scan step. It exists so that the model can
// show why it loses (a dependent chain of T steps, each a load, a reduction and a barrier);
// it is written to be correct, not fast.
#include <cuda_runtime.h>

#include "linrnn/linrnn_device.cuh"
#include "linrnn/linrnn_launch.hpp"
#include "linrnn/linrnn_tiling.hpp"

// A named namespace (not an anonymous one): the kernel's mangled name is then the same in every
// build, so the model's SASS table (sim/models/generated/linrnn_full_fused_sass.hpp) can name it.
namespace overlap::cuda::linrnn_full_fused {

using namespace linrnn_kernel;

constexpr linrnn::FullFusedTiling kTiling = linrnn::full_fused_tiling();
constexpr int kCh = kTiling.channels;  // channels per CTA: 3 * kCh columns of W
constexpr int kThreads = kTiling.threads;
static_assert(3 * kCh <= kThreads && kCh <= 32, "one thread per column, one lane per channel");

// Shared memory: x_t (fp32, d), the 3 kCh projections of this step, and the CTA's W columns
// (bf16, d x 3 kCh) when they fit in w_resident_max_bytes; otherwise W is read from L2.
__global__ void __launch_bounds__(kThreads) full_fused_kernel(const bf16* __restrict__ x, const bf16* __restrict__ w,
                                                              const float* __restrict__ h0, bf16* __restrict__ y,
                                                              float* __restrict__ hT, int T, int d, int dv,
                                                              bool w_resident) {
  extern __shared__ __align__(16) unsigned char smem[];
  float* xs = reinterpret_cast<float*>(smem);
  float* proj = xs + d;
  bf16* wsm = reinterpret_cast<bf16*>(proj + 3 * kCh);
  const int b = blockIdx.y, ch0 = blockIdx.x * kCh;
  const int col = threadIdx.x;  // column of this CTA's W slice: part * kCh + channel
  const int part = col / kCh, ch = ch0 + col % kCh;
  const bool col_ok = col < 3 * kCh && ch < dv;
  const long long wcol = static_cast<long long>(part) * dv + ch;
  if (w_resident) {
    for (int i = threadIdx.x; i < d * 3 * kCh; i += kThreads) {
      const int k = i / (3 * kCh), c = i % (3 * kCh), pc = ch0 + c % kCh;
      wsm[i] = pc < dv ? w[static_cast<long long>(k) * 3 * dv + (c / kCh) * dv + pc] : __float2bfloat16_rn(0.0f);
    }
  }
  const int lane_ch = ch0 + threadIdx.x;
  float h = (threadIdx.x < kCh && lane_ch < dv && h0) ? h0[b * dv + lane_ch] : 0.0f;
  // Regions (tools/sass_mix.py): `step`, a timestep's code besides the load of x_t (the model
  // charges that load as a copy, `step.load_x.loop`) and the dot products (`dot*.loop`).
  for (int t = 0; t < T; ++t) {  // sass:step {
    const bf16* xt = x + (static_cast<long long>(b) * T + t) * d;
    for (int k = threadIdx.x; k < d; k += kThreads) xs[k] = __bfloat162float(xt[k]);  // sass:step.load_x.loop {}
    __syncthreads();
    if (col < 3 * kCh) {
      float acc = 0.0f;
      if (col_ok) {
        // The d-long dependent FFMA chain the model charges per step (by its SASS: the
        // unrolled loop body, tools/sass_mix.py `.loop` regions).
        if (w_resident)
          for (int k = 0; k < d; ++k) acc = fmaf(xs[k], __bfloat162float(wsm[k * 3 * kCh + col]), acc);  // sass:dot.loop {}
        else
          for (int k = 0; k < d; ++k)  // sass:dot_l2.loop {
            acc = fmaf(xs[k], __bfloat162float(w[static_cast<long long>(k) * 3 * dv + wcol]), acc);
        // } sass:dot_l2.loop
      }
      proj[col] = acc;
    }
    __syncthreads();
    if (threadIdx.x < kCh && lane_ch < dv) {
      const Gate g = gate_of(proj[kCh + threadIdx.x]);
      h = fmaf(g.a, h, g.one_minus_a * proj[threadIdx.x]);
      y[(static_cast<long long>(b) * T + t) * dv + lane_ch] = __float2bfloat16_rn(h * silu(proj[2 * kCh + threadIdx.x]));
    }
  }  // } sass:step
  if (hT && threadIdx.x < kCh && lane_ch < dv) hT[b * dv + lane_ch] = h;
}

}  // namespace overlap::cuda::linrnn_full_fused

namespace overlap::cuda::linrnn_launch {

using linrnn_full_fused::full_fused_kernel;
using linrnn_full_fused::kCh;
using linrnn_full_fused::kThreads;
using linrnn_full_fused::kTiling;
using linrnn_kernel::bf16;

int full_fused(const Problem& p, CUstream_st* stream) {
  const long long w_bytes = static_cast<long long>(p.d) * 3 * kCh * 2;
  const bool resident = w_bytes <= kTiling.w_resident_max_bytes;
  const int smem = p.d * 4 + 3 * kCh * 4 + (resident ? static_cast<int>(w_bytes) : 0);
  if (cudaError_t e = cudaFuncSetAttribute(full_fused_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
      e != cudaSuccess)
    return e;
  const dim3 grid((p.dv + kCh - 1) / kCh, p.B);
  full_fused_kernel<<<grid, kThreads, smem, stream>>>(static_cast<const bf16*>(p.x), static_cast<const bf16*>(p.w),
                                                      p.h0, static_cast<bf16*>(p.y), p.hT, p.T, p.d, p.dv, resident);
  return cudaGetLastError();
}

}  // namespace overlap::cuda::linrnn_launch
