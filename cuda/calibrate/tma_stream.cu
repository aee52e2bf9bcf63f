#include "calibrate/tma_stream.hpp"

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <utility>

#include "calibrate/median_time.hpp"
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

constexpr int kMaxRing = 2 * kMaxStages;  // stages of the smallest (16 KiB) loads the ring holds

// The ring both kernels stream through: thread 0 issues load after load into stage i % stages
// (`issue(i, stage)` starts load i's copies on `bar`, which expects `bytes` a load); thread 32 (a
// second warp) waits for each stage to fill and releases it at once.
template <class Issue>
__device__ void stream_ring(int loads, int stages, int bytes, Issue issue) {
  extern __shared__ unsigned char smem_raw[];
  unsigned char* ring = aligned_smem(smem_raw);
  auto* full = reinterpret_cast<std::uint64_t*>(ring + kMaxStages * kBoxBytes);
  std::uint64_t* empty = full + kMaxRing;
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], 1);
    }
    mbar_init_fence();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int i = 0; i < loads; ++i) {
      const int s = i % stages;
      mbar_wait(&empty[s], ((i / stages) & 1) ^ 1);
      mbar_arrive_expect_tx(&full[s], bytes);
      issue(i, ring + s * bytes, &full[s]);
    }
  } else if (threadIdx.x == 32) {
    for (int i = 0; i < loads; ++i) {
      const int s = i % stages;
      mbar_wait(&full[s], (i / stages) & 1);
      mbar_arrive(&empty[s]);
    }
  }
}
constexpr int kRingSmemBytes = 1024 + kMaxStages * kBoxBytes + 2 * kMaxRing * 8;

// Contiguous 32 KiB boxes: CTA b reads boxes b * boxes, +1, ... (mod the tensor): disjoint ranges
// when the tensor holds them all, so from HBM nothing is read twice.
__global__ void __launch_bounds__(64, 1) tma_stream(const __grid_constant__ CUtensorMap map, int rows, int boxes,
                                                    int stages) {
  const int box_rows_total = rows / kBoxRows;
  stream_ring(boxes, stages, kBoxBytes, [&](int i, unsigned char* dst, std::uint64_t* bar) {
    const int row = int((static_cast<long long>(blockIdx.x) * boxes + i) % box_rows_total) * kBoxRows;
    tma_load_4d(dst, &map, bar, 0, row, 0, 0);
  });
}

// A GEMM's walk of one operand: CTA b loads its block of 128 rows (a [rows, K] tensor of bytes,
// K = kWalkRowBytes) box after box along K, 128 x 128 bytes a box, `per_stage` boxes adjacent in
// K per stage, as a k-loop reads its B tile; every row's 128-byte pieces are kWalkRowBytes apart
// in memory, unlike tma_stream's contiguous 32 KiB boxes.
constexpr int kWalkRowBytes = 7168;
constexpr int kWalkBoxRows = 128;
constexpr int kWalkBoxBytes = kRowBytes * kWalkBoxRows;
constexpr int kWalkBoxesPerRow = kWalkRowBytes / kRowBytes;

