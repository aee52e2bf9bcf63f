// An experiment, not a calibration: what issuing a TMA load costs the thread that issues it. The
// engine starts a stage's loads all at once when its producer wakes and charges their latency
// from then. Its answer (lent H200, 2026-11-28, `bash tools/device/experiment.sh load_issue 5`):
// about 124 SM clocks for a burst's first box and 78-92 for each further one, whatever the box's
// rows (32-256), its source (L2 or DRAM) or how many SMs issue at once (1 or 132); a stage of
// three boxes holds its producer about 290 clocks, one of five (the 64-row tiles' stage) about
// 440. A lone SM's single box lands 290-545 clocks after its issue from L2 (4-32 KiB boxes)
// and 750-1150 from DRAM.
//
//   tma_load_issue [repeats]
//
// One thread of each CTA issues bursts of `boxes` TMA loads (128-byte rows of a [rows x 7168 B]
// tensor, `box_rows` rows a box, 128-byte swizzle, 4-d map as the dualgemm kernels make them,
// walked along K as a GEMM's k-loop walks its operand) onto one mbarrier, waits for the burst to
// land, and starts the next: nothing is in flight when a burst begins. CTA 0 stamps clock64
// before each issue, after the last, and when the burst has landed. Sources: L2 (a 9 MB tensor,
// read before; with every SM issuing, 3 to 27 CTAs (by box rows) start on each row block and
// ask for the same lines at once, so that case's landing times are those of a shared tile) or
// DRAM (a 2.4 GB tensor, each box read once by one CTA, the L2 flushed before each launch).
// Prints one CSV row per case, medians over the bursts past the first 8 and over the launches: SM
// clocks of the first box's issue, of each further box's, from the last issue to landed, and
// from the first issue to landed.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "calibrate/clock_runs.hpp"
#include "calibrate/experiment_args.hpp"
#include "common/sm90_ptx.cuh"
#include "common/tensor_map.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device_buffer.hpp"
#include "runtime/timing.hpp"

namespace {

using namespace overlap::cuda::sm90;
using overlap::gpu::DeviceBuffer;

constexpr int kMaxBoxes = 8, kBursts = 64, kSkipped = 8, kStamps = kMaxBoxes + 2;
constexpr int kRowBytes = 7168, kBoxRowBytes = 128, kKBlocks = kRowBytes / kBoxRowBytes;

__global__ void __launch_bounds__(32, 1)
    bursts(const __grid_constant__ CUtensorMap map, int boxes, int box_rows, int blocks, bool prefetch,
           long long* stamps) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ std::uint64_t bar;
  unsigned char* ring = aligned_smem(smem_raw);
  if (threadIdx.x != 0) return;
  mbar_init(&bar, 1);
  mbar_init_fence();
  if (prefetch) tma_prefetch_map(&map);
  const int box_bytes = box_rows * kBoxRowBytes;
  int k_block = 0, block = int(blockIdx.x) % blocks;  // counted, not divided
  long long t[kStamps];
  for (int b = 0; b < kBursts; ++b) {
    mbar_arrive_expect_tx(&bar, unsigned(boxes * box_bytes));
    for (int j = 0; j < boxes; ++j) {
      t[j] = clock64();
      tma_load_4d(ring + j * box_bytes, &map, &bar, k_block * kBoxRowBytes, block * box_rows, 0, 0);
      if (++k_block == kKBlocks) {
        k_block = 0;
        block += int(gridDim.x);
        if (block >= blocks) block -= blocks;
      }
    }
    t[boxes] = clock64();
    mbar_wait(&bar, unsigned(b & 1));
    t[boxes + 1] = clock64();
    if (blockIdx.x == 0)
      for (int i = 0; i <= boxes + 1; ++i) stamps[b * kStamps + i] = t[i];
  }
}

struct Case {
  int box_rows, boxes, ctas;
  bool prefetch, dram;
};

struct Medians {
  double first, further, last_to_landed, first_to_landed;
};

