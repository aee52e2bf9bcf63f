// One CTA of 256 threads on every SM (more than half an SM's shared memory each, so the grid
// is resident at once). The CTAs meet at a global counter, then each writes `tiles` 128 x 128
// fp16 tiles of a row-major output 4096 columns wide (rows 8 KiB apart, as a GEMM's C)
// and waits until its writes have completed (fence.sc.gpu; for bulk copies,
// cp.async.bulk.wait_group 0). Two clocks per CTA: when its last thread has issued its stores
// (before the fence) and when they have completed; the slowest CTA's give the aggregate rate.
// Values are random-looking (a multiplicative hash of the position), never zeros.
#include "calibrate/store_drain.hpp"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "calibrate/clock_runs.hpp"
#include "common/sm90_ptx.cuh"
#include "runtime/device_buffer.hpp"

namespace overlap::gpu {
namespace {

namespace sm90 = overlap::cuda::sm90;

constexpr int kThreads = 256;  // two warpgroups, each 64 rows of the tile, as in our GEMMs
constexpr int kTile = 128;  // rows and columns
constexpr int kCols = 4096;
constexpr int kTilesAcross = kCols / kTile;
constexpr int kTileBytes = kTile * kTile * 2;
constexpr int kStagePitch = kTile * 2 + 16;  // a padded row: the fragment's 4-byte writes hit 32 banks

enum class Mode { Fragment, Lines, Bulk };

// Two finite halves from a position in two integer operations, so the stores and not the
// values set the time: magnitudes below 1 (exponent bits capped), any sign.
__device__ __forceinline__ __half2 value(unsigned i) {
  const unsigned bits = (i * 0x9E3779B1u) & 0xBBFFBBFFu;
  return *reinterpret_cast<const __half2*>(&bits);
}

// Cols: the columns of each tile written (128: whole tiles, calibrate's; fewer: a narrower
// GEMM tile's output, as 128 x 64 or 128 x 48, at the same tile positions).
template <Mode M, int Cols = kTile>
__global__ void __launch_bounds__(kThreads, 1)
    store_tiles(__half* out, int tiles, unsigned* arrived, long long* cycles) {
  static_assert(Cols % 16 == 0 && Cols <= kTile && (kTile * Cols * 2 / 16) % kThreads == 0);
  extern __shared__ __align__(128) unsigned char stage[];  // Bulk: one tile, padded rows
  __shared__ unsigned long long cta_issued;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  if (tid == 0) {
    cta_issued = 0;
    atomicAdd(arrived, 1u);
    while (atomicAdd(arrived, 0u) < gridDim.x) {
    }
  }
  __syncthreads();
  const long long t0 = clock64();
  for (int t = 0; t < tiles; ++t) {
    const int tile = blockIdx.x * tiles + t;
    __half* c = out + std::size_t(tile / kTilesAcross) * kTile * kCols + (tile % kTilesAcross) * kTile;
    if constexpr (M == Mode::Lines) {
      // 16 bytes a thread, 16 threads a row.
#pragma unroll
      for (int i = 0; i < kTile * Cols * 2 / 16 / kThreads; ++i) {
        const int idx = i * kThreads + tid, row = idx / (Cols / 8), col = 8 * (idx % (Cols / 8));
        const __half2 v = value(tile * 8192u + idx);
        uint4 q;
        q.x = q.z = *reinterpret_cast<const unsigned*>(&v);
        q.y = q.w = ~q.x & 0xBBFFBBFFu;
        *reinterpret_cast<uint4*>(c + std::size_t(row) * kCols + col) = q;
      }
    } else {
      // A 64 x 128 wgmma accumulator fragment per warpgroup: the pair at register 4j + 2h sits
      // at row 16 * warp + lane / 4 + 8h, column 8j + 2 (lane % 4).
      const int row0 = 64 * (warp / 4) + 16 * (warp % 4) + lane / 4, col0 = 2 * (lane % 4);
      if constexpr (M == Mode::Bulk) {
        if (t > 0) {
          if (tid == 0) sm90::bulk_wait_read_all();  // the previous tile's copies have read it
          __syncthreads();
        }
      }
#pragma unroll
      for (int j = 0; j < Cols / 8; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int row = row0 + 8 * h, col = 8 * j + col0;
          const __half2 v = value(tile * 8192u + row * 64 + col / 2);
          if constexpr (M == Mode::Fragment)
            *reinterpret_cast<__half2*>(c + std::size_t(row) * kCols + col) = v;
          else
            *reinterpret_cast<__half2*>(stage + row * kStagePitch + col * 2) = v;
        }
      if constexpr (M == Mode::Bulk) {
        sm90::fence_proxy_async();
        __syncthreads();
        if (tid == 0) {
          for (int row = 0; row < kTile; ++row)
            sm90::bulk_store(c + std::size_t(row) * kCols, stage + row * kStagePitch, Cols * 2);
          sm90::bulk_commit();
        }
      }
    }
  }
  // The CTA's issue time gathers in shared memory: a global atomic here would be a write the
  // fence below waits for.
  const long long issued = clock64() - t0;
  atomicMax(&cta_issued, static_cast<unsigned long long>(issued));
  if constexpr (M == Mode::Bulk) {
    if (tid == 0) sm90::bulk_wait_all();
  }
  __threadfence();  // this thread's writes have completed
  __syncthreads();
  if (tid == 0) {
    const long long done = clock64() - t0;
    atomicMax(reinterpret_cast<unsigned long long*>(&cycles[0]), cta_issued);
    atomicMax(reinterpret_cast<unsigned long long*>(&cycles[1]), static_cast<unsigned long long>(done));
  }
}

struct Drain {
  double issue_cycles, done_cycles;
};

// Medians over `repeats` launches of the slowest CTA's issue and completion cycles.
template <Mode M, int Cols = kTile>
Drain drain(int sms, int tiles, int repeats, __half* out) {
  int optin = 0;
  OVERLAP_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  // More than half an SM's shared memory: one CTA an SM whatever the tile needs.
  const int request = std::max(kTile * kStagePitch, optin / 2 + 1024);
  OVERLAP_CUDA_CHECK(
      cudaFuncSetAttribute(store_tiles<M, Cols>, cudaFuncAttributeMaxDynamicSharedMemorySize, request));
  DeviceBuffer arrived(sizeof(unsigned));
  auto runs = clock_runs<2>(
      [&](long long* c) {
        OVERLAP_CUDA_CHECK(cudaMemset(arrived.get(), 0, sizeof(unsigned)));
        OVERLAP_CUDA_CHECK(cudaMemset(c, 0, 2 * sizeof(long long)));
        store_tiles<M, Cols><<<sms, kThreads, request>>>(out, tiles, arrived.as<unsigned>(), c);
      },
      2, repeats);
  return {median_of(runs[0]), median_of(runs[1])};
}

}  // namespace

std::vector<MeasuredField> measure_store_drain(int repeats, int compute_capability) {
  if (compute_capability < 90) return {};  // the bulk copies need sm_90
  const int sms = overlap::gpu::current_sm_count();
  int clock_kHz = 0;
  OVERLAP_CUDA_CHECK(cudaDeviceGetAttribute(&clock_kHz, cudaDevAttrClockRate, 0));
  constexpr int kMaxTiles = 4;
  DeviceBuffer out(std::size_t(sms) * kMaxTiles * kTileBytes);
  __half* o = out.as<__half>();
  // Every SM's bytes per SM clock (the clock the GPU runs does not matter).
  auto rate = [&](double cycles, int tiles) { return double(sms) * tiles * kTileBytes / cycles; };
  struct Row {
    const char* field;
    const char* how;
    Drain one, four;
  };
  // In a fixed order, each after the one before has left its own lines in L2.
  std::vector<Row> rows;
  rows.push_back({"fragment_store_bytes_per_clk",
                  "4-byte stores of a wgmma accumulator fragment (a warp instruction: 8 rows x 16 B)",
                  drain<Mode::Fragment>(sms, 1, repeats, o),
                  drain<Mode::Fragment>(sms, kMaxTiles, repeats, o)});
  rows.push_back({"line_store_bytes_per_clk", "16-byte stores of whole rows",
                  drain<Mode::Lines>(sms, 1, repeats, o),
                  drain<Mode::Lines>(sms, kMaxTiles, repeats, o)});
  rows.push_back({"bulk_store_bytes_per_clk", "the fragment written to shared memory, then a bulk copy (TMA) a row",
                  drain<Mode::Bulk>(sms, 1, repeats, o),
                  drain<Mode::Bulk>(sms, kMaxTiles, repeats, o)});
  std::vector<MeasuredField> fields;
  for (const Row& r : rows)
    fields.push_back(
        {r.field, rate(r.four.done_cycles, kMaxTiles),
         fmt::format("measured by overlap calibrate (cuda/calibrate/store_drain.cu): {} CTAs, one an SM, each writing "
                     "{} 128 x 128 fp16 tiles of an L2-resident row-major output 8 KiB a row by {}, until they "
                     "have completed; every SM's bytes over the slowest CTA's clock64 cycles, median of {} "
                     "(issued by {:.0f}, completed by {:.0f} cycles; one tile an SM: {:.0f} / {:.0f} cycles, {:.0f} "
                     "B/clk); boost clock {} MHz",
                     sms, kMaxTiles, r.how, repeats, r.four.issue_cycles, r.four.done_cycles, r.one.issue_cycles,
                     r.one.done_cycles, rate(r.one.done_cycles, 1), clock_kHz / 1000)});
  return fields;
}

namespace {

// One CSV row per mode and tile count for tiles of `Cols` columns.
template <int Cols>
void size_rows(int sms, int repeats, __half* out, std::string& csv) {
  for (int tiles : {1, 2})
    for (const auto& [name, d] : {std::pair{"fragment", drain<Mode::Fragment, Cols>(sms, tiles, repeats, out)},
                                  std::pair{"bulk", drain<Mode::Bulk, Cols>(sms, tiles, repeats, out)}}) {
      const double bytes = double(tiles) * kTile * Cols * 2;
      csv += fmt::format("{},{},{},{:.0f},{:.0f},{:.0f},{:.1f}\n", name, Cols, tiles, bytes, d.issue_cycles,
                         d.done_cycles, sms * bytes / d.done_cycles);
    }
}

}  // namespace

std::string store_sizes_csv(int repeats) {
  const int sms = overlap::gpu::current_sm_count();
  DeviceBuffer out(std::size_t(sms) * 2 * kTileBytes);
  __half* o = out.as<__half>();
  std::string csv = "mode,cols,tiles,bytes_per_sm,issue_cycles,done_cycles,bytes_per_clk\n";
  size_rows<32>(sms, repeats, o, csv);
  size_rows<48>(sms, repeats, o, csv);
  size_rows<64>(sms, repeats, o, csv);
  size_rows<128>(sms, repeats, o, csv);
  return csv;
}

}  // namespace overlap::gpu
