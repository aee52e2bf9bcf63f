#pragma once
// The ring of shared-memory stages the TMA microbenchmarks stream through (tma_stream.cu and the
// walk_geometry.cu experiment): one thread (or one a warp of several producer warps, in turn)
// issues load after load into stage i % stages (`issue(i, stage, bar)` starts load i's copies on
// `bar`, which expects `bytes` a load); one thread of the next warp waits for each stage to fill
// and releases it, at once or, with `hold_cycles`, after spinning that many SM clocks (standing
// in for the MMAs that read it). `trace` (CTA 0 only, kTraceStamps clock64 stamps a load): the
// producer's before its wait for the stage, after it, after the expect_tx and after issuing the
// load; the consumer's when it has seen the load land.
#include <cstdint>

#include "common/sm90_ptx.cuh"

namespace overlap::gpu {

constexpr int kMaxRingStages = 12;  // the barriers' room: stages of a ring at most
constexpr int kTraceStamps = 5;

// Dynamic shared memory for a ring of `ring_bytes` (all its stages) and its barriers.
constexpr int ring_smem_bytes(int ring_bytes) { return 1024 + ring_bytes + 2 * kMaxRingStages * 8; }

// A load's place in a walk, advanced load by load without dividing. The ring's producer is one
// thread issuing every load, so its index arithmetic is on the critical path: a 64-bit modulo a
// load (a software routine) held an earlier version of these microbenchmarks to one stage per
// ~1100 SM clocks, whatever the stage's boxes, bytes or ring depth.
struct WrapCounter {
  int value, step, period;
  __device__ WrapCounter(long long start, long long step_by, int period_of)
      : value(int(start % period_of)), step(int(step_by % period_of)), period(period_of) {}
  __device__ void advance() {
    value += step;
    if (value >= period) value -= period;
  }
};

// A GEMM operand walk: load L reads box L mod boxes_per_row of row block
// (first_block + (L div boxes_per_row) x block_step) mod blocks.
struct WalkCursor {
  WrapCounter box, block;
  __device__ WalkCursor(long long load, int boxes_per_row, int first_block, int block_step, int blocks)
      : box(load, 1, boxes_per_row),
        block(first_block + (load / boxes_per_row) % blocks * static_cast<long long>(block_step), block_step, blocks) {}
  __device__ void advance() {
    box.advance();
    if (box.value == 0) block.advance();
  }
};

// How a ring runs (stream_ring): its first producer thread, the producer warps, how long each
// stage is held, how the waits wait, and the optional trace.
struct RingOptions {
  int producer = 0;   // lane 0 of the first producer warp; the consumer is lane 0 of the warp after the producers
  // Warps issuing loads in turn (load i: warp i mod producers); at most `stages`, so that no
  // producer waits on a stage two phases ahead of its barrier (a parity wait would pass).
  int producers = 1;
  int hold_cycles = 0;
  bool spin = false;  // poll test_wait rather than try_wait (which may suspend the thread)
  long long* trace = nullptr;
  // Arrivals that free a stage, and whether stream_ring's own consumer thread makes them. A
  // caller whose threads consume the ring themselves (the threads before `producer`) passes
  // false and waits and releases through ring_view's barriers after stream_ring's setup.
  int consumer_arrivals = 1;
  bool own_consumer = true;
  // Bytes a stage's full barrier expects (-1: the stage's): 0 with an issue that loads nothing
  // runs the ring's barriers alone.
  int expect_bytes = -1;
};

// A ring's stages and its barriers (full: a stage landed; empty: a stage released) in the
// dynamic shared memory that stream_ring lays them out in.
struct RingView {
  unsigned char* ring;
  std::uint64_t* full;
  std::uint64_t* empty;
};
__device__ inline RingView ring_view(int stages, int bytes) {
  extern __shared__ unsigned char smem_raw[];
  unsigned char* ring = overlap::cuda::sm90::aligned_smem(smem_raw);
  auto* full = reinterpret_cast<std::uint64_t*>(ring + stages * bytes);  // 1 KiB multiples: aligned
  return {ring, full, full + kMaxRingStages};
}

// Load i goes to stage i mod stages; `issue(i, dst, bar)` starts its copies, and is called with
// dst = nullptr on the other producers (to advance any cursor it keeps) so that each producer
// sees every load in order. Stage and phase are counted, not divided, as a kernel's
// compile-time ring would be.
template <class Issue>
__device__ void stream_ring(int loads, int stages, int bytes, Issue issue, const RingOptions& o = {}) {
  using namespace overlap::cuda::sm90;
  const RingView v = ring_view(stages, bytes);
  unsigned char* ring = v.ring;
  std::uint64_t* full = v.full;
  std::uint64_t* empty = v.empty;
  const int t = int(threadIdx.x) - o.producer;
  if (t == 0) {
    for (int s = 0; s < stages; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], o.consumer_arrivals);
    }
    mbar_init_fence();
  }
  __syncthreads();
  const auto wait = [&o](std::uint64_t* bar, unsigned parity) {
    if (o.spin) {
      while (!mbar_test(bar, parity)) {
      }
    } else {
      mbar_wait(bar, parity);
    }
  };
  const bool traced = o.trace != nullptr && blockIdx.x == 0;
  if (o.producers < 1 || o.producers > stages) __trap();  // see RingOptions::producers
  if (t >= 0 && t % 32 == 0 && t / 32 < o.producers) {
    int turn = t / 32;  // loads until this warp's next (0: this one)
    int s = 0;
    unsigned phase = 0;
    for (int i = 0; i < loads; ++i) {
      const bool mine = turn == 0;
      turn = mine ? o.producers - 1 : turn - 1;
      if (mine) {
        long long* stamp = traced ? o.trace + kTraceStamps * i : nullptr;
        if (traced) stamp[0] = clock64();
        wait(&empty[s], phase ^ 1);
        if (traced) stamp[1] = clock64();
        mbar_arrive_expect_tx(&full[s], o.expect_bytes >= 0 ? o.expect_bytes : bytes);
        if (traced) stamp[2] = clock64();
        issue(i, ring + s * bytes, &full[s]);
        if (traced) stamp[3] = clock64();
      } else {
        issue(i, nullptr, nullptr);
      }
      if (++s == stages) {
        s = 0;
        phase ^= 1;
      }
    }
  } else if (o.own_consumer && t == 32 * o.producers) {
    int s = 0;
    unsigned phase = 0;
    for (int i = 0; i < loads; ++i) {
      wait(&full[s], phase);
      if (traced) o.trace[kTraceStamps * i + 4] = clock64();
      if (o.hold_cycles > 0) {
        const long long until = clock64() + o.hold_cycles;
        while (clock64() < until) {
        }
      }
      mbar_arrive(&empty[s]);
      if (++s == stages) {
        s = 0;
        phase ^= 1;
      }
    }
  }
}

}  // namespace overlap::gpu
