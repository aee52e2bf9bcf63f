// Microbenchmarks behind the "measured" fields of a hardware profile: HBM copy bandwidth,
// aggregate L2 read bandwidth, one SM's L2 read bandwidth, DRAM and L2 load latency (pointer
// chase), and the back-to-back kernel launch time. Build and run on the GPU:
//   nvcc -O3 -arch=native tools/calibrate/microbench.cu -o microbench && ./microbench
// Prints "field value" lines in the profile's units.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                  \
  do {                                                                            \
    cudaError_t e = (x);                                                          \
    if (e != cudaSuccess) {                                                       \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); \
      std::exit(1);                                                               \
    }                                                                             \
  } while (0)

__global__ void copy_kernel(const float4* __restrict__ in, float4* __restrict__ out, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) out[i] = in[i];
}

// Every block reads the whole (L2-resident) buffer `reps` times.
__global__ void read_kernel(const float4* __restrict__ in, size_t n, int reps, float* sink) {
  float acc = 0;
  const size_t start = (size_t(blockIdx.x) * 977) % n;  // spread blocks over the buffer
  for (int r = 0; r < reps; ++r)
    for (size_t i = threadIdx.x; i < n; i += blockDim.x) {
      const float4 v = __ldcg(&in[(start + i) % n]);
      acc += v.x + v.y + v.z + v.w;
    }
  if (acc == 12345.f) *sink = acc;
}

__global__ void chase_kernel(const unsigned* __restrict__ next, int steps, unsigned* out, long long* cycles) {
  unsigned p = 0;
  for (int i = 0; i < 64; ++i) p = next[p];  // warm the TLB / first touch
  const long long t0 = clock64();
  for (int i = 0; i < steps; ++i) p = __ldcg(&next[p]);
  const long long t1 = clock64();
  *out = p;
  *cycles = t1 - t0;
}

__global__ void empty_kernel() {}

float time_ms(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, a, b));
  return ms;
}

// Cycles per dependent load. `warm`: a first pass leaves the touched lines in L2 (L2 latency);
// otherwise every step touches a line no one has read (DRAM latency).
double chase_cycles(size_t bytes, int steps, bool warm) {
  const size_t n = bytes / sizeof(unsigned);
  const size_t stride = 4096 / sizeof(unsigned) + 32;  // new line and new page every step
  std::vector<unsigned> h(n);
  for (size_t i = 0; i < n; ++i) h[i] = unsigned((i + stride) % n);
  unsigned *d, *out;
  long long* cyc;
  CHECK(cudaMalloc(&d, bytes));
  CHECK(cudaMalloc(&out, 4));
  CHECK(cudaMalloc(&cyc, 8));
  CHECK(cudaMemcpy(d, h.data(), bytes, cudaMemcpyHostToDevice));
  if (warm) chase_kernel<<<1, 1>>>(d, steps, out, cyc);
  chase_kernel<<<1, 1>>>(d, steps, out, cyc);
  long long c = 0;
  CHECK(cudaMemcpy(&c, cyc, 8, cudaMemcpyDeviceToHost));
  CHECK(cudaFree(d));
  CHECK(cudaFree(out));
  CHECK(cudaFree(cyc));
  return double(c) / steps;
}

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  int clock_kHz = 0;  // cudaDeviceProp::clockRate is gone in CUDA 13
  CHECK(cudaDeviceGetAttribute(&clock_kHz, cudaDevAttrClockRate, 0));
  std::printf("device %s\nsm_count %d\nl2_size_MiB %.1f\n", prop.name, prop.multiProcessorCount,
              prop.l2CacheSize / 1048576.0);
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  float* sink;
  CHECK(cudaMalloc(&sink, 4));

  {  // HBM: copy 1 GiB, count read + write
    const size_t bytes = size_t(1) << 30, n = bytes / 16;
    float4 *x, *y;
    CHECK(cudaMalloc(&x, bytes));
    CHECK(cudaMalloc(&y, bytes));
    CHECK(cudaMemset(x, 0, bytes));
    copy_kernel<<<prop.multiProcessorCount * 8, 512>>>(x, y, n);
    CHECK(cudaEventRecord(a));
    for (int i = 0; i < 10; ++i) copy_kernel<<<prop.multiProcessorCount * 8, 512>>>(x, y, n);
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    std::printf("hbm_bandwidth_GBps %.0f\n", 2.0 * bytes * 10 / (time_ms(a, b) * 1e-3) / 1e9);
    CHECK(cudaFree(x));
    CHECK(cudaFree(y));
  }
  {  // L2: a 16 MiB buffer read by every SM (aggregate) and by one SM alone
    const size_t bytes = size_t(16) << 20, n = bytes / 16;
    float4* x;
    CHECK(cudaMalloc(&x, bytes));
    CHECK(cudaMemset(x, 0, bytes));
    const int blocks = prop.multiProcessorCount * 2, reps = 4;
    read_kernel<<<blocks, 1024>>>(x, n, 1, sink);
    CHECK(cudaEventRecord(a));
    read_kernel<<<blocks, 1024>>>(x, n, reps, sink);
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    std::printf("l2_bandwidth_GBps %.0f\n", double(bytes) * reps * blocks / (time_ms(a, b) * 1e-3) / 1e9);
    CHECK(cudaEventRecord(a));
    read_kernel<<<1, 1024>>>(x, n / 4, reps, sink);
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    const double one_sm = double(bytes / 4) * reps / (time_ms(a, b) * 1e-3) / 1e9;
    std::printf("one_sm_l2_read_GBps %.1f\nsm_port_bytes_per_clk %.1f\n", one_sm, one_sm * 1e9 / (clock_kHz * 1e3));
    CHECK(cudaFree(x));
  }
  std::printf("dram_latency_cycles %.0f\n", chase_cycles(size_t(1) << 30, 2000, false));
  std::printf("l2_latency_cycles %.0f\n", chase_cycles(size_t(4) << 20, 2000, true));
  {  // launches: back-to-back empty kernels on one stream
    for (int i = 0; i < 100; ++i) empty_kernel<<<1, 32>>>();
    const int launches = 10000;
    CHECK(cudaEventRecord(a));
    for (int i = 0; i < launches; ++i) empty_kernel<<<prop.multiProcessorCount, 128>>>();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    std::printf("launch_overhead_us %.2f\n", time_ms(a, b) * 1e3 / launches);
  }
  std::printf("clock_MHz_reported %.0f\n", clock_kHz / 1e3);
  return 0;
}
