// An experiment, not a calibration: what a kernel costs before and after its work when it asks
// for most of an SM's shared memory, timed as `overlap validate` times a workload (L2 flushed on
// the stream first, device events around the launch). calibrate's `queued_launch_us` times an
// empty kernel of one 32-thread CTA and no shared memory (3.06 us on the H100); the dualgemm
// kernels launch 96-132 CTAs of 384 threads with 190-226 KiB of dynamic shared memory, and
// their time against K runs through 7.7-8.8 us at K = 0 (docs/results/dualgemm_h100.md).
//
//   tma_launch_smem [repeats]
//
// Prints one CSV row per launch: CTAs, threads, dynamic shared memory (KiB), what the kernel does
// (nothing; one TMA load of a 16 KiB box from a tensor L2 does not hold, waited for), microseconds.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "calibrate/median_time.hpp"
#include "common/sm90_ptx.cuh"
#include "common/tensor_map.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device_buffer.hpp"

namespace {

using namespace overlap::cuda::sm90;

__global__ void empty_kernel() {}

// Thread 0 loads one 128 x 128-byte box (this CTA's row block) and waits for it.
__global__ void __launch_bounds__(384, 1) one_load(const __grid_constant__ CUtensorMap map) {
  extern __shared__ unsigned char smem_raw[];
  unsigned char* box = aligned_smem(smem_raw);
  auto* bar = reinterpret_cast<std::uint64_t*>(box + 16384);
  if (threadIdx.x == 0) {
    mbar_init(bar, 1);
    mbar_init_fence();
    mbar_arrive_expect_tx(bar, 16384);
    tma_load_4d(box, &map, bar, 0, int(blockIdx.x) * 128, 0, 0);
    mbar_wait(bar, 0);
  }
  __syncthreads();
}

void row(int ctas, int threads, int smem_kib, const char* what, double us) {
  std::printf("%d,%d,%d,%s,%.2f\n", ctas, threads, smem_kib, what, us);
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 50;
  int sms = 0;
  OVERLAP_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  OVERLAP_CUDA_CHECK(cudaFuncSetAttribute(empty_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024));
  OVERLAP_CUDA_CHECK(cudaFuncSetAttribute(one_load, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024));
  // A tensor of sms row blocks of 128 rows x 7168 bytes (121 MB for 132 SMs), as a GEMM operand.
  const std::size_t rows = std::size_t(sms) * 128, row_bytes = 7168;
  overlap::gpu::DeviceBuffer tensor(rows * row_bytes);
  OVERLAP_CUDA_CHECK(cudaMemset(tensor.get(), 0x3c, rows * row_bytes));
  CUtensorMap map{};
  const cuuint64_t dims[4] = {row_bytes, rows, 1, 1};
  const cuuint64_t strides[3] = {row_bytes, rows * row_bytes, rows * row_bytes};
  const cuuint32_t box[4] = {128, 128, 1, 1};
  OVERLAP_CUDA_CHECK(overlap::cuda::make_tensor_map_4d(&map, CU_TENSOR_MAP_DATA_TYPE_UINT8, tensor.get(), dims, strides,
                                                       box));
  std::printf("# tma_launch_smem: timed as overlap validate times a workload, median of %d\n", repeats);
  std::printf("ctas,threads,smem_kib,kernel,us\n");
  for (const int smem_kib : {0, 64, 128, 200, 227}) {
    for (const int ctas : {1, sms}) {
      const int threads = ctas == 1 ? 32 : 384;
      const double us = overlap::gpu::median_us(
          [&](cudaStream_t s) { empty_kernel<<<ctas, threads, std::size_t(smem_kib) * 1024, s>>>(); }, repeats);
      OVERLAP_CUDA_CHECK(cudaGetLastError());
      row(ctas, threads, smem_kib, "empty", us);
    }
    const int load_smem = smem_kib * 1024 < 16384 + 1024 + 64 ? 16384 + 1024 + 64 : smem_kib * 1024;
    const double us = overlap::gpu::median_us(
        [&](cudaStream_t s) { one_load<<<sms, 384, std::size_t(load_smem), s>>>(map); }, repeats);
    OVERLAP_CUDA_CHECK(cudaGetLastError());
    row(sms, 384, load_smem / 1024, "one_tma_load", us);
  }
  OVERLAP_CUDA_CHECK(cudaDeviceSynchronize());
  return 0;
}
