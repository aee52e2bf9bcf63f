// A kernel's cold start, timed as `overlap validate` times a workload (L2 flushed on the stream
// first, device events around the launch): one CTA of 384 threads an SM, 200 KiB of dynamic
// shared memory (a warp-specialized GEMM's launch), doing nothing, then waiting for one TMA
// load of a 16 KiB box of a tensor L2 does not hold. The difference is what a workload's first
// loads wait beyond its launch: tensor descriptors, address translation and DRAM all cold.
#include "calibrate/first_load.hpp"

#include <cuda.h>
#include <cuda_runtime.h>

#include <fmt/format.h>

#include "calibrate/median_time.hpp"
#include "common/sm90_ptx.cuh"
#include "common/tensor_map.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device_buffer.hpp"

namespace overlap::gpu {
namespace {

using namespace overlap::cuda::sm90;

constexpr int kThreads = 384, kSmemBytes = 200 * 1024, kBoxBytes = 128 * 128;
static_assert(1024 + kBoxBytes + 8 <= kSmemBytes, "the box and its barrier fit the launch's shared memory");

__global__ void __launch_bounds__(kThreads, 1) idle_cta() {}

// Thread 0 loads this CTA's 128 x 128-byte box and waits for it.
__global__ void __launch_bounds__(kThreads, 1) one_load(const __grid_constant__ CUtensorMap map) {
  extern __shared__ unsigned char smem_raw[];
  unsigned char* box = aligned_smem(smem_raw);
  auto* bar = reinterpret_cast<std::uint64_t*>(box + kBoxBytes);
  if (threadIdx.x == 0) {
    mbar_init(bar, 1);
    mbar_init_fence();
    mbar_arrive_expect_tx(bar, kBoxBytes);
    tma_load_4d(box, &map, bar, 0, int(blockIdx.x) * 128, 0, 0);
    mbar_wait(bar, 0);
  }
  __syncthreads();
}

}  // namespace

std::vector<MeasuredField> measure_first_load(int repeats, int compute_capability) {
  if (compute_capability < 90) return {};
  const int sms = overlap::gpu::current_sm_count();
  OVERLAP_CUDA_CHECK(cudaFuncSetAttribute(idle_cta, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  OVERLAP_CUDA_CHECK(cudaFuncSetAttribute(one_load, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  // One 128-row block of 7168-byte rows per SM (121 MB on 132 SMs), as a GEMM operand.
  const std::size_t rows = std::size_t(sms) * 128, row_bytes = 7168;
  DeviceBuffer tensor(rows * row_bytes);
  OVERLAP_CUDA_CHECK(cudaMemset(tensor.get(), 0x3c, rows * row_bytes));
  CUtensorMap map{};
  const cuuint64_t dims[4] = {row_bytes, rows, 1, 1};
  const cuuint64_t strides[3] = {row_bytes, rows * row_bytes, rows * row_bytes};
  const cuuint32_t box[4] = {128, 128, 1, 1};
  OVERLAP_CUDA_CHECK(overlap::cuda::make_tensor_map_4d(&map, CU_TENSOR_MAP_DATA_TYPE_UINT8, tensor.get(), dims,
                                                       strides, box));
  const int runs = std::max(repeats, 50);
  const double idle_us =
      median_us([&](cudaStream_t s) { idle_cta<<<sms, kThreads, kSmemBytes, s>>>(); }, runs);
  const double load_us =
      median_us([&](cudaStream_t s) { one_load<<<sms, kThreads, kSmemBytes, s>>>(map); }, runs);
  OVERLAP_CUDA_CHECK(cudaGetLastError());
  OVERLAP_CUDA_CHECK(cudaDeviceSynchronize());
  return {{"tma_first_load_ns", (load_us - idle_us) * 1e3,
           fmt::format("measured by overlap calibrate (cuda/calibrate/first_load.cu): timed as overlap validate times "
                       "a workload (L2 flushed first, device events), median of {}: {} CTAs of {} threads with {} KiB "
                       "of shared memory, idle {:.2f} us; each waiting for one 16 KiB TMA box of a {:.0f} MB tensor "
                       "{:.2f} us; the difference",
                       runs, sms, kThreads, kSmemBytes / 1024, idle_us, rows * row_bytes / 1e6, load_us)}};
}

}  // namespace overlap::gpu
