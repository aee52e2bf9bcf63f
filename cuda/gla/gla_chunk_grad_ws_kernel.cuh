#pragma once
// gla backward, pass 3 warp-specialized (the `saved_states_ws` variant): the pipelined kernel's
// phases (gla_chunk_grad_kernel.cuh) in a persistent CTA an SM, fed by a producer warpgroup.
//
// The pipelined kernel holds one chunk a CTA and, with 217 KB of shared memory at K = V = 128,
// one CTA an SM: its loads overlap only its own first phases, and the SM waits for the next CTA's
// first inputs. Here the 256 compute threads walk chunk after chunk while warpgroup 2 (threads
// 256-383) loads the next chunk's inputs into the one set of buffers as soon as the compute
// threads are done with each:
//   after the gate sums (phase C): q, v and S_n (the space dg's sums used), and, where the chunk
//     took the single-anchor path, g and k (dv reads their decayed copy kF then);
//   after dv (phase D): do, dS_n, and g and k on the anchored path.
// Each input group the phases wait for (g; q, k; do, v; S_n, dS_n) completes an mbarrier once
// the producer threads that load it have seen their copies land; the compute threads free
// buffers through three more, each thread arriving after its own last read.
#include "gla/gla_chunk_grad_kernel.cuh"

namespace overlap::cuda::gla_backward_kernel {

// The compute threads' side of the mbarriers for the chunk they are on (its parity).
template <int K, int V>
struct ProducerLoads {
  using W = ChunkGradWsLayout<K, V>;
  std::uint64_t* bars;
  unsigned parity;
  __device__ void wait(InputGroup g) { sm90::mbar_wait(bars + W::kFullGates + int(g), parity); }
  // Every compute thread arrives after its own last read of the buffers it frees (an arrival
  // releases only its own thread's accesses), so no barrier is needed first.
  __device__ void release_after_gates(bool single_anchor_path) {
    sm90::mbar_arrive(bars + W::kFreeAfterGates);  // q, S_n, v
    if (single_anchor_path) sm90::mbar_arrive(bars + W::kFreeGK);
  }
  __device__ void release_after_dv(bool single_anchor_path) {
    sm90::mbar_arrive(bars + W::kFreeAfterDv);  // do, dS_n
    if (!single_anchor_path) sm90::mbar_arrive(bars + W::kFreeGK);
  }
};

// A producer thread's copies so far have landed, then it arrives: an ordinary mbarrier release,
// which compute-sanitizer's racecheck follows (it does not follow cp.async.mbarrier.arrive).
__device__ __forceinline__ void landed_then_arrive(std::uint64_t* bar) {
  ptx::cp_async_commit();
  ptx::cp_async_wait<0>();
  sm90::mbar_arrive(bar);
}

// The producer warpgroup, as two streams of two warps, each for every chunk this CTA takes
// waiting for the buffers the previous chunk frees, in the order they come free, and loading into
// them; each group the compute warps wait for first (g, then do) has a stream that issues nothing
// else before it:
//   stream 0 (warps 8-9):   g | k | do              after g, k free (mild: dg; else dv), then dv
//   stream 1 (warps 10-11): q, v, S_n | dS_n        after dg, then dv
// Arrivals a chunk: g 64 (stream 0); q, k 128 (both); do, v 128 (both); S_n, dS_n 64 (stream 1).
template <int K, int V>
__device__ void produce_chunk_inputs(const Params& p, long long total, unsigned char* smem, std::uint64_t* bars) {
  using W = ChunkGradWsLayout<K, V>;
  constexpr int kT = kChunkGradProducerStreamThreads;
  const int tid = (threadIdx.x - kChunkGradThreads) % kT;
  const bool first_stream = threadIdx.x - kChunkGradThreads < kT;
  unsigned it = 0;
  for (long long i = blockIdx.x; i < total; i += gridDim.x) {
    ChunkRef c;
    if (!chunk_at(p, i, c)) continue;
    const ChunkSources src = chunk_sources<K, V>(p, slice_of<K>(p, c.b, c.h), c.n);
    const unsigned prev = (it - 1) & 1;  // the previous chunk's release
    if (first_stream) {
      if (it > 0) sm90::mbar_wait(bars + W::kFreeGK, prev);
      load_chunk_input<K, V, kT, ChunkInput::G>(src, smem, tid);
      landed_then_arrive(bars + W::kFullGates);
      load_chunk_input<K, V, kT, ChunkInput::K>(src, smem, tid);
      landed_then_arrive(bars + W::kFullQK);
      if (it > 0) sm90::mbar_wait(bars + W::kFreeAfterDv, prev);
      load_chunk_input<K, V, kT, ChunkInput::Do>(src, smem, tid);
      landed_then_arrive(bars + W::kFullDoV);
    } else {
      if (it > 0) sm90::mbar_wait(bars + W::kFreeAfterGates, prev);
      load_chunk_input<K, V, kT, ChunkInput::Q>(src, smem, tid);
      landed_then_arrive(bars + W::kFullQK);
      load_chunk_input<K, V, kT, ChunkInput::V>(src, smem, tid);
      landed_then_arrive(bars + W::kFullDoV);
      load_chunk_input<K, V, kT, ChunkInput::Sn>(src, smem, tid);
      if (it > 0) sm90::mbar_wait(bars + W::kFreeAfterDv, prev);
      load_chunk_input<K, V, kT, ChunkInput::DS>(src, smem, tid);
      landed_then_arrive(bars + W::kFullStates);
    }
    ++it;
  }
}

// A persistent grid of at most one CTA an SM: CTA x takes chunks x, x + gridDim.x, ... of
// chunk_at's `total`.
template <int K, int V>
__global__ void __launch_bounds__(kChunkGradWsThreads, 1) gla_chunk_grad_ws_kernel(const Params p, long long total) {
  using W = ChunkGradWsLayout<K, V>;
  extern __shared__ __align__(128) unsigned char smem[];
  auto* bars = reinterpret_cast<std::uint64_t*>(smem + W::kBars);
  if (threadIdx.x == 0) {
    // Arrivals a chunk (produce_chunk_inputs): one per thread of the streams that load a group.
    constexpr int kStream = kChunkGradProducerStreamThreads;
    sm90::mbar_init(bars + W::kFullGates, kStream);
    sm90::mbar_init(bars + W::kFullQK, 2 * kStream);
    sm90::mbar_init(bars + W::kFullDoV, 2 * kStream);
    sm90::mbar_init(bars + W::kFullStates, kStream);
    for (int b = W::kFreeAfterGates; b <= W::kFreeAfterDv; ++b) sm90::mbar_init(bars + b, kChunkGradThreads);
    sm90::mbar_init_fence();
  }
  __syncthreads();
  if (threadIdx.x >= kChunkGradThreads) {
    sm90::setmaxnreg_dec<kChunkGradWsProducerRegs>();
    produce_chunk_inputs<K, V>(p, total, smem, bars);
    return;
  }
  sm90::setmaxnreg_inc<kChunkGradWsComputeRegs>();
  ProducerLoads<K, V> in{bars, 0};
  for (long long i = blockIdx.x; i < total; i += gridDim.x) {
    ChunkRef c;
    if (!chunk_at(p, i, c)) continue;
    chunk_grads<K, V>(p, slice_of<K>(p, c.b, c.h), smem, c.n, in);
    in.parity ^= 1;
  }
}

}  // namespace overlap::cuda::gla_backward_kernel
