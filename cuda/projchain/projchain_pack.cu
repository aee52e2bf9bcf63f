// Packing the five weights for epilogue_fused: transposed into [ldw, d], so the GEMM reads its
// B operand K-major (the layout wgmma and TMA are fastest with), with the q|k|v|g columns in the
// epilogue's order (projchain_fused_columns.hpp). A model does this once at load time; a 32x32
// tile transpose through shared memory keeps both the reads and the writes coalesced (the
// column order only permutes inside 32-byte sectors).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "projchain/projchain_fused_columns.hpp"
#include "projchain/projchain_launch.hpp"

namespace overlap::cuda::projchain_launch {
namespace {

constexpr int kTile = 32;

__global__ void __launch_bounds__(kTile * 8) pack_transposed_kernel(PackSources s, __nv_bfloat16* out) {
  __shared__ __nv_bfloat16 tile[kTile][kTile + 1];  // +1: no bank conflicts on the transposed read
  const std::int64_t HD = s.H * s.dk, wide = 4 * HD + s.H;
  const std::int64_t k0 = std::int64_t(blockIdx.x) * kTile, n0 = std::int64_t(blockIdx.y) * kTile;
  // Read rows k of the weights (columns n contiguous, permuted inside 16-column blocks).
  for (int i = threadIdx.y; i < kTile; i += 8) {
    const std::int64_t k = k0 + i, n = projchain::fused_source_column(n0 + threadIdx.x, 4 * HD);
    __nv_bfloat16 v = __float2bfloat16(0.0f);
    if (k < s.d && n < wide) {
      const int seg = n < 4 * HD ? static_cast<int>(n / HD) : 4;
      const std::int64_t width = seg < 4 ? HD : s.H;
      v = static_cast<const __nv_bfloat16*>(s.w[seg])[k * width + (n - seg * HD)];
    }
    tile[i][threadIdx.x] = v;
  }
  __syncthreads();
  // Write rows n of the packed weight (columns k contiguous); rows past `wide` get the zeros.
  for (int i = threadIdx.y; i < kTile; i += 8) {
    const std::int64_t n = n0 + i, k = k0 + threadIdx.x;
    if (n < s.ldw && k < s.d) out[n * s.d + k] = tile[threadIdx.x][i];
  }
}

}  // namespace

const char* pack_weights_k_major(const PackSources& s, void* w_packed, CUstream_st* stream) {
  const dim3 grid(static_cast<unsigned>((s.d + kTile - 1) / kTile), static_cast<unsigned>((s.ldw + kTile - 1) / kTile));
  pack_transposed_kernel<<<grid, dim3(kTile, 8), 0, stream>>>(s, static_cast<__nv_bfloat16*>(w_packed));
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

}  // namespace overlap::cuda::projchain_launch
