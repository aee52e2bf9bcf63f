// The launch plan of a variable-length batch (gla_varlen.cuh): one thread per sequence counts,
// over every other sequence, those it follows in the walk order and the chunks before it
// (gla_varlen::plan_entry), then writes its chunks' owner. N^2 comparisons spread over the GPU:
// for thousands of sequences a few microseconds, and no sort or scan to synchronize.
#include <cuda_runtime.h>

#include "gla/gla_varlen.cuh"

namespace overlap::cuda {
namespace {

__global__ void plan_kernel(const int* cu, int n, int T, int* order, int* chunk_begin, int* offsets, int* chunk_seq,
                            int max_chunks) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const gla_varlen::PlanEntry e = gla_varlen::plan_entry(cu, n, T, i);
  order[e.rank] = i;
  chunk_begin[i] = e.chunk0;
  offsets[i] = e.t_begin;
  for (int c = 0; c < e.chunks; ++c) chunk_seq[e.chunk0 + c] = i;
  if (i == n - 1) {
    chunk_begin[n] = e.chunk0 + e.chunks;
    offsets[n] = e.t_begin + e.length;
    for (int c = e.chunk0 + e.chunks; c < max_chunks; ++c) chunk_seq[c] = -1;
  }
}

}  // namespace

int gla_varlen_plan(gla_varlen::Plan* plan, const int* cu_seqlens, int num_seqs, int T, void* plan_bytes,
                    CUstream_st* stream) {
  auto* base = static_cast<unsigned char*>(plan_bytes);
  auto* order = reinterpret_cast<int*>(base);
  base += gla_varlen::plan_aligned(4ull * num_seqs);
  auto* chunk_begin = reinterpret_cast<int*>(base);
  base += gla_varlen::plan_aligned(4ull * (num_seqs + 1));
  auto* offsets = reinterpret_cast<int*>(base);
  base += gla_varlen::plan_aligned(4ull * (num_seqs + 1));
  auto* chunk_seq = reinterpret_cast<int*>(base);
  const int max_chunks = static_cast<int>(gla_varlen::max_chunks(T, num_seqs));
  *plan = {cu_seqlens, order, chunk_begin, offsets, chunk_seq, num_seqs};
  constexpr int kThreads = 256;
  plan_kernel<<<(num_seqs + kThreads - 1) / kThreads, kThreads, 0, reinterpret_cast<cudaStream_t>(stream)>>>(
      cu_seqlens, num_seqs, T, order, chunk_begin, offsets, chunk_seq, max_chunks);
  return cudaGetLastError();
}

}  // namespace overlap::cuda
