// The standalone activation kernels of unfused and wide_gemm: each reads a bf16 slice the GEMM
// stored and writes the activated bf16 slice, one CTA per block of rows (activation_tiling()
// in projchain_tiling.hpp, the same numbers the simulator's activation model uses).
// Source and destination may be the same memory (unfused works in place), hence no __restrict__.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "projchain/projchain_launch.hpp"
#include "projchain/projchain_tiling.hpp"

namespace overlap::cuda::projchain_launch {
namespace {

constexpr projchain::ActivationTiling kTiling = projchain::activation_tiling();
constexpr float kNormEps = 1e-12f;  // torch.nn.functional.normalize's default

struct Silu {
  __device__ float operator()(float v) const { return v / (1.0f + __expf(-v)); }
};
struct Sigmoid {
  __device__ float operator()(float v) const { return 1.0f / (1.0f + __expf(-v)); }
};

// One warp per (row, head): the sum of squares is a warp reduction, then the same warp scales.
// kPairs: dk and both row strides even, so each lane moves bf16x2 (half the instructions).
// One item a pass of each kernel's loop (unroll 1): a pass's stores may alias the next item's
// loads (in place), so unrolled passes serialize anyway, and the model charges the loop body
// per item (sim/models/projchain_model.cpp).
template <bool kPairs>
__global__ void __launch_bounds__(kTiling.threads) l2norm_heads_kernel(Slice s, int dk) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::int64_t row0 = std::int64_t(blockIdx.x) * kTiling.rows_per_cta;
  const int rows = static_cast<int>(std::min<std::int64_t>(kTiling.rows_per_cta, s.rows - row0));
  const int heads = static_cast<int>(s.cols / dk);
#pragma unroll 1
  for (int item = warp; item < rows * heads; item += kTiling.threads / 32) {  // sass:act.l2norm.loop {
    const std::int64_t r = row0 + item / heads;
    const int h = item % heads;
    const auto* src = static_cast<const __nv_bfloat16*>(s.src) + r * s.ld_src + std::int64_t(h) * dk;
    auto* dst = static_cast<__nv_bfloat16*>(s.dst) + r * s.ld_dst + std::int64_t(h) * dk;
    // dk <= 256 (checked on the host): at most 4 pairs (8 values) per lane stay in registers.
    float vals[8];
    float sum = 0.0f;
    if constexpr (kPairs) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int c = 2 * (lane + 32 * i);
        float2 f = make_float2(0.0f, 0.0f);
        if (c < dk) f = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(src + c));
        vals[2 * i] = f.x;
        vals[2 * i + 1] = f.y;
        sum += f.x * f.x + f.y * f.y;
      }
    } else {
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const int c = lane + 32 * i;
        vals[i] = c < dk ? __bfloat162float(src[c]) : 0.0f;
        sum += vals[i] * vals[i];
      }
    }
#pragma unroll
    for (int off = 16; off > 0; off /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, off);
    const float inv = 1.0f / fmaxf(sqrtf(sum), kNormEps);
    if constexpr (kPairs) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int c = 2 * (lane + 32 * i);
        if (c < dk)
          *reinterpret_cast<__nv_bfloat162*>(dst + c) =
              __floats2bfloat162_rn(vals[2 * i] * inv, vals[2 * i + 1] * inv);
      }
    } else {
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const int c = lane + 32 * i;
        if (c < dk) dst[c] = __float2bfloat16(vals[i] * inv);
      }
    }
  }  // } sass:act.l2norm.loop
}

// Elementwise over a block of rows; kPairs as above (cols and strides even).
template <class Op, bool kPairs>
__global__ void __launch_bounds__(kTiling.threads) elementwise_kernel(Slice s, Op op) {
  const std::int64_t row0 = std::int64_t(blockIdx.x) * kTiling.rows_per_cta;
  const std::int64_t rows = std::min<std::int64_t>(kTiling.rows_per_cta, s.rows - row0);
  const std::int64_t width = kPairs ? s.cols / 2 : s.cols;
#pragma unroll 1
  for (std::int64_t i = threadIdx.x; i < rows * width; i += kTiling.threads) {  // sass:act.elementwise.loop {
    const std::int64_t r = row0 + i / width, c = (i % width) * (kPairs ? 2 : 1);
    const auto* src = static_cast<const __nv_bfloat16*>(s.src) + r * s.ld_src + c;
    auto* dst = static_cast<__nv_bfloat16*>(s.dst) + r * s.ld_dst + c;
    if constexpr (kPairs) {
      const float2 f = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(src));
      *reinterpret_cast<__nv_bfloat162*>(dst) = __floats2bfloat162_rn(op(f.x), op(f.y));
    } else {
      *dst = __float2bfloat16(op(__bfloat162float(*src)));
    }
  }  // } sass:act.elementwise.loop
}

bool pairs_ok(const Slice& s, std::int64_t width) {
  const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 4 == 0; };
  return width % 2 == 0 && s.ld_src % 2 == 0 && s.ld_dst % 2 == 0 && aligned(s.src) && aligned(s.dst);
}

unsigned blocks(const Slice& s) {
  return static_cast<unsigned>((s.rows + kTiling.rows_per_cta - 1) / kTiling.rows_per_cta);
}

const char* launched() {
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

template <class Op>
const char* elementwise(const Slice& s, Op op, CUstream_st* stream) {
  if (s.rows == 0 || s.cols == 0) return nullptr;
  if (pairs_ok(s, s.cols)) elementwise_kernel<Op, true><<<blocks(s), kTiling.threads, 0, stream>>>(s, op);
  else elementwise_kernel<Op, false><<<blocks(s), kTiling.threads, 0, stream>>>(s, op);
  return launched();
}

}  // namespace

const char* l2norm_heads(const Slice& s, int dk, CUstream_st* stream) {
  if (dk < 1 || dk > 256 || s.cols % dk != 0) return "l2norm_heads: dk must be in 1..256 and divide the slice";
  if (s.rows == 0) return nullptr;
  if (pairs_ok(s, dk)) l2norm_heads_kernel<true><<<blocks(s), kTiling.threads, 0, stream>>>(s, dk);
  else l2norm_heads_kernel<false><<<blocks(s), kTiling.threads, 0, stream>>>(s, dk);
  return launched();
}

const char* silu(const Slice& s, CUstream_st* stream) { return elementwise(s, Silu{}, stream); }
const char* sigmoid(const Slice& s, CUstream_st* stream) { return elementwise(s, Sigmoid{}, stream); }

}  // namespace overlap::cuda::projchain_launch
