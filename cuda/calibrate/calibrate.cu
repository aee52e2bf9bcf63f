// Microbenchmarks behind `overlap calibrate`. Each measures one ceiling the simulator uses:
//   copy bandwidth  - a 16-byte-per-thread grid-stride copy of 2 x 1 GiB (and cudaMemcpy D2D),
//                     bytes read + written over the median time;
//   tensor rates    - cuBLAS bf16 GEMM 8192^3 (fp32 accumulation) on random data, median; the
//                     same in fp8 e4m3 through cuBLASLt (fp8_gemm_rate.cu, sm_89+); and every SM
//                     streaming wgmma alone, bf16 and fp8 (tensor_stream.cu, sm_90);
//   L2 bandwidth    - every SM reading a 16 MiB L2-resident buffer with L1-bypassing loads;
//   SM port         - one CTA reading an L2-resident buffer, bytes per SM clock (clock64);
//   2-d copies      - cudaMemcpy2DAsync device to device (a copy engine), rate and fixed part;
//   launch overhead - back-to-back empty kernels on one stream, time per launch; and empty
//                     kernels timed as `overlap validate` times a workload (queued behind the
//                     L2 flush, device events): the first and each further kernel;
//   load latency    - one thread chasing a random cyclic permutation of cache lines with
//                     L1-bypassing loads, in a 512 MiB buffer (DRAM) and a 4 MiB one (L2);
//   SM latencies    - dependent chains of FFMA, MUFU.EX2, LDS, SHFL and an mbarrier hand-off
//                     (sm_latency.cu);
//   SM throughputs  - FFMA and MUFU lanes, shared-memory bytes per clock, mma.sync against
//                     wgmma (sm_throughput.cu);
//   TMA streams     - every SM streaming 32 KiB TMA loads through 1-6 stages, from L2 and from
//                     HBM: the delivered bandwidth and one load's latency under load; a GEMM's
//                     operand walk from HBM and L2, alone and beside wgmma (tma_stream.cu);
//   cold start      - a launch's first TMA load beyond the launch, after an L2 flush
//                     (first_load.cu);
//   cold code       - a first pass over 64 KiB of straight-line SASS against a second, after an
//                     L2 flush: instruction-fetch cycles per KiB (icache.cu);
//   fetch rate      - a scheduler's issue rate over straight-line bodies of 4-256 KiB, one warp
//                     and two roles a scheduler (fetch_rate.cu);
//   cluster slots   - resident clusters of 2 and 4 whole-SM CTAs (cluster_slots.cu);
//   output stores   - every SM writing 128 x 128 fp16 tiles as accumulator fragments, as
//                     whole lines and by bulk copy (store_drain.cu).
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "calibrate/calibrate.hpp"
#include "calibrate/cluster_slots.hpp"
#include "calibrate/fp8_gemm_rate.hpp"
#include "calibrate/fetch_rate.hpp"
#include "calibrate/icache.hpp"
#include "calibrate/median_time.hpp"
#include "calibrate/random_fill.cuh"
#include "calibrate/sm_latency.hpp"
#include "calibrate/sm_throughput.hpp"
#include "calibrate/store_drain.hpp"
#include "calibrate/tensor_stream.hpp"
#include "calibrate/first_load.hpp"
#include "calibrate/tma_stream.hpp"
#include "runtime/cublas_check.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device_buffer.hpp"