__global__ void __launch_bounds__(64, 1) tma_walk(const __grid_constant__ CUtensorMap map, int per_stage, int stages) {
  stream_ring(kWalkBoxesPerRow / per_stage, stages, per_stage * kWalkBoxBytes,
              [&](int i, unsigned char* dst, std::uint64_t* bar) {
                for (int j = 0; j < per_stage; ++j)
                  tma_load_4d(dst + j * kWalkBoxBytes, &map, bar, (i * per_stage + j) * kRowBytes,
                              int(blockIdx.x) * kWalkBoxRows, 0, 0);
              });
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

struct WalkResult {
  int per_stage, stages;
  double GBps;
};

// tma_walk over a tensor of one 128-row block per SM (about 120 MB: misses, L2 emptied before
// each run), for the same bytes in flight as one box a stage and as two adjacent boxes a stage.
std::vector<WalkResult> walk_sweep(int repeats, int sms) {
  const std::size_t rows = std::size_t(sms) * kWalkBoxRows;
  const std::size_t bytes = rows * kWalkRowBytes;
  DeviceBuffer buf(bytes);
  OVERLAP_CUDA_CHECK(cudaMemset(buf.get(), 0x3c, bytes));
  CUtensorMap map;
  const cuuint64_t dims[4] = {kWalkRowBytes, cuuint64_t(rows), 1, 1};
  const cuuint64_t strides[3] = {kWalkRowBytes, bytes, bytes};
  const cuuint32_t box[4] = {kRowBytes, kWalkBoxRows, 1, 1};
  OVERLAP_CUDA_CHECK(cuda::make_tensor_map_4d(&map, CU_TENSOR_MAP_DATA_TYPE_UINT8, buf.get(), dims, strides, box));
  const int smem = kRingSmemBytes;
  OVERLAP_CUDA_CHECK(cudaFuncSetAttribute(tma_walk, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  std::vector<WalkResult> out;
  for (const auto& [per_stage, stages] : {std::pair{1, 2}, std::pair{1, 4}, std::pair{1, 8}, std::pair{1, 12},
                                          std::pair{2, 1}, std::pair{2, 2}, std::pair{2, 4}, std::pair{2, 6}}) {
    const double us = median_us([&](cudaStream_t s) { tma_walk<<<sms, 64, smem, s>>>(map, per_stage, stages); },
                                repeats, true);
    OVERLAP_CUDA_CHECK(cudaGetLastError());
    out.push_back({per_stage, stages, double(bytes) / (us * 1e3)});
  }
  return out;
}

std::string curve(const std::vector<StreamResult>& r) {
  std::string s;
  for (const auto& x : r)
    s += fmt::format("{}{} stage{}: {:.0f} GB/s, {:.0f} ns per box", s.empty() ? "" : "; ", x.stages,
                     x.stages > 1 ? "s" : "", x.GBps, x.ns_per_box);
  return s;
}

}  // namespace

std::vector<MeasuredField> measure_tma_stream(int repeats, int compute_capability) {
  if (compute_capability < 90) return {};
  int sms = 0;
  OVERLAP_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const auto l2 = sweep(std::size_t(16) << 20, false, repeats, sms);  // resident after the warm-up
  const auto hbm = sweep(std::size_t(2) << 30, true, repeats, sms);   // 8 MiB per CTA, disjoint: misses
  const auto walk = walk_sweep(repeats, sms);
  std::string walk_curve;
  double walk_best = 0;
  for (const auto& w : walk) {
    walk_curve += fmt::format("{}{} x {} KiB: {:.0f} GB/s", walk_curve.empty() ? "" : "; ", w.stages,
                              w.per_stage * kWalkBoxBytes / 1024, w.GBps);
    walk_best = std::max(walk_best, w.GBps);
  }
  const auto best = [](const std::vector<StreamResult>& r) {
    return std::max_element(r.begin(), r.end(), [](auto& a, auto& b) { return a.GBps < b.GBps; })->GBps;
  };
  const std::string how = fmt::format(
      "measured by overlap calibrate (cuda/calibrate/tma_stream.cu): {} CTAs, one per SM, each streaming 256 TMA "
      "loads of 32 KiB (256 x 128-byte rows, 128-byte swizzle) through a ring of 1-6 stages released as soon as "
      "filled, median of {} runs",
      sms, repeats);
  return {{"tma_l2_bandwidth_GBps", best(l2), how + ", 16 MiB L2-resident tensor, best over stages: " + curve(l2)},
          {"tma_l2_latency_ns", l2.front().ns_per_box,
           how + ", 16 MiB L2-resident tensor, one stage (one load in flight per SM): time per load"},
          {"tma_hbm_bandwidth_GBps", best(hbm), how + ", 2 GiB tensor (L2 flushed), read bytes, best over stages: " +
                                                    curve(hbm)},
          {"tma_hbm_latency_ns", hbm.front().ns_per_box,
           how + ", 2 GiB tensor (L2 flushed), one stage (one load in flight per SM): time per load"},
          {"tma_hbm_walk_bandwidth_GBps", walk_best,
           fmt::format("measured by overlap calibrate (cuda/calibrate/tma_stream.cu): {} CTAs, one per SM, each "
                       "walking its 128 rows of a [{} x {}-byte] tensor (L2 flushed) along K as a GEMM's k-loop reads "
                       "its B tile, 128 x 128-byte boxes (every row's pieces {} bytes apart), through a ring released "
                       "as soon as filled, median of {} runs, best over stages x stage size: {}",
                       sms, std::size_t(sms) * kWalkBoxRows, kWalkRowBytes, kWalkRowBytes, repeats, walk_curve)}};
}

}  // namespace overlap::gpu