Medians run(const Case& c, const DeviceBuffer& tensor, std::size_t tensor_rows, int repeats,
            overlap::gpu::L2Flusher& flusher) {
  CUtensorMap map{};
  const std::size_t rows = c.dram ? tensor_rows : 1280;  // 9 MB: L2-resident after the first launch
  const cuuint64_t dims[4] = {kRowBytes, cuuint64_t(rows), 1, 1};
  const cuuint64_t strides[3] = {kRowBytes, rows * kRowBytes, rows * kRowBytes};
  const cuuint32_t box[4] = {kBoxRowBytes, cuuint32_t(c.box_rows), 1, 1};
  OVERLAP_CUDA_CHECK(overlap::cuda::make_tensor_map_4d(&map, CU_TENSOR_MAP_DATA_TYPE_UINT8, tensor.get(), dims,
                                                       strides, box));
  const int blocks = int(rows / std::size_t(c.box_rows));
  const int smem = 1024 + c.boxes * c.box_rows * kBoxRowBytes;
  OVERLAP_CUDA_CHECK(cudaFuncSetAttribute(bursts, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  DeviceBuffer stamps(std::size_t(kBursts) * kStamps * sizeof(long long));
  std::vector<long long> h(std::size_t(kBursts) * kStamps);
  std::vector<double> first, further, last_to_landed, first_to_landed;
  for (int r = 0; r < repeats + 1; ++r) {  // the first launch warms L2 (the L2 source) and the map
    if (c.dram) flusher.flush(nullptr);
    bursts<<<c.ctas, 32, smem>>>(map, c.boxes, c.box_rows, blocks, c.prefetch, stamps.as<long long>());
    OVERLAP_CUDA_CHECK(cudaGetLastError());
    OVERLAP_CUDA_CHECK(cudaDeviceSynchronize());
    if (r == 0) continue;
    stamps.download(h.data(), h.size() * sizeof(long long));
    for (int b = kSkipped; b < kBursts; ++b) {
      const long long* t = &h[std::size_t(b) * kStamps];
      first.push_back(double(t[1] - t[0]));
      if (c.boxes > 1) further.push_back(double(t[c.boxes] - t[1]) / (c.boxes - 1));
      last_to_landed.push_back(double(t[c.boxes + 1] - t[c.boxes]));
      first_to_landed.push_back(double(t[c.boxes + 1] - t[0]));
    }
  }
  using overlap::gpu::median_of;
  return {median_of(first), c.boxes > 1 ? median_of(further) : 0.0, median_of(last_to_landed),
          median_of(first_to_landed)};
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const int repeats = overlap::gpu::repeats_arg(argc, argv, 5, "tma_load_issue");
  if (repeats == 0) return 2;
  const int sms = overlap::gpu::current_sm_count();
  // Enough rows that every CTA's every box is a fresh one at 256-row boxes: sms CTAs x 64 bursts
  // x 8 boxes over 56 boxes a row block.
  const std::size_t tensor_rows = std::size_t(sms) * (kBursts * kMaxBoxes / kKBlocks + 1) * 256;
  DeviceBuffer tensor(tensor_rows * kRowBytes);
  OVERLAP_CUDA_CHECK(cudaMemset(tensor.get(), 0x3c, tensor_rows * kRowBytes));
  overlap::gpu::L2Flusher flusher;
  std::printf("# load_issue: one thread a CTA issuing bursts of TMA loads (128-byte rows, 7168 B apart), SM clocks, "
              "medians over %d launches\n",
              repeats);
  std::printf("source,box_rows,boxes,ctas,map_prefetched,first_issue,further_issue,last_issue_to_landed,"
              "first_issue_to_landed\n");
  std::vector<Case> cases;
  for (bool dram : {false, true})
    for (int ctas : {1, sms})
      for (int rows : {32, 64, 128, 256})
        for (int boxes : {1, 2, 3, 5, 8}) {
          if (boxes * rows * kBoxRowBytes > 200 * 1024) continue;
          cases.push_back({rows, boxes, ctas, true, dram});
        }
  for (int boxes : {1, 3}) cases.push_back({128, boxes, sms, false, false});  // the map not prefetched
  for (const Case& c : cases) {
    const Medians m = run(c, tensor, tensor_rows, repeats, flusher);
    std::printf("%s,%d,%d,%d,%d,%.0f,%.0f,%.0f,%.0f\n", c.dram ? "dram" : "l2", c.box_rows, c.boxes, c.ctas,
                int(c.prefetch), m.first, m.further, m.last_to_landed, m.first_to_landed);
  }
  return 0;
}
