// The weight re-layout for chunk_fused, done once per weight (a model does it at
// load time; the validation variant in its untimed `prepare`): W [d, 3 dv] row-major becomes
// [channel blocks * 192, d] K-major, row blk*192 + part*64 + c = column part*dv + blk*64 + c of
// W (part 0: u, 1: a, 2: z), zeros for channels past dv. Each 192-row block then holds u, a and
// z of the same 64 channels, so one GEMM tile of N = 192 gives each thread u, a_pre and z of the
// same (timestep, channel). A 32 x 32 transpose through shared memory keeps both sides coalesced.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "linrnn/linrnn_launch.hpp"
#include "linrnn/linrnn_tiling.hpp"

namespace overlap::cuda::linrnn_launch {
namespace {

constexpr int kTile = 32;
constexpr int kBlock = linrnn::chunk_fused_tiling().block_dv;

__global__ void __launch_bounds__(kTile * 8)
    pack_weight_kernel(const __nv_bfloat16* w, __nv_bfloat16* out, int d, int dv, int rows) {
  __shared__ __nv_bfloat16 tile[kTile][kTile + 1];  // +1: no bank conflicts on the transposed read
  const int k0 = blockIdx.x * kTile, n0 = blockIdx.y * kTile;
  // Read rows k of W (packed row n's source column contiguous along n within a part).
  for (int i = threadIdx.y; i < kTile; i += 8) {
    const int k = k0 + i, n = n0 + threadIdx.x;
    __nv_bfloat16 v = __float2bfloat16(0.0f);
    const int blk = n / (3 * kBlock), part = (n / kBlock) % 3, ch = blk * kBlock + n % kBlock;
    if (k < d && n < rows && ch < dv) v = w[static_cast<std::int64_t>(k) * 3 * dv + part * dv + ch];
    tile[i][threadIdx.x] = v;
  }
  __syncthreads();
  for (int i = threadIdx.y; i < kTile; i += 8) {
    const int n = n0 + i, k = k0 + threadIdx.x;
    if (n < rows && k < d) out[static_cast<std::int64_t>(n) * d + k] = tile[threadIdx.x][i];
  }
}

}  // namespace

int pack_weight(const Problem& p, void* w_packed, CUstream_st* stream) {
  const int rows = static_cast<int>(packed_weight_bytes(p) / (2 * static_cast<std::size_t>(p.d)));
  const dim3 grid(static_cast<unsigned>((p.d + kTile - 1) / kTile), static_cast<unsigned>((rows + kTile - 1) / kTile));
  pack_weight_kernel<<<grid, dim3(kTile, 8), 0, stream>>>(static_cast<const __nv_bfloat16*>(p.w),
                                                          static_cast<__nv_bfloat16*>(w_packed), p.d, p.dv, rows);
  return cudaGetLastError();
}

}  // namespace overlap::cuda::linrnn_launch
