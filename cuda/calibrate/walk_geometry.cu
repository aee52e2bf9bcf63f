// An experiment, not a calibration: what sets the rate at which one SM's TMA walks a GEMM's
// operand tiles along K (calibrate's operand walk). Its answer (2026-11-27, lent H100): with one
// producer thread, that thread's issue loop. The trace set stamps CTA 0's ring: one stage per
// ~1100 SM clocks while the loop divided 64-bit a load, ~550 once it counted instead, whatever
// the boxes' rows, bytes or the ring's depth, with no load in flight when the next is issued;
// 2 and 4 producer warps walk faster (a 128x48 stage: 471 -> 319 -> 242 ns), and with 4 the
// three-tensor walk over 19 MB of tensors (7 blocks each, calibrate's footprint then) is the
// GPU's L2's (147 GB/s per SM with 8 SMs walking, 79 with 132); the footprint set has the rate
// fall past about 12 MB walked (calibrate now walks 4-block tensors, 11 MB). The earlier sets
// (stride, box rows and bytes, depth, footprint, threads, sharing) were measured with the
// dividing loop, which paced them all.
//
//   tma_walk_geometry [repeats] [all|scaling|order|wait|trace|producers|spread|consumer|footprint|loaded|kernels|floor|surface]
//
// `scaling` runs only the geometries that vary the CTAs walking and the hold of each stage;
// `order` those that walk one tensor across row blocks instead of along K; `wait` the ring's
// waits by try_wait against polling; `trace` where one CTA's stages spend their time;
// `producers` the walks issued by 1, 2 and 4 producer warps; `spread` 4 producers' walks on 8 to
// 132 SMs; `consumer` 2 and 4 producers with try_wait or polling waits; `footprint` 4 producers'
// walks of 5.5 to 110 MB of tensors on every SM and on 8; `loaded` a GEMM's walk (A in L2, B
// from DRAM) at ring depths 1 to 4 on every SM and on 8; `kernels` the dualgemm kernels' own walks
// (their boxes, depth, CTAs and sharing, a k-block's wgmma time as the hold); `floor` the goal
// shapes' whole walks (fp8, and bf16 at (256, 3072, 4096)), once and cold, as a call is timed (the
// soonest a kernel with that walk has its operands); `surface` dualgemm-like walks' stage latency and
// rate by the SMs walking (33 to 132) and the stages each has in flight (2 to 6).
//
// Every SM runs one CTA walking L2-resident tensors (1280 rows each, read by the warm-up runs):
// load i of CTA b is box (i mod boxes_per_row) of row block (b + (i div boxes_per_row) x grid)
// mod blocks, through a ring of 4 stages (unless a geometry says) released as soon as they land
// (calibrate/tma_ring.cuh). Prints one CSV row per geometry: tensors, row stride, box rows (of
// the first tensor, then of the others), box bytes a row, swizzle, whether the CTAs sharing a row
// block start at different boxes of it, ring stages, GB/s per SM, box rows per ns per SM.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "calibrate/clock_runs.hpp"
#include "calibrate/median_time.hpp"
#include "calibrate/tma_ring.cuh"
#include "common/sm90_ptx.cuh"
#include "common/tensor_map.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device_buffer.hpp"