namespace overlap::gpu {
namespace {

__global__ void copy16(const int4* __restrict__ src, int4* __restrict__ dst, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

__global__ void empty_kernel() {}

// Reads src[0, n) `reps` times per block with L1-bypassing 16-byte loads, four independent
// loads in flight per thread so that latency does not cap one SM's rate. Blocks start at
// different offsets so they do not walk the L2 slices in lockstep. Block 0's thread 0 records
// the clock64 cycles its block took.
__global__ void l2_read(const int4* __restrict__ src, std::size_t n, int reps, int* sink, long long* cycles) {
  const long long t0 = clock64();
  int acc = 0;
  const std::size_t start = (std::size_t(blockIdx.x) * 977 * 4) % n;
  const std::size_t step = std::size_t(blockDim.x) * 4;
  for (int r = 0; r < reps; ++r)
    for (std::size_t base = threadIdx.x; base + 3 * blockDim.x < n; base += step) {
      int4 v[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        std::size_t j = start + base + std::size_t(u) * blockDim.x;
        if (j >= n) j -= n;
        v[u] = __ldcg(&src[j]);
      }
#pragma unroll
      for (int u = 0; u < 4; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
  __syncthreads();
  if (acc == 0x7e57ab1e) *sink = acc;  // keeps the loads; never true for the fill pattern
  if (blockIdx.x == 0 && threadIdx.x == 0) *cycles = clock64() - t0;
}

__global__ void pointer_chase(const unsigned* __restrict__ next, unsigned start, int steps,
                              unsigned* sink, long long* cycles) {
  unsigned p = start;
  // Warm the TLB and caches along the way once, then time a second pass.
  for (int i = 0; i < steps; ++i) p = __ldcg(next + p);
  const long long t0 = clock64();
  for (int i = 0; i < steps; ++i) p = __ldcg(next + p);
  const long long t1 = clock64();
  *sink = p;
  *cycles = t1 - t0;
}

MeasuredField measure_copy_bandwidth(int repeats) {
  constexpr std::size_t bytes = std::size_t(1) << 30;
  DeviceBuffer src(bytes), dst(bytes);
  OVERLAP_CUDA_CHECK(cudaMemset(src.get(), 0x5a, bytes));
  const int sms = overlap::gpu::current_sm_count();
  const std::size_t n = bytes / sizeof(int4);
  const double kernel_us = median_us(
      [&](cudaStream_t s) { copy16<<<sms * 8, 512, 0, s>>>(src.as<int4>(), dst.as<int4>(), n); }, repeats);
  const double memcpy_us = median_us(
      [&](cudaStream_t s) { OVERLAP_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, s)); },
      repeats);
  const double best_us = std::min(kernel_us, memcpy_us);
  return {"hbm_bandwidth_GBps", 2.0 * bytes / (best_us * 1e3),
          fmt::format("measured by overlap calibrate: 1 GiB device-to-device copy, read+write bytes over the "
                      "median of {} runs (16-byte copy kernel {:.1f} us, cudaMemcpy {:.1f} us)",
                      repeats, kernel_us, memcpy_us)};
}

MeasuredField measure_bf16_tensor_rate(int repeats) {
  constexpr int n = 8192;
  const std::size_t elems = std::size_t(n) * n;
  DeviceBuffer a(elems * 2), b(elems * 2), c(elems * 2);
  fill_random<<<1024, 256>>>(a.as<__nv_bfloat16>(), elems, 1);
  fill_random<<<1024, 256>>>(b.as<__nv_bfloat16>(), elems, 2);
  OVERLAP_CUDA_CHECK(cudaGetLastError());
  cublasHandle_t handle;
  OVERLAP_CUBLAS_CHECK(cublasCreate(&handle));
  const float alpha = 1.0f, beta = 0.0f;
  auto gemm = [&](cudaStream_t s) {
    OVERLAP_CUBLAS_CHECK(cublasSetStream(handle, s));
    OVERLAP_CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a.get(), CUDA_R_16BF, n,
                                      b.get(), CUDA_R_16BF, n, &beta, c.get(), CUDA_R_16BF, n,
                                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  };
  const double us = median_us(gemm, repeats);
  cublasDestroy(handle);
  return {"tensor_bf16_TFLOPs", 2.0 * n * n * double(n) / (us * 1e6),
          fmt::format("measured by overlap calibrate: cuBLAS bf16 GEMM {0}x{0}x{0}, fp32 accumulation, random "
                      "data, median of {1} runs ({2:.1f} us)", n, repeats, us)};
}

std::vector<MeasuredField> measure_l2_and_sm_port(int repeats) {
  constexpr std::size_t bytes = std::size_t(16) << 20;  // well inside H100's 50 MB L2
  const std::size_t n = bytes / sizeof(int4);
  DeviceBuffer buf(bytes), sink(sizeof(int)), cycles(sizeof(long long));
  OVERLAP_CUDA_CHECK(cudaMemset(buf.get(), 0x5a, bytes));
  const int sms = overlap::gpu::current_sm_count();
  constexpr int reps = 4;
  const int blocks = 2 * sms;
  // Not flushed between runs: the buffer is meant to stay resident.
  const double all_us = median_us(
      [&](cudaStream_t s) { l2_read<<<blocks, 1024, 0, s>>>(buf.as<int4>(), n, reps, sink.as<int>(), cycles.as<long long>()); },
      repeats, /*flush_l2=*/false);
  OVERLAP_CUDA_CHECK(cudaGetLastError());
  const double l2_GBps = double(bytes) * reps * blocks / (all_us * 1e3);

  // One CTA alone: the L2 -> SM port. A quarter of the buffer, read many times.
  const std::size_t n_one = n / 4;
  constexpr int reps_one = 16;
  l2_read<<<1, 1024>>>(buf.as<int4>(), n_one, reps_one, sink.as<int>(), cycles.as<long long>());
  std::vector<double> per_clk;
  for (int r = 0; r < std::max(3, repeats / 2); ++r) {
    l2_read<<<1, 1024>>>(buf.as<int4>(), n_one, reps_one, sink.as<int>(), cycles.as<long long>());
    OVERLAP_CUDA_CHECK(cudaGetLastError());
    long long c = 0;
    cycles.download(&c, sizeof(c));  // synchronizes
    per_clk.push_back(double(n_one) * sizeof(int4) * reps_one / double(c));
  }
  return {{"l2_bandwidth_GBps", l2_GBps,
           fmt::format("measured by overlap calibrate: {} CTAs x 1024 threads each reading a 16 MiB L2-resident "
                       "buffer {} times with ld.global.cg, median of {} runs ({:.1f} us)",
                       blocks, reps, repeats, all_us)},
          {"sm_port_bytes_per_clk", median(per_clk),
           fmt::format("measured by overlap calibrate: one CTA of 1024 threads reading a 4 MiB L2-resident buffer "
                       "{} times with ld.global.cg (4 loads in flight per thread), bytes per clock64 cycle, "
                       "median of {}", reps_one, per_clk.size())}};
}

MeasuredField measure_launch_overhead() {
  constexpr int launches = 2000;
  empty_kernel<<<1, 32>>>();
  OVERLAP_CUDA_CHECK(cudaDeviceSynchronize());
  cudaEvent_t start, stop;
  OVERLAP_CUDA_CHECK(cudaEventCreate(&start));
  OVERLAP_CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> per_launch;
  for (int rep = 0; rep < 5; ++rep) {
    OVERLAP_CUDA_CHECK(cudaEventRecord(start));
    for (int i = 0; i < launches; ++i) empty_kernel<<<1, 32>>>();
    OVERLAP_CUDA_CHECK(cudaEventRecord(stop));
    OVERLAP_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    OVERLAP_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    per_launch.push_back(1e3 * ms / launches);
  }
  OVERLAP_CUDA_CHECK(cudaGetLastError());
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return {"launch_overhead_us", median(per_launch),
          fmt::format("measured by overlap calibrate: {} back-to-back empty kernel launches on one stream, "
                      "time per launch, median of 5", launches)};
}

// An empty kernel timed the way `overlap validate` times a workload (runtime/timing.hpp: the L2
// flushed on the stream first, so the launches queue behind the flush; device events around
// them): one kernel, and `kernels` back to back. What the harness measures for a kernel that
// does nothing, and for each kernel after the first.
std::vector<MeasuredField> measure_queued_launch(int repeats) {
  constexpr int kernels = 8;
  const int runs = std::max(repeats, 20);
  const double one_us = median_us([](cudaStream_t s) { empty_kernel<<<1, 32, 0, s>>>(); }, runs);
  const double many_us = median_us(
      [](cudaStream_t s) {
        for (int i = 0; i < kernels; ++i) empty_kernel<<<1, 32, 0, s>>>();
      },
      runs);
  OVERLAP_CUDA_CHECK(cudaGetLastError());
  const std::string how = fmt::format(
      "measured by overlap calibrate: empty kernels timed as overlap validate times a workload (L2 flushed on the "
      "stream before each run, device events around the launches), median of {} runs: one kernel {:.2f} us, {} "
      "back to back {:.2f} us",
      runs, one_us, kernels, many_us);
  return {{"queued_launch_us", one_us, how + "; the first kernel's time"},
          {"queued_kernel_gap_us", (many_us - one_us) / (kernels - 1), how + "; each further kernel's"}};
}

// cudaMemcpy2DAsync device to device, as projchain's wide_gemm copies q and v out of its wide
// output (rows of 4096 bytes out of rows 16416 bytes apart), timed as overlap validate times a
// workload: 2048 and 16384 rows. It runs on a copy engine, not as a kernel: the rate is the
// slope (bytes read + written per second), the fixed part what the smaller copy takes beyond it.
std::vector<MeasuredField> measure_memcpy2d(int repeats) {
  constexpr std::size_t row = 4096, pitch = 16416, few = 2048, many = 16384;
  DeviceBuffer src(pitch * many), dst(row * many);
  OVERLAP_CUDA_CHECK(cudaMemset(src.get(), 0x3c, src.bytes()));
  const int runs = std::max(repeats, 20);
  const auto time = [&](std::size_t rows) {
    return median_us(
        [&](cudaStream_t s) {
          OVERLAP_CUDA_CHECK(cudaMemcpy2DAsync(dst.get(), row, src.get(), pitch, row, rows, cudaMemcpyDeviceToDevice, s));
        },
        runs);
  };
  const double few_us = time(few), many_us = time(many);
  const double rate_GBps = 2.0 * row * double(many - few) / ((many_us - few_us) * 1e3);
  const double fixed_us = few_us - 2.0 * row * double(few) / (rate_GBps * 1e3);
  const std::string how = fmt::format(
      "measured by overlap calibrate: cudaMemcpy2DAsync device to device, rows of {} B out of rows {} B apart, timed "
      "as overlap validate times a workload (L2 flushed first, device events), median of {}: {} rows {:.2f} us, {} "
      "rows {:.2f} us",
      row, pitch, runs, few, few_us, many, many_us);
  return {{"memcpy2d_GBps", rate_GBps, how + "; read + written bytes per second of the difference"},
          {"memcpy2d_fixed_us", fixed_us, how + "; the smaller copy's time beyond that rate"}};
}

double chase_cycles_per_load(std::size_t buffer_bytes, int steps) {
  constexpr std::size_t line = 128;  // one load per 128-byte line, so no two share a sector
  const std::size_t lines = buffer_bytes / line;
  const std::size_t stride = line / sizeof(unsigned);
  std::vector<unsigned> order(lines);
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(12345));
  std::vector<unsigned> next(lines * stride, 0u);
  for (std::size_t i = 0; i < lines; ++i)
    next[order[i] * stride] = static_cast<unsigned>(order[(i + 1) % lines] * stride);
  DeviceBuffer d_next(next.size() * sizeof(unsigned)), sink(sizeof(unsigned)), cycles(sizeof(long long));
  d_next.upload(next.data(), next.size() * sizeof(unsigned));
  pointer_chase<<<1, 1>>>(d_next.as<unsigned>(), order[0] * static_cast<unsigned>(stride), steps,
                          sink.as<unsigned>(), cycles.as<long long>());
  OVERLAP_CUDA_CHECK(cudaGetLastError());
  OVERLAP_CUDA_CHECK(cudaDeviceSynchronize());
  long long c = 0;
  cycles.download(&c, sizeof(c));
  return static_cast<double>(c) / steps;
}

}  // namespace

Calibration calibrate_device(const CalibrateOptions& options) {
  OVERLAP_REQUIRE(device_count() > 0, "calibrate needs a CUDA GPU and found none");
  int device = 0;
  OVERLAP_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  OVERLAP_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  Calibration cal;
  cal.gpu_name = prop.name;
  cal.compute_capability = prop.major * 10 + prop.minor;
  auto attr = [&](cudaDeviceAttr a) {
    int v = 0;
    OVERLAP_CUDA_CHECK(cudaDeviceGetAttribute(&v, a, device));
    return static_cast<double>(v);
  };
  const std::string props = "measured by overlap calibrate: cudaDeviceGetAttribute";
  cal.fields.push_back({"sm_count", attr(cudaDevAttrMultiProcessorCount), props});
  cal.fields.push_back({"smem_per_sm_KiB", attr(cudaDevAttrMaxSharedMemoryPerMultiprocessor) / 1024, props});
  cal.fields.push_back({"smem_per_cta_KiB", attr(cudaDevAttrMaxSharedMemoryPerBlockOptin) / 1024, props});
  cal.fields.push_back({"regs_per_sm", attr(cudaDevAttrMaxRegistersPerMultiprocessor), props});
  cal.fields.push_back({"max_threads_per_sm", attr(cudaDevAttrMaxThreadsPerMultiProcessor), props});
  cal.fields.push_back({"l2_size_MiB", attr(cudaDevAttrL2CacheSize) / (1024.0 * 1024.0), props});
  cal.fields.push_back({"hbm_capacity_GB", static_cast<double>(prop.totalGlobalMem) / 1e9, "measured by overlap calibrate: cudaGetDeviceProperties totalGlobalMem"});
  cal.fields.push_back(measure_copy_bandwidth(options.repeats));
  cal.fields.push_back(measure_bf16_tensor_rate(options.repeats));
  for (auto& f : measure_fp8_tensor_rate(options.repeats, cal.compute_capability)) cal.fields.push_back(std::move(f));
  for (auto& f : measure_tensor_stream(options.repeats, cal.compute_capability)) cal.fields.push_back(std::move(f));
  for (auto& f : measure_l2_and_sm_port(options.repeats)) cal.fields.push_back(std::move(f));
  cal.fields.push_back(measure_launch_overhead());
  for (auto& f : measure_queued_launch(options.repeats)) cal.fields.push_back(std::move(f));
  for (auto& f : measure_memcpy2d(options.repeats)) cal.fields.push_back(std::move(f));
  cal.fields.push_back({"dram_latency_cycles", chase_cycles_per_load(std::size_t(512) << 20, 20000),
                        "measured by overlap calibrate: dependent __ldcg pointer chase over 512 MiB of random "
                        "128-byte lines, one thread, clock64 cycles per load (TLB misses included)"});
  cal.fields.push_back({"l2_latency_cycles", chase_cycles_per_load(std::size_t(4) << 20, 32768),
                        "measured by overlap calibrate: dependent __ldcg pointer chase over 4 MiB (L2-resident after a warm pass over every line) of "
                        "random 128-byte lines, one thread, clock64 cycles per load"});
  for (auto& f : measure_sm_latencies()) cal.fields.push_back(std::move(f));
  for (auto& f : measure_sm_throughput(options.repeats, cal.compute_capability)) cal.fields.push_back(std::move(f));
  for (auto& f : measure_tma_stream(options.repeats, cal.compute_capability)) cal.fields.push_back(std::move(f));
  for (auto& f : measure_first_load(options.repeats, cal.compute_capability)) cal.fields.push_back(std::move(f));
  for (auto& f : measure_cold_code()) cal.fields.push_back(std::move(f));
  for (auto& f : measure_fetch_rate()) cal.fields.push_back(std::move(f));
  for (auto& f : measure_cluster_slots(cal.compute_capability)) cal.fields.push_back(std::move(f));
  for (auto& f : measure_store_drain(options.repeats, cal.compute_capability)) cal.fields.push_back(std::move(f));
  return cal;
}

}  // namespace overlap::gpu
