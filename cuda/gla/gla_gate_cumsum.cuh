#pragma once
// The in-chunk cumulative sum of the log-gates every gla kernel of the mma.sync family starts
// a chunk with (gla_chunk_kernel.cuh, gla_chunk_grad_kernel.cuh; the state walk keeps its sums in
// registers instead, gla_state_walk_kernel.cuh).
namespace overlap::cuda::gla_gates {

constexpr float kLog2e = 1.4426950408889634f;

// The barrier among the threads that scan: the whole CTA unless a kernel names another.
struct CtaBarrier {
  __device__ void operator()() const { __syncthreads(); }
};

// g -> log2(e) * inclusive cumulative sum over a chunk's Chunk rows, in place (row stride ld).
// The rows are cut into Threads/K parts; each thread scans one column of one part, then adds
// the totals of the parts above it (through `totals`, Threads floats), meeting at `Barrier`.
template <int K, int Threads, int Chunk, class Barrier = CtaBarrier>
__device__ void cumsum_log2(float* b, int ld, float* totals) {
  constexpr int kParts = Threads / K;
  constexpr int kRows = Chunk / kParts;
  static_assert(kParts * K == Threads && kRows * kParts == Chunk, "one thread per (column, part)");
  const int c = threadIdx.x % K, part = threadIdx.x / K;
  float vals[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) vals[r] = b[(part * kRows + r) * ld + c];
  float acc = 0.f;
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    acc += vals[r] * kLog2e;
    vals[r] = acc;
  }
  if constexpr (kParts > 1) {
    totals[part * K + c] = acc;
    Barrier{}();
    float carry = 0.f;
#pragma unroll
    for (int p = 0; p < kParts - 1; ++p)
      if (p < part) carry += totals[p * K + c];
#pragma unroll
    for (int r = 0; r < kRows; ++r) vals[r] += carry;
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) b[(part * kRows + r) * ld + c] = vals[r];
}

}  // namespace overlap::cuda::gla_gates
