#include "calibrate/tma_stream.hpp"

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "calibrate/clock_runs.hpp"
#include "calibrate/median_time.hpp"
#include "calibrate/tma_ring.cuh"
#include "calibrate/wgmma_stream.cuh"
#include "common/sm90_ptx.cuh"
#include "common/tensor_map.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device_buffer.hpp"

namespace overlap::gpu {
namespace {

using namespace overlap::cuda::sm90;

constexpr int kRowBytes = 128;                      // one 128-byte swizzle atom wide
constexpr int kBoxRows = 256;                       // the largest TMA box: 32 KiB a load
constexpr int kBoxBytes = kRowBytes * kBoxRows;
constexpr int kMaxStages = 6;

static_assert(2 * kMaxStages <= kMaxRingStages, "the ring holds its smallest (16 KiB) loads' stages");

constexpr int kRingSmemBytes = ring_smem_bytes(kMaxStages * kBoxBytes);

// Contiguous 32 KiB boxes: CTA b reads boxes b * boxes, +1, ... (mod the tensor): disjoint ranges
// when the tensor holds them all, so from HBM nothing is read twice.
__global__ void __launch_bounds__(64, 1) tma_stream(const __grid_constant__ CUtensorMap map, int rows, int boxes,
                                                    int stages) {
  WrapCounter box(static_cast<long long>(blockIdx.x) * boxes, 1, rows / kBoxRows);
  stream_ring(boxes, stages, kBoxBytes, [&](int, unsigned char* dst, std::uint64_t* bar) {
    if (dst != nullptr) tma_load_4d(dst, &map, bar, 0, box.value * kBoxRows, 0, 0);
    box.advance();
  });
}

// A GEMM's k-loop reads each operand tile along K: 128 rows of a [rows, row bytes] tensor, 128
// bytes of each row a box, every row's piece a row apart in memory (unlike tma_stream's
// contiguous boxes). A stage holds one such box of each of `maps` tensors (a dual GEMM's A, B1
// and B2: three), all landing on the stage's barrier.
constexpr int kWalkRowBytes = 7168;  // K = 7168 in fp8, the dualgemm benchmark's
constexpr int kWalkBoxRows = 128;
constexpr int kWalkBoxBytes = kRowBytes * kWalkBoxRows;
constexpr int kWalkBoxesPerRow = kWalkRowBytes / kRowBytes;
constexpr int kWalkMaxMaps = 3;
constexpr int kWalkMaxStages = kMaxStages * kBoxBytes / (kWalkMaxMaps * kWalkBoxBytes);  // 4 stages of 3 boxes

struct WalkMaps {
  CUtensorMap map[kWalkMaxMaps];
};

// The loads of a walk in which CTA b walks `loads / kWalkBoxesPerRow` row blocks (b, b + grid,
// b + 2 grid, ... modulo `total_blocks`) of every tensor, one box of each of `nmaps` tensors a
// stage; with `prefetch` > 0 each stage also prefetches into L2 the boxes of tensors
// 1 .. prefetch eight loads ahead (as a GEMM's producer prefetching B does). Called for loads
// 0, 1, 2, ... in turn (stream_ring's order).
struct WalkIssuer {
  const WalkMaps& maps;
  int nmaps, loads, prefetch, next = 0;
  WalkCursor at, ahead;
  __device__ WalkIssuer(const WalkMaps& m, int n, int loads_per_cta, int total_blocks, int prefetch_tensors)
      : maps(m),
        nmaps(n),
        loads(loads_per_cta),
        prefetch(prefetch_tensors),
        at(0, kWalkBoxesPerRow, int(blockIdx.x), int(gridDim.x), total_blocks),
        ahead(8, kWalkBoxesPerRow, int(blockIdx.x), int(gridDim.x), total_blocks) {}
  __device__ void operator()(int, unsigned char* dst, std::uint64_t* bar) {
    for (int j = 0; j < nmaps && dst != nullptr; ++j)
      tma_load_4d(dst + j * kWalkBoxBytes, &maps.map[j], bar, at.box.value * kRowBytes, at.block.value * kWalkBoxRows,
                  0, 0);
    if (next + 8 < loads && dst != nullptr)
      for (int j = 1; j <= prefetch; ++j)
        tma_prefetch_l2_4d(&maps.map[j], ahead.box.value * kRowBytes, ahead.block.value * kWalkBoxRows, 0, 0);
    at.advance();
    ahead.advance();
    ++next;
  }
};

// The walk's producer warps: one a stage in flight, up to four. One producer thread's issue loop
// paces a walk (about 550 SM clocks a stage on the H100, walk_geometry.cu's trace set); with a
// warp for each stage in flight the loads are what the walk waits on.
constexpr int kWalkMaxProducers = 4;
__host__ __device__ constexpr int walk_producers(int stages) { return stages < kWalkMaxProducers ? stages : kWalkMaxProducers; }
constexpr int walk_threads(int stages) { return 32 * (walk_producers(stages) + 1); }

// The walk of `blocks` row blocks per CTA, one ring across them.
__global__ void __launch_bounds__(32 * (kWalkMaxProducers + 1), 1)
    tma_walk(const __grid_constant__ WalkMaps maps, int nmaps, int stages, int blocks, int total_blocks,
             int prefetch = 0) {
  const int loads = blocks * kWalkBoxesPerRow;
  WalkIssuer issue(maps, nmaps, loads, total_blocks, prefetch);
  RingOptions o;
  o.producers = walk_producers(stages);
  stream_ring(loads, stages, nmaps * kWalkBoxBytes, issue, o);
}

// The same walk while two warpgroups (warps 0-7) of the CTA stream wgmma m64nNk16 (bf16) with
// both operands in shared memory, as a GEMM tile's consumers do: at the full tensor rate they
// read (64 + N) x 32 bytes of operands per 64 x N x 32 FLOPs from shared memory beside the TMA's
// writes (N = 64: 128 bytes a clock). Warps 8 and up run the ring (a producer warp a stage);
// its consumer times the walk (clock64) into cycles[blockIdx.x].
constexpr int kBesideStages = 3;  // three stages of three tensors: the ring and an N = 256 tile fit
constexpr int kTensorBoundHold = 1024;  // SM clocks of a 128x128 dual-GEMM k-block's wgmma (either format)
constexpr int kBesideThreads = 256 + walk_threads(kBesideStages);
constexpr int kBesideConsumer = 256 + 32 * walk_producers(kBesideStages);
constexpr int kBesideSmemBytes = ring_smem_bytes(kBesideStages * kWalkMaxMaps * kWalkBoxBytes);

// wgmma m64nNk16 in bf16 or m64nNk32 in e4m3 (wgmma_stream.cuh's atoms): 32 bytes of each
// K-major row either way.
template <int N, bool Fp8 = false>
__device__ __forceinline__ void wgmma_ss(float (&d)[N / 2], std::uint64_t a, std::uint64_t b) {
  wgmma_stream_detail::mma<Fp8, N>(a, b, d, std::make_index_sequence<N / 2>{});
}

// The accumulators' sum to `out`, so that the wgmmas are not dead code.
template <int R>
__device__ __forceinline__ void sum_to(const float (&d)[R], float* out) {
  float acc = 0.f;
#pragma unroll
  for (int j = 0; j < R; ++j) acc += d[j];
  *out = acc;
}

template <int N>
__global__ void __launch_bounds__(kBesideThreads, 1)
    tma_walk_beside_wgmma(const __grid_constant__ WalkMaps maps, int nmaps, int stages, int blocks, int total_blocks,
                          int mma_batches, int hold_cycles, bool kblock_groups, float* sink, long long* cycles,
                          long long* mma_cycles) {
  __shared__ __align__(1024) std::uint32_t tiles[(64 + N) * 32];
  for (int i = threadIdx.x; i < (64 + N) * 32; i += blockDim.x) tiles[i] = 0x3c003c00u ^ ((i * 2654435761u) & 0x00ff00ffu);
  fence_proxy_async();
  const int loads = blocks * kWalkBoxesPerRow;
  WalkIssuer issue(maps, nmaps, loads, total_blocks, 0);  // its divisions before the clock starts
  const long long t0 = clock64();
  RingOptions o;
  o.producer = 256;
  o.producers = walk_producers(stages);
  o.hold_cycles = hold_cycles;
  stream_ring(loads, stages, nmaps * kWalkBoxBytes, issue, o);
  if (threadIdx.x == kBesideConsumer) cycles[blockIdx.x] = clock64() - t0;
  if (threadIdx.x < 256 && mma_batches > 0) {
    const std::uint64_t da = sw128_desc(tiles), db = sw128_desc(tiles + 64 * 32);
    float d[N / 2];
#pragma unroll
    for (int j = 0; j < N / 2; ++j) d[j] = 0.f;
    if (kblock_groups) {
      // As the GEMM kernels issue them: a k-block's 4 wgmmas a group, one group left in flight.
      for (int b = 0; b < 4 * mma_batches; ++b) {
        wgmma_fence();
#pragma unroll
        for (int u = 0; u < 4; ++u) wgmma_ss<N>(d, da + 2 * u, db + 2 * u);
        wgmma_commit();
        wgmma_wait<1>();
      }
      wgmma_wait<0>();
      fence_regs(d);
    } else {
      for (int b = 0; b < mma_batches; ++b) {
        wgmma_fence();
#pragma unroll
        for (int u = 0; u < 16; ++u) wgmma_ss<N>(d, da + 2 * (u & 3), db + 2 * (u & 3));
        wgmma_commit();
        wgmma_wait<0>();
        fence_regs(d);
      }
    }
    if (threadIdx.x == 0) mma_cycles[blockIdx.x] = clock64() - t0;
    sum_to(d, sink + blockIdx.x * 256 + threadIdx.x);
  }
}

// The walk feeding the wgmmas that read it, as a tensor-bound GEMM k-loop is fed: each stage (a
// box of A and N / 128 boxes of B side by side as one operand: a 128xN tile's k-block; at N = 256
// the 128x128 dual GEMM's A, B1 and B2) is waited for by two warpgroups, each issuing 4 wgmma
// m64nN along the stage's 128-byte rows (its 64 rows of A), committed as a group with one group
// left in flight, the stage released when its group completes: the dualgemm kernels' consumer
// loop. The stream above reads a tile of its own beside a walk it does not wait for; here the
// wgmmas read what the TMA has just written. FedMode::Ring runs the same ring's barriers with
// nothing loaded (the producers arrive on a stage's full barrier expecting no bytes), Alone the
// wgmmas with no barriers: the walk's own cost is Ring's clocks over Fed's, the ring's barrier
// chain Alone's over Ring's. Warpgroup 0's first thread times the k-blocks after the first
// kFedWarmup (clock64) into cycles[blockIdx.x].
// Stages: the 128x128 kernels' 4 at N = 256; 6 at N = 128 (the 128x64 kernels'), where 4 leave
// the loop waiting on the walk's latency (about 2.5 stages in flight) rather than the wgmma.
__host__ __device__ constexpr int fed_stages(int n) { return n == 256 ? 4 : 6; }
constexpr int kFedWarmup = 16;
__host__ __device__ constexpr int fed_stage_bytes(int n) { return (kWalkBoxRows + n) * kRowBytes; }
constexpr int kFedThreads = 256 + 32 * walk_producers(4);
constexpr int kFedSmemBytes = ring_smem_bytes(std::max(fed_stages(256) * fed_stage_bytes(256),
                                                       fed_stages(128) * fed_stage_bytes(128)));

enum class FedMode { Alone, Ring, Fed };

template <bool Fp8, int N>
__global__ void __launch_bounds__(kFedThreads, 1)
    tma_walk_feeding_wgmma(const __grid_constant__ WalkMaps maps, int blocks, int total_blocks, FedMode mode,
                           float* sink, long long* cycles) {
  static_assert(N % kWalkBoxRows == 0 && 1 + N / kWalkBoxRows <= kWalkMaxMaps, "B is whole 128-row boxes");
  constexpr int kStageBytes = fed_stage_bytes(N), kStages = fed_stages(N);
  const int loads = blocks * kWalkBoxesPerRow;
  const RingView v = ring_view(kStages, kStageBytes);
  // Operands that are neither zeros nor NaN (in bf16 or e4m3) where no walk writes them.
  auto* words = reinterpret_cast<std::uint32_t*>(v.ring);
  for (int i = threadIdx.x; i < kStages * kStageBytes / 4; i += blockDim.x)
    words[i] = 0x3c383c38u ^ ((i * 2654435761u) & 0x03030303u);
  fence_proxy_async();
  WalkIssuer issue(maps, 1 + N / kWalkBoxRows, loads, total_blocks, 0);
  RingOptions o;
  o.producer = 256;
  o.producers = walk_producers(kStages);
  o.consumer_arrivals = 2;  // one a warpgroup
  o.own_consumer = false;
  const bool ring = mode != FedMode::Alone;
  if (mode == FedMode::Fed) {
    stream_ring(loads, kStages, kStageBytes, issue, o);
  } else {
    o.expect_bytes = 0;
    stream_ring(ring ? loads : 0, kStages, kStageBytes, [](int, unsigned char*, std::uint64_t*) {}, o);
  }
  if (threadIdx.x >= 256) return;
  const int wg = threadIdx.x / 128;
  float d[N / 2];
#pragma unroll
  for (int j = 0; j < N / 2; ++j) d[j] = 0.f;
  long long t0 = 0;
  for (int i = 0; i < loads; ++i) {
    const int s = i % kStages;
    if (i == kFedWarmup) t0 = clock64();
    if (ring) mbar_wait(&v.full[s], (i / kStages) & 1);
    const unsigned char* st = v.ring + s * kStageBytes;
    const std::uint64_t da = sw128_desc(st + wg * 64 * kRowBytes), db = sw128_desc(st + kWalkBoxBytes);
    wgmma_fence();
#pragma unroll
    for (int u = 0; u < 4; ++u) wgmma_ss<N, Fp8>(d, da + 2 * u, db + 2 * u);
    wgmma_commit();
    wgmma_wait<1>();
    fence_regs(d);
    if (ring && i > 0 && threadIdx.x % 128 == 0) mbar_arrive(&v.empty[(i - 1) % kStages]);
  }
  wgmma_wait<0>();
  fence_regs(d);
  if (threadIdx.x == 0) cycles[blockIdx.x] = clock64() - t0;
  sum_to(d, sink + blockIdx.x * 256 + threadIdx.x);
}

struct StreamResult {
  int stages;
  double us, GBps, ns_per_box;  // kernel time; bytes delivered per second; time per box per CTA
};

std::vector<StreamResult> sweep(std::size_t tensor_bytes, bool flush, int repeats, int sms) {
  const int rows = int(tensor_bytes / kRowBytes);
  DeviceBuffer buf(tensor_bytes);
  OVERLAP_CUDA_CHECK(cudaMemset(buf.get(), 0x3c, tensor_bytes));
  CUtensorMap map;
  const cuuint64_t dims[4] = {kRowBytes / 2, cuuint64_t(rows), 1, 1};
  const cuuint64_t strides[3] = {kRowBytes, cuuint64_t(rows) * kRowBytes, cuuint64_t(rows) * kRowBytes};
  const cuuint32_t box[4] = {kRowBytes / 2, kBoxRows, 1, 1};
  OVERLAP_CUDA_CHECK(cuda::make_tensor_map_4d(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, buf.get(), dims, strides, box));
  const int smem = kRingSmemBytes;
  OVERLAP_CUDA_CHECK(cudaFuncSetAttribute(tma_stream, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  constexpr int boxes = 256;  // 8 MiB per CTA
  std::vector<StreamResult> out;
  for (int stages : {1, 2, 3, 4, 6}) {
    const double us =
        median_us([&](cudaStream_t s) { tma_stream<<<sms, 64, smem, s>>>(map, rows, boxes, stages); }, repeats, flush);
    OVERLAP_CUDA_CHECK(cudaGetLastError());
    const double bytes = double(sms) * boxes * kBoxBytes;
    out.push_back({stages, us, bytes / (us * 1e3), us * 1e3 / boxes});
  }
  return out;
}

// Three tensors of `total_blocks` row blocks each: from HBM one block per CTA and tensor (L2
// emptied before each run: every byte a miss, about 120 MB a tensor), or L2-resident (a few
// blocks a tensor, every CTA walking 8 blocks' worth, block b + i x grid mod total_blocks, after
// the warm-up).
class WalkTensors {
 public:
  WalkTensors(int total_blocks)
      : total_blocks_(total_blocks), bytes_(std::size_t(total_blocks) * kWalkBoxRows * kWalkRowBytes) {
    for (int j = 0; j < kWalkMaxMaps; ++j) {
      bufs_[j] = DeviceBuffer(bytes_);
      OVERLAP_CUDA_CHECK(cudaMemset(bufs_[j].get(), 0x3c, bytes_));
      const cuuint64_t dims[4] = {kWalkRowBytes, cuuint64_t(bytes_ / kWalkRowBytes), 1, 1};
      const cuuint64_t strides[3] = {kWalkRowBytes, bytes_, bytes_};
      const cuuint32_t box[4] = {kRowBytes, kWalkBoxRows, 1, 1};
      OVERLAP_CUDA_CHECK(
          cuda::make_tensor_map_4d(&maps_.map[j], CU_TENSOR_MAP_DATA_TYPE_UINT8, bufs_[j].get(), dims, strides, box));
    }
    OVERLAP_CUDA_CHECK(cudaFuncSetAttribute(tma_walk, cudaFuncAttributeMaxDynamicSharedMemorySize, kRingSmemBytes));
    OVERLAP_CUDA_CHECK(cudaFuncSetAttribute(tma_walk_beside_wgmma<64>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            kBesideSmemBytes));
    OVERLAP_CUDA_CHECK(cudaFuncSetAttribute(tma_walk_beside_wgmma<128>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            kBesideSmemBytes));
    OVERLAP_CUDA_CHECK(cudaFuncSetAttribute(tma_walk_beside_wgmma<256>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            kBesideSmemBytes));
    for (const void* fed : {(const void*)tma_walk_feeding_wgmma<false, 128>, (const void*)tma_walk_feeding_wgmma<true, 128>,
                            (const void*)tma_walk_feeding_wgmma<false, 256>, (const void*)tma_walk_feeding_wgmma<true, 256>})
      OVERLAP_CUDA_CHECK(cudaFuncSetAttribute(fed, cudaFuncAttributeMaxDynamicSharedMemorySize, kFedSmemBytes));
  }

  // Bytes delivered per second (GB/s) with `sms` CTAs, each walking `blocks` blocks of `nmaps`
  // tensors through `stages` stages.
  double rate(int sms, int nmaps, int stages, int blocks, bool flush, int repeats, int prefetch = 0) const {
    return walk_GBps(sms, kRingSmemBytes, nmaps, stages, blocks, flush, repeats, prefetch);
  }

  // Bytes per second per SM with `per_sm` CTAs on every SM (each with a ring of `stages` stages
  // of three tensors, small enough for them all to fit), each walking `blocks` blocks.
  double rate_per_sm_with(int sms, int per_sm, int stages, int blocks, int repeats) const {
    const int smem = ring_smem_bytes(stages * kWalkMaxMaps * kWalkBoxBytes);
    return walk_GBps(sms * per_sm, smem, kWalkMaxMaps, stages, blocks, false, repeats, 0) / sms;
  }

  // The walk of three tensors through kBesideStages stages beside two warpgroups streaming wgmma
  // m64nNk16 (N = 0: alone; blocks = 0: the wgmmas alone; enough batches to outlast the walk),
  // each stage held `hold` SM clocks before its release (0: at once), medians over CTAs (clock64)
  // and runs: the walk's bytes per SM clock and cycles, and the wgmma stream's cycles.
  struct Beside {
    double walk_bytes_per_clk = 0, walk_cycles = 0, mma_cycles = 0;
  };
  Beside beside_wgmma(int sms, int blocks, int n, int batches, int repeats, int hold = 0,
                      bool kblock_groups = false) const {
    DeviceBuffer sink(std::size_t(sms) * 256 * sizeof(float)), cycles(std::size_t(sms) * sizeof(long long)),
        mma_cycles(std::size_t(sms) * sizeof(long long));
    std::vector<double> walk, walk_cycles, mma;
    const auto median_over_ctas = [&](const DeviceBuffer& b) {
      std::vector<long long> c(sms);
      OVERLAP_CUDA_CHECK(cudaMemcpy(c.data(), b.get(), c.size() * sizeof(long long), cudaMemcpyDeviceToHost));
      return median_of(std::vector<double>(c.begin(), c.end()));
    };
    for (int r = 0; r < repeats + 1; ++r) {
      const auto launch = [&](auto kernel) {
        kernel<<<sms, kBesideThreads, kBesideSmemBytes>>>(maps_, kWalkMaxMaps, kBesideStages, blocks, total_blocks_,
                                                          batches, hold, kblock_groups, sink.as<float>(),
                                                          cycles.as<long long>(),
                                                          mma_cycles.as<long long>());
      };
      if (n == 256) launch(tma_walk_beside_wgmma<256>);
      else if (n == 128) launch(tma_walk_beside_wgmma<128>);
      else launch(tma_walk_beside_wgmma<64>);
      OVERLAP_CUDA_CHECK(cudaGetLastError());
      if (r == 0) continue;
      const double c = median_over_ctas(cycles);
      walk_cycles.push_back(c);
      walk.push_back(double(blocks) * kWalkBoxesPerRow * kWalkMaxMaps * kWalkBoxBytes / c);
      if (batches > 0) mma.push_back(median_over_ctas(mma_cycles));
    }
    return {median_of(walk), median_of(walk_cycles), mma.empty() ? 0.0 : median_of(mma)};
  }
  // SM clocks a k-block of the fed k-loop (tma_walk_feeding_wgmma, N = 128 or 256) on `sms` CTAs
  // walking `blocks` blocks (or, by `mode`, its ring with nothing loaded or the wgmmas alone):
  // medians over CTAs, then runs.
  double fed_kblock_cycles(int sms, int blocks, int n, bool fp8, FedMode mode, int repeats) const {
    DeviceBuffer sink(std::size_t(sms) * 256 * sizeof(float)), cycles(std::size_t(sms) * sizeof(long long));
    // At the first timed k-block's start the group before it may still run (one is left in
    // flight): the window holds its end too.
    const int timed = blocks * kWalkBoxesPerRow - kFedWarmup + 1;
    std::vector<double> per_kblock;
    for (int r = 0; r < repeats + 1; ++r) {
      const auto kernel = n == 128 ? (fp8 ? tma_walk_feeding_wgmma<true, 128> : tma_walk_feeding_wgmma<false, 128>)
                                   : (fp8 ? tma_walk_feeding_wgmma<true, 256> : tma_walk_feeding_wgmma<false, 256>);
      kernel<<<sms, kFedThreads, kFedSmemBytes>>>(maps_, blocks, total_blocks_, mode, sink.as<float>(),
                                                  cycles.as<long long>());
      OVERLAP_CUDA_CHECK(cudaGetLastError());
      if (r == 0) continue;
      std::vector<long long> c(sms);
      OVERLAP_CUDA_CHECK(cudaMemcpy(c.data(), cycles.get(), c.size() * sizeof(long long), cudaMemcpyDeviceToHost));
      per_kblock.push_back(median_of(std::vector<double>(c.begin(), c.end())) / timed);
    }
    return median_of(per_kblock);
  }
  static int batches_to_outlast(int blocks, int n) { return n == 0 ? 0 : 64 * blocks * kWalkMaxMaps * 64 / n; }

 private:
  // Bytes delivered per second (GB/s) by `ctas` CTAs of `smem` bytes of ring each, walking
  // `blocks` blocks of `nmaps` tensors through `stages` stages.
  double walk_GBps(int ctas, int smem, int nmaps, int stages, int blocks, bool flush, int repeats, int prefetch) const {
    const double us = median_us(
        [&](cudaStream_t s) {
          tma_walk<<<ctas, walk_threads(stages), smem, s>>>(maps_, nmaps, stages, blocks, total_blocks_, prefetch);
        },
        repeats, flush);
    OVERLAP_CUDA_CHECK(cudaGetLastError());
    return double(ctas) * blocks * kWalkBoxesPerRow * nmaps * kWalkBoxBytes / (us * 1e3);
  }

  int total_blocks_;
  std::size_t bytes_;
  DeviceBuffer bufs_[kWalkMaxMaps];
  WalkMaps maps_;
};

std::string curve(const std::vector<StreamResult>& r) {
  std::string s;
  for (const auto& x : r)
    s += fmt::format("{}{} stage{}: {:.0f} GB/s, {:.0f} ns per box", s.empty() ? "" : "; ", x.stages,
                     x.stages > 1 ? "s" : "", x.GBps, x.ns_per_box);
  return s;
}

}  // namespace

constexpr int kFewSms = 8;  // SMs walking where the GPU's DRAM and L2 should not bind

std::vector<MeasuredField> measure_tma_stream(int repeats, int compute_capability) {
  if (compute_capability < 90) return {};
  const int sms = overlap::gpu::current_sm_count();
  const auto l2 = sweep(std::size_t(16) << 20, false, repeats, sms);  // resident after the warm-up
  const auto hbm = sweep(std::size_t(2) << 30, true, repeats, sms);   // 8 MiB per CTA, disjoint: misses
  // The operand walk from HBM, three tensors (best over ring depths), and from L2: one tensor's
  // loads alone, then two and three tensors' together, per SM.
  std::string hbm_curve, l2_curve, few_curve, beside_curve, pf_curve, paced_curve, fed_curve;
  double fed_share = 1.0, fed_wide_share = 1.0;
  double walk_best = 0, sm_rate = 0, multi_rate = 0, stage_ns[kWalkMaxStages] = {}, alone_clk = 0, beside_clk = 0, pf_rate = 0,
         hbm_prefetched = 0;
  {
    const WalkTensors from_hbm(sms);
    for (int stages = 1; stages <= kWalkMaxStages; ++stages) {
      const double r = from_hbm.rate(sms, kWalkMaxMaps, stages, 1, true, repeats);
      hbm_curve += fmt::format("{}{}: {:.0f}", hbm_curve.empty() ? "" : ", ", stages, r);
      walk_best = std::max(walk_best, r);
    }
    hbm_prefetched = from_hbm.rate(sms, kWalkMaxMaps, kWalkMaxStages, 1, true, repeats, 2);
    hbm_curve += fmt::format(" GB/s (one tensor alone, 4 stages: {:.0f} GB/s)",
                             from_hbm.rate(sms, 1, kWalkMaxStages, 1, true, repeats));
  }
  // A stage's issue-to-landed time from HBM where DRAM is far from busy (8 CTAs walking 8
  // blocks each), at 1-4 stages in flight: with one it is the stage's latency; deeper rings
  // show how far stages in flight pipeline. It varies with where the tensors lie in DRAM: the
  // median over three allocations.
  {
    constexpr int kPlacements = 3;
    std::vector<double> ns[kWalkMaxStages];
    for (int p = 0; p < kPlacements; ++p) {
      const WalkTensors from_hbm(sms);
      for (int stages = 1; stages <= kWalkMaxStages; ++stages) {
        const double per_sm = from_hbm.rate(kFewSms, kWalkMaxMaps, stages, 8, true, repeats) / kFewSms;
        ns[stages - 1].push_back(stages * kWalkMaxMaps * kWalkBoxBytes / per_sm);
      }
    }
    for (int stages = 1; stages <= kWalkMaxStages; ++stages) {
      auto& v = ns[stages - 1];
      std::sort(v.begin(), v.end());
      stage_ns[stages - 1] = v[kPlacements / 2];
      few_curve += fmt::format("{}{}: {:.0f} ns ({:.0f}, {:.0f}, {:.0f})", few_curve.empty() ? "" : "; ", stages,
                               stage_ns[stages - 1], v[0], v[1], v[2]);
    }
  }
  {
    // Every SM walking, as a GEMM's CTAs do, tensors of 4 blocks each (11 MB in all, as the
    // dualgemm benchmark's A at M = 512): the L2 then serves every SM at its full rate, as it
    // does the kernels' hits, which are lines that CTAs walking at the same time share (A across
    // the N tiles, B across the M tiles). Past about 12 MB of tensors walked over and over the
    // L2's rate falls (walk_geometry.cu's footprint set): reported, not the value. With a grid
    // that is a multiple of 4 each CTA walks its one block (b mod 4) eight times over, a quarter
    // of the CTAs on each, as a GEMM's CTAs share an operand tile.
    constexpr int kL2Blocks = 4;
    const WalkTensors from_l2(kL2Blocks), spread_l2(7);
    for (int nmaps = 1; nmaps <= kWalkMaxMaps; ++nmaps) {
      const double per_sm = from_l2.rate(sms, nmaps, kWalkMaxStages, 8, false, repeats) / sms;
      l2_curve += fmt::format("{}{} tensor{}: {:.1f}", l2_curve.empty() ? "" : ", ", nmaps, nmaps > 1 ? "s" : "", per_sm);
      sm_rate = per_sm;
    }
    l2_curve += fmt::format(
        " GB/s per SM; three tensors with {} SMs walking: {:.1f}, of 7 blocks (19 MB) with every SM walking: {:.1f}",
        kFewSms, from_l2.rate(kFewSms, kWalkMaxMaps, kWalkMaxStages, 8, false, repeats) / kFewSms,
        spread_l2.rate(sms, kWalkMaxMaps, kWalkMaxStages, 8, false, repeats) / sms);
    // Several CTAs an SM (as a small-tile GEMM runs them), three tensors, 8 blocks each.
    const double two = from_l2.rate_per_sm_with(sms, 2, 2, 8, repeats), four = from_l2.rate_per_sm_with(sms, 4, 1, 8, repeats);
    multi_rate = std::min(two, four);
    l2_curve += fmt::format("; three tensors with 2 CTAs an SM (2 stages each): {:.1f}, with 4 CTAs an SM (1 stage "
                            "each): {:.1f}, with 1 CTA of 1 stage: {:.1f}",
                            two, four, from_l2.rate_per_sm_with(sms, 1, 1, 8, repeats));
    // L2 prefetches of the next tensors' boxes beside the walk: what they take from the SM's TMA.
    double with_pf[3] = {};
    for (int pf = 0; pf <= 2; ++pf) {
      with_pf[pf] = from_l2.rate(sms, kWalkMaxMaps, kWalkMaxStages, 8, false, repeats, pf) / sms;
      pf_curve += fmt::format("{}{}: {:.1f}", pf_curve.empty() ? "" : ", ", pf, with_pf[pf]);
    }
    const double stage_bytes = kWalkMaxMaps * kWalkBoxBytes;
    pf_rate = 2 * kWalkBoxBytes / (stage_bytes / with_pf[2] - stage_bytes / with_pf[0]);
    const auto alone = from_l2.beside_wgmma(sms, 8, 0, 0, repeats);
    alone_clk = alone.walk_bytes_per_clk;
    // The wgmma stream's share of its own rate while the walk runs beside it (each stage held
    // `hold` clocks, the wgmmas in batches of 16 or in k-block groups): its batches took `with`
    // cycles beside the walk's `walk_cycles`, `without` alone.
    struct Share {
      double walk_bytes_per_clk, mma_share, flops_per_clk;
    };
    const auto share_beside = [&](int n, int hold, bool kblock_groups) {
      const int batches = WalkTensors::batches_to_outlast(8, n);
      const auto with = from_l2.beside_wgmma(sms, 8, n, batches, repeats, hold, kblock_groups);
      const auto without = from_l2.beside_wgmma(sms, 0, n, batches, repeats, 0, kblock_groups);
      return Share{with.walk_bytes_per_clk, 1 - (with.mma_cycles - without.mma_cycles) / with.walk_cycles,
                   batches * 16.0 * 2 * 64 * n * 16 * 2 / without.mma_cycles};
    };
    std::vector<double> beside;
    for (int n : {64, 128, 256}) {
      const Share sh = share_beside(n, 0, false);
      beside.push_back(sh.walk_bytes_per_clk);
      beside_curve += fmt::format("{}N = {}: {:.1f} (the wgmmas meanwhile at {:.2f} of their {:.0f} FLOPs a clock alone)",
                                  beside_curve.empty() ? "" : ", ", n, sh.walk_bytes_per_clk, sh.mma_share,
                                  sh.flops_per_clk);
    }
    std::sort(beside.begin(), beside.end());
    beside_clk = beside[1];  // the median of the three shapes
    // The same with the walk paced as a tensor-bound k-loop paces it: each stage (a box of A, B1
    // and B2, a 128x128 tile's k-block) held for that k-block's wgmma time, 1024 SM clocks, so
    // one stage lands per k-block (48 B a clock) rather than as fast as the walk goes.
    // Also with the wgmmas issued as the kernels issue them (a k-block's 4 a group, one group left
    // in flight) rather than in batches of 16 waited for.
    for (bool kblock_groups : {false, true})
      for (int n : {128, 256}) {
        const Share sh = share_beside(n, kTensorBoundHold, kblock_groups);
        paced_curve += fmt::format("{}N = {}{}: {:.2f} (the walk at {:.1f} B a clock)", paced_curve.empty() ? "" : ", ",
                                   n, kblock_groups ? " in k-block groups" : "", sh.mma_share, sh.walk_bytes_per_clk);
      }
    // The walk feeding the wgmmas that read it (the kernels' k-loop): the share is the k-block's
    // clocks on the same ring with nothing loaded over its clocks fed, the lowest over the formats,
    // N = 256 with every SM walking and N = 128 with 8 and with every SM; for wide wgmmas the lowest
    // at N = 256. The ring's own barrier chain (its clocks with no barriers over the ring's) is
    // reported beside it.
    for (const auto& [n, walkers] : {std::pair{256, sms}, std::pair{128, kFewSms}, std::pair{128, sms}})
      for (bool fp8 : {false, true}) {
        const double alone = from_l2.fed_kblock_cycles(walkers, 8, n, fp8, FedMode::Alone, repeats);
        const double ring = from_l2.fed_kblock_cycles(walkers, 8, n, fp8, FedMode::Ring, repeats);
        const double fed = from_l2.fed_kblock_cycles(walkers, 8, n, fp8, FedMode::Fed, repeats);
        fed_share = std::min(fed_share, ring / fed);
        if (n == 256) fed_wide_share = std::min(fed_wide_share, ring / fed);
        fed_curve += fmt::format(
            "{}{} m64n{}k{} with {} SMs walking: {:.0f} SM clocks a k-block fed, {:.0f} on the ring with nothing loaded "
            "({:.3f}), {:.0f} with no barriers",
            fed_curve.empty() ? "" : "; ", fp8 ? "fp8" : "bf16", n, fp8 ? 32 : 16, walkers, fed, ring, ring / fed, alone);
      }
  }
  const auto few_how = [&](const char* in_flight) {
    return fmt::format(", three tensors from HBM (L2 flushed), 8 CTAs walking 8 blocks each; {} ({} KiB each) in "
                       "flight: issue to landed of a stage, the median over three allocations; by stages in flight "
                       "(median, and the three): {}",
                       in_flight, kWalkMaxMaps * kWalkBoxBytes / 1024, few_curve);
  };
  const std::string walk_how = fmt::format(
      "measured by overlap calibrate (cuda/calibrate/tma_stream.cu): {} CTAs, one per SM, each walking 128-row blocks "
      "of [rows x {} B] tensors along the rows as a GEMM's k-loop reads its operand tiles, 128 x 128-byte boxes (a "
      "row's pieces {} B apart), one box of each tensor a stage, through a ring released as soon as filled, issued "
      "by a producer warp for each stage in flight (up to 4), median of {} runs",
      sms, kWalkRowBytes, kWalkRowBytes, repeats);
  const auto best = [](const std::vector<StreamResult>& r) {
    return std::max_element(r.begin(), r.end(), [](auto& a, auto& b) { return a.GBps < b.GBps; })->GBps;
  };
  const std::string how = fmt::format(
      "measured by overlap calibrate (cuda/calibrate/tma_stream.cu): {} CTAs, one per SM, each streaming 256 TMA "
      "loads of 32 KiB (256 x 128-byte rows, 128-byte swizzle) through a ring of 1-6 stages released as soon as "
      "filled, median of {} runs",
      sms, repeats);
  const std::string fed_how = fmt::format(
      "measured by overlap calibrate (cuda/calibrate/tma_stream.cu, tma_walk_feeding_wgmma): one CTA an SM, each "
      "walking 8 blocks' worth of L2-resident 4-block tensors (a 128 x 128-byte box of A and one of each of N / 128 B "
      "tensors a stage, a producer warp a stage, up to 4) through {} stages at N = 256 and {} at N = 128 that feed two "
      "warpgroups' wgmmas as a tensor-bound GEMM k-loop is fed: each stage, a 128xN tile's k-block, waited for, read "
      "by 4 wgmma m64nN a warpgroup (at N = 256 the 128x128 dual GEMM's B1 and B2 as one operand), released when its "
      "group completes, one group in flight; the k-block's SM clocks on the same ring with nothing loaded (the "
      "producers arrive expecting no bytes) over its clocks fed, the lowest over the formats, N = 256 with all {} SMs "
      "walking and N = 128 with {} and with all, median of {} runs: {}. The model applies it to the tensor steps "
      "beside a walk whose wgmmas are narrower than 256 or not known. Beside a wgmma stream that reads a tile of its "
      "own and never waits for the walk ({} stages, m64nNk16 bf16), the stream's share of its rate alone: {}; with "
      "each stage held {} SM clocks before its release: {}",
      fed_stages(256), fed_stages(128), sms, kFewSms, repeats, fed_curve, kBesideStages, beside_curve, kTensorBoundHold,
      paced_curve);
  return {{"tma_l2_bandwidth_GBps", best(l2), how + ", 16 MiB L2-resident tensor, best over stages: " + curve(l2)},
          {"tma_l2_latency_ns", l2.front().ns_per_box,
           how + ", 16 MiB L2-resident tensor, one stage (one load in flight per SM): time per load"},
          {"tma_hbm_bandwidth_GBps", best(hbm), how + ", 2 GiB tensor (L2 flushed), read bytes, best over stages: " +
                                                    curve(hbm)},
          {"tma_hbm_latency_ns", hbm.front().ns_per_box,
           how + ", 2 GiB tensor (L2 flushed), one stage (one load in flight per SM): time per load"},
          {"tma_hbm_walk_bandwidth_GBps", walk_best,
           walk_how + fmt::format(", three tensors of one block per CTA ({} MB each, L2 flushed), best over 1-{} "
                                  "stages: {}",
                                  sms * kWalkBoxRows * kWalkRowBytes / 1000000, kWalkMaxStages, hbm_curve)},
          {"tma_hbm_walk_latency_ns", stage_ns[0], walk_how + few_how("one stage")},
          {"tma_hbm_walk_latency_2_ns", stage_ns[1], walk_how + few_how("two stages")},
          {"tma_hbm_walk_latency_3_ns", stage_ns[2], walk_how + few_how("three stages")},
          {"tma_walk_sm_GBps", sm_rate,
           walk_how + ", L2-resident tensors of 4 blocks, every CTA walking 8 blocks' worth of them, 4 stages; three tensors' loads "
                      "together, bytes per SM: " + l2_curve},
          {"tma_walk_sm_multi_GBps", multi_rate,
           walk_how + ", L2-resident tensors of 4 blocks, every CTA walking 8 blocks' worth of them; three tensors' loads together "
                      "with several CTAs on each SM, the lower of 2 and 4, bytes per SM: " + l2_curve},
          {"tma_walk_prefetch_GBps", pf_rate,
           walk_how + fmt::format(
                          ", L2-resident tensors of 4 blocks, every CTA walking 8 blocks' worth of three tensors, {} stages, "
                          "each stage also prefetching into L2 the boxes of the second and third tensors eight stages "
                          "ahead: the SM's time for the two prefetch boxes (what they add to a stage) as a rate; walk "
                          "bytes per SM with 0, 1, 2 tensors prefetched: {} GB/s (from HBM, every SM walking one block "
                          "of each tensor: {:.0f} GB/s with two tensors prefetched, {:.0f} without)",
                          kWalkMaxStages, pf_curve, hbm_prefetched, walk_best)},
          {"tma_walk_beside_wgmma_fraction", beside_clk / alone_clk,
           walk_how + fmt::format(
                          ", L2-resident tensors of 4 blocks, every CTA walking 8 blocks' worth of three tensors, {} stages, "
                          "while two warpgroups of the same CTA stream wgmma m64nNk16 (bf16, A and B in shared "
                          "memory): the median over N of the walk's bytes per SM clock (clock64, median over CTAs; {}) "
                          "against {:.1f} without the wgmmas",
                          kBesideStages, beside_curve, alone_clk)},
          {"tensor_beside_walk_fraction", fed_share, fed_how},
          {"tensor_beside_walk_wide_fraction", fed_wide_share, fed_how + "; for wgmmas of N >= 256, the lowest at N = 256"}};
}

}  // namespace overlap::gpu
