#pragma once
// The ring of shared-memory stages the TMA microbenchmarks stream through (tma_stream.cu and the
// walk_geometry.cu experiment): thread `producer` issues load after load into stage i % stages
// (`issue(i, stage, bar)` starts load i's copies on `bar`, which expects `bytes` a load); thread
// producer + 32 (a second warp) waits for each stage to fill and releases it at once.
#include <cstdint>

#include "common/sm90_ptx.cuh"

namespace overlap::gpu {

constexpr int kMaxRingStages = 12;  // the barriers' room: stages of a ring at most

// Dynamic shared memory for a ring of `ring_bytes` (all its stages) and its barriers.
constexpr int ring_smem_bytes(int ring_bytes) { return 1024 + ring_bytes + 2 * kMaxRingStages * 8; }

template <class Issue>
__device__ void stream_ring(int loads, int stages, int bytes, Issue issue, int producer = 0) {
  using namespace overlap::cuda::sm90;
  extern __shared__ unsigned char smem_raw[];
  unsigned char* ring = aligned_smem(smem_raw);
  auto* full = reinterpret_cast<std::uint64_t*>(ring + stages * bytes);  // 1 KiB multiples: aligned
  std::uint64_t* empty = full + kMaxRingStages;
  if (threadIdx.x == producer) {
    for (int s = 0; s < stages; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], 1);
    }
    mbar_init_fence();
  }
  __syncthreads();
  if (threadIdx.x == producer) {
    for (int i = 0; i < loads; ++i) {
      const int s = i % stages;
      mbar_wait(&empty[s], ((i / stages) & 1) ^ 1);
      mbar_arrive_expect_tx(&full[s], bytes);
      issue(i, ring + s * bytes, &full[s]);
    }
  } else if (threadIdx.x == producer + 32) {
    for (int i = 0; i < loads; ++i) {
      const int s = i % stages;
      mbar_wait(&full[s], (i / stages) & 1);
      mbar_arrive(&empty[s]);
    }
  }
}

}  // namespace overlap::gpu