namespace {

using namespace overlap::cuda::sm90;
using overlap::gpu::DeviceBuffer;

constexpr int kMaxTensors = 3;
constexpr int kLoadsPerCta = 512;

struct Maps {
  CUtensorMap map[kMaxTensors];
};

struct Geometry {
  int tensors, stride, box_rows, box_row_bytes;
  CUtensorMapSwizzle swizzle;
  bool staggered = false;  // CTA b starts its walk of a row block b x 7 boxes along (mod the row)
  int stages = 4;
  int other_rows = 0;  // box rows of the second and third tensors (a GEMM stage's B1, B2); 0: box_rows
  int tensor_rows = 1280;  // rows of each tensor: its footprint in L2 (x the row stride)
  int threads = 64;        // the CTA's threads (the dualgemm kernels have 384)
  bool prefetch_maps = false;  // prefetch.tensormap of every map first, as the dualgemm kernels do
  bool flush = false;          // L2 emptied before each run: every box's first reader goes to DRAM
  // The second and third tensors as a GEMM's B at small M: `b_share` CTAs (consecutive) share each
  // of their row blocks, and those blocks are fresh ones (b_blocks of them: 0, the first
  // tensor's), as the dualgemm kernels' CTAs of one column share its B tile.
  int b_share = 0, b_blocks = 0;
  // CTAs walking (0: one on every SM), and SM clocks each stage is held after it lands (0:
  // released at once): does one SM walk faster when fewer walk, or when its loads are spaced
  // out by the MMAs a kernel runs between them?
  int ctas = 0, hold_cycles = 0;
  // Consecutive loads of a CTA in different row blocks (load i: block b + i, box i / blocks)
  // rather than along one block's K: does a tensor's walk wait on its previous box's lines?
  bool across = false;
  bool spin = false;  // the ring's waits poll test_wait rather than try_wait
  bool trace = false;  // also print where CTA 0's stages spend their time (one more run)
  int producers = 1;   // warps issuing the loads in turn (the CTA has room for 11 with 384 threads)
  int loads = kLoadsPerCta;  // each CTA's loads (stages walked)
  int walked_row_bytes = 0;  // of each row, the bytes walked (0: the row stride's, at most 7168)
  int rows_of(int j) const { return j == 0 || other_rows == 0 ? box_rows : other_rows; }
  int stage_bytes() const {
    int b = 0;
    for (int j = 0; j < tensors; ++j) b += rows_of(j) * box_row_bytes;
    return b;
  }
};

__global__ void __launch_bounds__(384, 1)
    walk(const __grid_constant__ Maps maps, int tensors, int box_rows, int other_rows, int box_row_bytes,
         int boxes_per_row, int blocks, int stagger, int stages, bool prefetch_maps, int b_share, int b_blocks,
         int hold_cycles, bool across, bool spin, int producers, int loads, long long* trace) {
  if (prefetch_maps && threadIdx.x == 0)
    for (int j = 0; j < tensors; ++j) tma_prefetch_map(&maps.map[j]);
  const int stage_bytes = (box_rows + (tensors - 1) * other_rows) * box_row_bytes;
  // Load i reads box `box` of row block `block` (of B1 and B2: `b_block`), in the walk's order:
  // along K, a block after each row's boxes, or (across) a block each load, a box after each
  // round of blocks. Counted, not divided (tma_ring.cuh's WrapCounter).
  using overlap::gpu::WrapCounter;
  const long long b = blockIdx.x;
  WrapCounter box(b * stagger, 1, boxes_per_row);
  WrapCounter block(b, across ? 1 : gridDim.x, blocks);
  WrapCounter b_block(b_share > 0 ? b / b_share : 0, b_share > 0 ? gridDim.x / b_share : 0, b_share > 0 ? b_blocks : 1);
  int round = 0;  // loads since the last turn of the outer counter
  const int round_length = across ? blocks : boxes_per_row;
  const auto issue = [&](int, unsigned char* dst, std::uint64_t* bar) {
    for (int j = 0; j < tensors && dst != nullptr; ++j) {
      const int rows = j == 0 ? box_rows : other_rows;
      const int offset = j == 0 ? 0 : (box_rows + (j - 1) * other_rows) * box_row_bytes;
      const int row_block = j == 0 || b_share == 0 ? block.value : b_block.value;
      tma_load_4d(dst + offset, &maps.map[j], bar, box.value * box_row_bytes, row_block * rows, 0, 0);
    }
    const bool turn = ++round == round_length;
    if (turn) round = 0;
    if (across) {
      block.advance();
      if (turn) box.advance();
    } else {
      box.advance();
      if (turn) {
        block.advance();
        b_block.advance();
      }
    }
  };
  overlap::gpu::RingOptions o;
  o.producers = producers;
  o.hold_cycles = hold_cycles;
  o.spin = spin;
  o.trace = trace;
  overlap::gpu::stream_ring(loads, stages, stage_bytes, issue, o);
}

const char* swizzle_name(CUtensorMapSwizzle s) {
  return s == CU_TENSOR_MAP_SWIZZLE_128B ? "128B" : s == CU_TENSOR_MAP_SWIZZLE_64B ? "64B" : "none";
}

// One launch of the walk of geometry `g` on `sms` CTAs (with `trace`: CTA 0's ring stamped).
void launch_walk(const Geometry& g, const Maps& maps, int sms, int smem, int boxes_per_row, int blocks, cudaStream_t s,
                 long long* trace) {
  walk<<<sms, g.threads, smem, s>>>(maps, g.tensors, g.box_rows, g.rows_of(1), g.box_row_bytes, boxes_per_row, blocks,
                                    g.staggered ? 7 : 0, g.stages, g.prefetch_maps, g.b_share, g.b_blocks,
                                    g.hold_cycles, g.across, g.spin, g.producers, g.loads, trace);
}

// One more run with CTA 0's ring traced: medians over its steady loads (the first 64 and last 16
// left out) of the producer's clocks from one issue to the next and waiting for a free stage, of
// a load's clocks from issued to seen landed, and of the loads in flight when one is issued.
void trace_one(const Geometry& g, const Maps& maps, int sms, int smem, int boxes_per_row, int blocks) {
  constexpr int kS = overlap::gpu::kTraceStamps;
  DeviceBuffer buf(std::size_t(kS) * kLoadsPerCta * sizeof(long long));
  auto* trace = static_cast<long long*>(buf.get());
  launch_walk(g, maps, sms, smem, boxes_per_row, blocks, nullptr, trace);
  OVERLAP_CUDA_CHECK(cudaGetLastError());
  std::vector<long long> t(std::size_t(kS) * kLoadsPerCta);
  OVERLAP_CUDA_CHECK(cudaMemcpy(t.data(), trace, t.size() * sizeof(long long), cudaMemcpyDeviceToHost));
  std::vector<double> step, wait, expect, issue, flight, in_flight;
  for (int i = 64; i < kLoadsPerCta - 16; ++i) {
    const long long* now = &t[std::size_t(kS) * i];
    step.push_back(now[3] - now[3 - kS]);
    wait.push_back(now[1] - now[0]);
    expect.push_back(now[2] - now[1]);
    issue.push_back(now[3] - now[2]);
    flight.push_back(now[4] - now[3]);
    int n = 0;
    for (int j = 0; j < i; ++j) n += t[std::size_t(kS) * j + 4] > now[3];
    in_flight.push_back(n);
  }
  using overlap::gpu::median_of;
  std::printf("# trace of CTA 0 (SM clocks, medians): issue to issue %.0f = wait %.0f + expect_tx %.0f + issue %.0f "
              "+ the rest; issued to landed %.0f, in flight at issue %.0f\n",
              median_of(step), median_of(wait), median_of(expect), median_of(issue), median_of(flight),
              median_of(in_flight));
}

void run(const Geometry& g, int sms, int repeats) {
  if (g.across && g.b_share > 0) {
    std::fprintf(stderr, "walk_geometry: `across` walks B1 and B2 in the first tensor's blocks (b_share 0)\n");
    std::exit(2);
  }
  if (g.producers > g.stages || 32 * (g.producers + 1) > g.threads) {
    std::fprintf(stderr, "walk_geometry: %d producers need at least as many stages (%d) and %d threads (%d)\n",
                 g.producers, g.stages, 32 * (g.producers + 1), g.threads);
    std::exit(2);
  }
  if (g.trace && g.loads != kLoadsPerCta) {
    std::fprintf(stderr, "walk_geometry: the trace reads %d loads a CTA (this geometry walks %d)\n", kLoadsPerCta, g.loads);
    std::exit(2);
  }
  if (g.ctas > 0) sms = std::min(sms, g.ctas);
  // 1280 rows (10 blocks of 128) of every stride unless the geometry says: as many CTAs share
  // each block at every geometry.
  const int kRows = g.tensor_rows;
  const std::size_t tensor_bytes = std::size_t(kRows) * g.stride;
  // The walked width of a row (K = 7168 in fp8 unless the geometry says).
  const int row_bytes = g.walked_row_bytes > 0 ? g.walked_row_bytes : std::min(7168, g.stride);
  const int rows = kRows, blocks = kRows / g.box_rows;
  const int boxes_per_row = row_bytes / g.box_row_bytes;
  const int b_rows = g.b_share > 0 ? g.b_blocks * g.rows_of(1) : rows;
  const std::size_t b_bytes = std::size_t(b_rows) * g.stride;
  DeviceBuffer bufs[kMaxTensors] = {DeviceBuffer(tensor_bytes), DeviceBuffer(b_bytes), DeviceBuffer(b_bytes)};
  Maps maps{};
  for (int j = 0; j < g.tensors; ++j) {
    const int j_rows = j == 0 ? rows : b_rows;
    const std::size_t j_bytes = j == 0 ? tensor_bytes : b_bytes;
    OVERLAP_CUDA_CHECK(cudaMemset(bufs[j].get(), 0x3c, j_bytes));
    const cuuint64_t dims[4] = {cuuint64_t(row_bytes), cuuint64_t(j_rows), 1, 1};
    const cuuint64_t strides[3] = {cuuint64_t(g.stride), j_bytes, j_bytes};
    const cuuint32_t box[4] = {cuuint32_t(g.box_row_bytes), cuuint32_t(g.rows_of(j)), 1, 1};
    OVERLAP_CUDA_CHECK(overlap::cuda::make_tensor_map_4d(&maps.map[j], CU_TENSOR_MAP_DATA_TYPE_UINT8, bufs[j].get(),
                                                         dims, strides, box, g.swizzle));
  }
  const int smem = overlap::gpu::ring_smem_bytes(g.stages * g.stage_bytes());
  OVERLAP_CUDA_CHECK(cudaFuncSetAttribute(walk, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const double us = overlap::gpu::median_us(
      [&](cudaStream_t s) { launch_walk(g, maps, sms, smem, boxes_per_row, blocks, s, nullptr); },
      repeats, g.flush);
  OVERLAP_CUDA_CHECK(cudaGetLastError());
  OVERLAP_CUDA_CHECK(cudaDeviceSynchronize());
  if (g.trace) trace_one(g, maps, sms, smem, boxes_per_row, blocks);
  const double per_sm_bytes = double(g.loads) * g.stage_bytes();
  const double box_rows = double(g.loads) * g.stage_bytes() / g.box_row_bytes;
  std::printf("%d,%d,%d,%d,%d,%s,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%.1f,%.3f,%.0f,%.2f\n", g.tensors, g.stride, g.box_rows,
              g.rows_of(1), g.box_row_bytes, swizzle_name(g.swizzle), int(g.staggered), g.stages, kRows, g.threads,
              int(g.prefetch_maps) + 2 * int(g.flush), sms, g.hold_cycles, int(g.across), int(g.spin), g.producers,
              g.loads, per_sm_bytes / (us * 1e3), box_rows / (us * 1e3), us * 1e3 / g.loads, us);
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each row as it is measured, should a later one fail
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 10;
  const std::string set = argc > 2 ? argv[2] : "all";
  const auto sw128 = CU_TENSOR_MAP_SWIZZLE_128B;
  const std::vector<Geometry> geometries = {
      // calibrate's walk (one tensor, then three), then the row stride alone
      {1, 7168, 128, 128, sw128}, {3, 7168, 128, 128, sw128}, {1, 8192, 128, 128, sw128},
      {1, 7296, 128, 128, sw128}, {1, 7680, 128, 128, sw128}, {1, 4096, 128, 128, sw128},
      {1, 16384, 128, 128, sw128}, {1, 14336, 128, 128, sw128},
      // the rows a box holds, then its bytes a row
      {1, 7168, 64, 128, sw128}, {1, 7168, 256, 128, sw128}, {1, 7168, 32, 128, sw128},
      {1, 7168, 128, 64, CU_TENSOR_MAP_SWIZZLE_64B}, {1, 7168, 128, 256, CU_TENSOR_MAP_SWIZZLE_NONE},
      {1, 7168, 64, 256, CU_TENSOR_MAP_SWIZZLE_NONE}, {1, 7168, 128, 128, CU_TENSOR_MAP_SWIZZLE_NONE},
      // two tensors' 64-row boxes (a 64-row tile's A and one B) against one tensor's 128
      {2, 7168, 64, 128, sw128}, {3, 7168, 64, 128, sw128},
      // the CTAs that share a row block (13 of them here, as 48 CTAs share an A tile at M = 256,
      // N = 3072) reading different boxes of it at once rather than the same one
      {1, 7168, 128, 128, sw128, true}, {3, 7168, 128, 128, sw128, true}, {3, 7168, 64, 128, sw128, true},
      {1, 7168, 64, 128, sw128, true}, {1, 7168, 256, 128, sw128, true},
      // ring depth: does one tensor's walk speed up with more of its boxes in flight (calibrate
      // measured 1-4 stages; the dualgemm kernels keep 6 or 7)?
      {1, 7168, 128, 128, sw128, false, 2}, {1, 7168, 128, 128, sw128, false, 6},
      {1, 7168, 128, 128, sw128, false, 8}, {1, 7168, 128, 128, sw128, false, 12},
      // a 128x48 dualgemm stage (A 128 rows, B1 and B2 48) and a 128x64 one, at 4 stages and at
      // the kernels' 7 and 6
      {3, 7168, 128, 128, sw128, false, 4, 48}, {3, 7168, 128, 128, sw128, false, 7, 48},
      {3, 7168, 128, 128, sw128, false, 4, 64}, {3, 7168, 128, 128, sw128, false, 6, 64},
      // the tensors' footprint in L2 (1280 rows: 9.2 MB each): one tensor of 256 rows (1.8 MB, an
      // A operand at M = 256, K = 7168) to 5120, and the 128x48 stage with small tensors
      {1, 7168, 128, 128, sw128, false, 4, 0, 256}, {1, 7168, 128, 128, sw128, false, 4, 0, 512},
      {1, 7168, 128, 128, sw128, false, 4, 0, 2560}, {1, 7168, 128, 128, sw128, false, 4, 0, 5120},
      {3, 7168, 128, 128, sw128, false, 7, 48, 256}, {3, 7168, 128, 128, sw128, false, 4, 0, 256},
      {3, 7168, 128, 128, sw128, false, 4, 0, 512},
      // the dualgemm kernel's CTA: 384 threads, the maps prefetched
      {1, 7168, 128, 128, sw128, false, 4, 0, 1280, 384}, {1, 7168, 128, 128, sw128, false, 4, 0, 1280, 64, true},
      {3, 7168, 128, 128, sw128, false, 7, 48, 256, 384, true},
      {1, 7168, 128, 128, sw128, false, 4, 0, 1280, 64, false, true},
      {3, 7168, 128, 128, sw128, false, 7, 48, 1280, 64, false, true},
      // the 128x48 kernel's walk at (256, 3072, K): A of 256 rows (66 CTAs on each block), B1 and
      // B2 in 48-row blocks two CTAs share, fresh blocks each (from DRAM with the flush)
      {3, 7168, 128, 128, sw128, false, 7, 48, 256, 384, true, true, 2, 66 * 16},
      {3, 7168, 128, 128, sw128, false, 7, 48, 256, 384, true, false, 2, 66 * 16},
      {3, 7168, 128, 128, sw128, false, 7, 64, 256, 384, true, true, 2, 66 * 16},
  };
  // The same walks with fewer SMs walking, and with each stage held as long as a k-block's MMAs
  // (the 128x48 kernel runs a k-block in about 600 SM clocks).
  const auto scaled = [](Geometry g, int ctas, int hold) {
    g.ctas = ctas;
    g.hold_cycles = hold;
    return g;
  };
  const Geometry one{1, 7168, 128, 128, sw128};
  const Geometry stage48{3, 7168, 128, 128, sw128, false, 7, 48, 256, 384, true, false, 2, 66 * 16};
  std::vector<Geometry> scaling;
  for (int ctas : {1, 8, 33, 66, 99, 132}) scaling.push_back(scaled(one, ctas, 0));
  for (int ctas : {8, 33, 66, 99, 132}) scaling.push_back(scaled(stage48, ctas, 0));
  for (int hold : {150, 300, 450, 600}) {
    scaling.push_back(scaled(one, 0, hold));
    scaling.push_back(scaled(stage48, 0, hold));
  }
  // One tensor's boxes in the order of the walk and across blocks, and a dualgemm stage with every
  // tensor in L2 (B1 and B2 small), with and without a k-block's hold.
  const auto across = [](Geometry g) {
    g.across = true;
    return g;
  };
  const Geometry l2_48{3, 7168, 128, 128, sw128, false, 7, 48, 256, 384, true};
  const Geometry l2_64{3, 7168, 128, 128, sw128, false, 6, 64, 256, 384, true};
  const Geometry three{3, 7168, 128, 128, sw128};
  const std::vector<Geometry> order = {
      one, across(one), scaled(across(one), 1, 0), scaled(one, 1, 0), three, across(three),
      l2_48, scaled(l2_48, 0, 600), across(l2_48), l2_64, across(l2_64),
      {1, 7168, 32, 128, sw128}, across({1, 7168, 32, 128, sw128}), {1, 7168, 128, 128, sw128, false, 8},
      across({1, 7168, 128, 128, sw128, false, 8}),
  };
  const auto spinning = [](Geometry g) {
    g.spin = true;
    return g;
  };
  const auto traced = [](Geometry g) {
    g.trace = true;
    return g;
  };
  const std::vector<Geometry> trace = {traced(one), traced({1, 7168, 128, 128, sw128, false, 8}),
                                       traced(scaled(one, 1, 0)), traced(l2_48), traced(three),
                                       traced({1, 7168, 32, 128, sw128})};
  // The walks with 1, 2 and 4 producer warps (384 threads): how fast does the TMA walk when one
  // thread's issue loop is not what sets the pace?
  const auto produced_by = [](Geometry g, int producers) {
    g.producers = producers;
    g.threads = 384;
    return g;
  };
  std::vector<Geometry> producers;
  for (const Geometry& g : {one, three, l2_48, l2_64, Geometry{1, 7168, 32, 128, sw128}, Geometry{1, 7168, 256, 128, sw128},
                            Geometry{3, 7168, 128, 128, sw128, false, 7, 48, 256, 384, true, true, 2, 66 * 16}})
    for (int p : {1, 2, 4}) producers.push_back(produced_by(g, p));
  // The same walks by 4 producer warps on 8 to 132 SMs: is the rate an SM's, or the GPU's
  // shared among the SMs walking?
  std::vector<Geometry> spread;
  const Geometry nineteen_mb{3, 7168, 128, 128, sw128, false, 4, 0, 7 * 128};  // calibrate's footprint until 784721c
  for (const Geometry& g : {l2_48, l2_64, nineteen_mb})
    for (int ctas : {8, 33, 66, 99, 132}) spread.push_back(scaled(produced_by(g, 4), ctas, 0));
  // With 2 and 4 producers, waiting by try_wait or by polling: what paces a stage once the
  // producers do not (the consumer's wait, or the loads)?
  std::vector<Geometry> consumer;
  for (const Geometry& g : {l2_48, l2_64, one})
    for (int p : {2, 4}) {
      consumer.push_back(produced_by(g, p));
      consumer.push_back(spinning(produced_by(g, p)));
    }
  consumer.push_back(traced(produced_by(l2_48, 4)));
  consumer.push_back(traced(spinning(produced_by(l2_48, 4))));
  producers.push_back(traced(produced_by(l2_48, 1)));
  producers.push_back(traced(produced_by(l2_48, 2)));
  const std::vector<Geometry> wait = {one, spinning(one), {1, 7168, 128, 128, sw128, false, 8},
                                      spinning({1, 7168, 128, 128, sw128, false, 8}), scaled(spinning(one), 1, 0),
                                      spinning({1, 7168, 32, 128, sw128}), l2_48, spinning(l2_48), three,
                                      spinning(three)};
  // With a producer warp a stage: every SM's walk against the tensors' footprint (three tensors
  // of 256 to 5120 rows: 5.5 to 110 MB; one tensor; CTAs of a block staggered along it), and the
  // same footprints with 8 SMs walking: is the shared L2's limit on the walk a matter of how
  // much of it the walk spans?
  std::vector<Geometry> footprint;
  for (int ctas : {0, 8})
    for (int rows : {256, 512, 896, 1280, 2560, 5120}) {
      footprint.push_back(scaled(produced_by({3, 7168, 128, 128, sw128, false, 4, 0, rows}, 4), ctas, 0));
      if (ctas == 0) footprint.push_back(produced_by({1, 7168, 128, 128, sw128, false, 4, 0, rows}, 4));
    }
  footprint.push_back(produced_by({3, 7168, 128, 128, sw128, true, 4, 0, 896}, 4));
  footprint.push_back(produced_by({3, 7168, 128, 128, sw128, true, 4, 0, 5120}, 4));
  // A GEMM's walk under load, ring depth 1 to 4 (a producer warp a stage): every SM
  // walking three 128-row boxes a stage, A of 256 rows (66 CTAs on each block, in L2), B1 and B2
  // in fresh blocks two CTAs share (from DRAM, the L2 flushed), as the dualgemm kernels at
  // M = 256 walk; then 8 SMs. What a stage waits, issue to landed, when DRAM is busy.
  std::vector<Geometry> loaded;
  for (int ctas : {0, 8})
    for (int depth : {1, 2, 3, 4})
      loaded.push_back(traced(scaled(produced_by({3, 7168, 128, 128, sw128, false, depth, 0, 256, 384, true, true, 2, 66 * 10},
                                                 std::min(depth, 4)),
                                     ctas, 0)));
  // The dualgemm kernels' walks at fp8 (256,3072,4096) (K = 4096 bytes a row), each with its
  // kernel's box rows (A, then B1 and B2), ring depth and CTA count, the CTAs of a column tile
  // sharing its B blocks (4 for 64-row A tiles at M = 256, 2 for 128-row ones), B fresh every
  // tile (from DRAM: the L2 flushed first), 4 producer warps, each stage held as long as its
  // k-block's wgmma takes (8192 fp8 FLOPs an SM clock), then released at once: does the TMA walk
  // alone run at the k-block rate the kernels' trace shows (64x64 ~315 ns, 128x64 with 6 stages
  // ~322, 128x48 ~295, 128x128 ~570)?
  struct KernelWalk {
    int a_rows, b_rows, stages, ctas, b_share;
  };
  std::vector<Geometry> kernels;
  for (const KernelWalk& w : {KernelWalk{64, 64, 4, 132, 4}, KernelWalk{128, 64, 6, 96, 2}, KernelWalk{128, 48, 7, 128, 2},
                              KernelWalk{128, 128, 4, 48, 2}})
    for (bool hold : {true, false}) {
      const int wgmma_cycles = 2 * w.a_rows * w.b_rows * 128 * 2 / 8192;
      Geometry g{3, 4096, w.a_rows, 128, sw128, false, w.stages, w.b_rows, 256, 384, true, true, w.b_share,
                 (w.ctas / w.b_share) * 16};
      kernels.push_back(traced(scaled(produced_by(g, 4), w.ctas, hold ? wgmma_cycles : 0)));
    }
  // The goal shapes' operand walks as their best kernels walk them, once and cold: each CTA
  // one output tile's k-loop (K / 128 loads of its A, B1 and B2 boxes; every byte of the three
  // tensors read from DRAM once, the L2 flushed first), timed as `overlap validate` times a call.
  // Without a hold, the soonest any kernel with this launch and walk has its operands in shared
  // memory; with each stage held for its k-block's wgmma, the walk paced by the MMAs. A kernel's
  // call adds its last k-block's MMAs, the epilogue and C's store to either. The last walk reads
  // 256 bytes of each row a box (two K atoms, as the two-atom kernel's stages hold), in 3 stages
  // of the same bytes in flight: does a wider piece of each row read DRAM faster? Then bf16 at
  // (256, 3072, 4096), 8192 bytes a row.
  struct FloorWalk {
    int k_bytes, n, b_rows, stages, row_bytes = 128;  // row_bytes: of a box's row (256: two K atoms, unswizzled)
    int element_bytes = 1;                            // fp8; bf16 2
  };
  std::vector<Geometry> floor;
  for (const FloorWalk& w : {FloorWalk{7168, 4096, 64, 6}, FloorWalk{4096, 3072, 48, 7}, FloorWalk{7168, 4096, 128, 4},
                             FloorWalk{7168, 4096, 64, 3, 256}, FloorWalk{8192, 3072, 48, 7, 128, 2}})
    for (int producers : {1, std::min(4, w.stages)})
      for (bool hold : {false, true}) {
        constexpr int m = 256, a_rows = 128;
        Geometry g{3, w.k_bytes, a_rows, w.row_bytes, w.row_bytes == 128 ? sw128 : CU_TENSOR_MAP_SWIZZLE_NONE, false,
                   w.stages, w.b_rows, m, 384, true, true, m / a_rows, w.n / w.b_rows};
        g.walked_row_bytes = w.k_bytes;
        g.loads = w.k_bytes / w.row_bytes;
        // The k-block's wgmma: two products of K = a box row's elements, at 8192 fp8 (4096 bf16)
        // FLOPs an SM clock.
        const int k = w.row_bytes / w.element_bytes, flops_per_clock = 8192 / w.element_bytes;
        const int wgmma_cycles = 2 * a_rows * w.b_rows * k * 2 / flops_per_clock;
        floor.push_back(scaled(produced_by(g, producers), (m / a_rows) * (w.n / w.b_rows), hold ? wgmma_cycles : 0));
      }
  // A stage's latency and an SM's rate under load, by the SMs walking and the bytes each has in
  // flight: dualgemm-like stages (A of 64 or 128 rows in L2, B1 and B2 fresh from DRAM, shared by
  // the CTAs of a column tile as at M = 256), 2 to 6 stages in flight (released as they land,
  // a producer warp a stage up to 4), on 33 to 132 SMs, traced. What the model's walk latency
  // by depth would follow if it followed the L2 the SMs share.
  std::vector<Geometry> surface;
  for (const auto& [a_rows, b_rows] : {std::pair{64, 64}, std::pair{128, 64}, std::pair{128, 128}})
    for (int stages : {2, 3, 4, 6})
      for (int ctas : {33, 66, 99, 132}) {
        Geometry g{3, 4096, a_rows, 128, sw128, false, stages, b_rows, 256, 384, true, true, 256 / a_rows,
                   (132 / (256 / a_rows)) * 16};
        if (stages * g.stage_bytes() > 200 * 1024) continue;
        surface.push_back(traced(scaled(produced_by(g, std::min(stages, 4)), ctas, 0)));
      }
  const std::map<std::string, const std::vector<Geometry>*> sets = {
      {"all", &geometries}, {"scaling", &scaling},     {"order", &order},   {"wait", &wait},
      {"trace", &trace},    {"producers", &producers}, {"spread", &spread}, {"consumer", &consumer},
      {"footprint", &footprint}, {"loaded", &loaded}, {"kernels", &kernels}, {"floor", &floor},
      {"surface", &surface}};
  const auto chosen = sets.find(set);
  if (chosen == sets.end()) {
    std::string names;
    for (const auto& [name, _] : sets) names += (names.empty() ? "" : ", ") + name;
    std::fprintf(stderr, "tma_walk_geometry: unknown set '%s' (%s)\n", set.c_str(), names.c_str());
    return 2;
  }
  const int sms = overlap::gpu::current_sm_count();
  std::printf("# tma_walk_geometry: one CTA an SM (%d SMs), %d loads each unless a geometry says, L2-resident tensors\n",
              sms, kLoadsPerCta);
  std::printf("tensors,row_stride_bytes,box_rows,other_box_rows,box_row_bytes,swizzle,staggered,stages,tensor_rows,"
              "threads,prefetch_maps+2flush,ctas,hold_cycles,across,spin,producers,loads,GBps_per_sm,box_rows_per_ns_per_sm,"
              "ns_per_stage,us_per_launch\n");
  for (const Geometry& g : *chosen->second) run(g, sms, repeats);
  return 0;
}
