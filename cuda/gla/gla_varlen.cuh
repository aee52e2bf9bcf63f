#pragma once
// Device side of variable-length batches (gla_varlen.hpp): the launch plan the kernels read and
// the sequence a CTA serves.
//
// The plan, built on the device by gla_varlen_plan (no offsets read back to the host):
//   order[r]        the sequence walked r-th: by descending chunk count, ties by index, so that
//                   the longest walks start first (longest-processing-time order: with the CTAs
//                   issued in index order, no long walk starts once the others are done);
//   chunk_begin[i]  sum_{j < i} ceil(len_j / 64): sequence i's first chunk in the saved states
//                   (chunk_begin[N] is the total);
//   chunk_seq[c]    the sequence that owns chunk state c, -1 past the total (up to the bound
//                   max_chunks = (T + 63 N) / 64): a chunk-parallel CTA finds its sequence in one
//                   load rather than a search (measured: the binary search's dependent loads
//                   cost the backward's chunk kernel 6%).
struct CUstream_st;

namespace overlap::cuda::gla_varlen {

constexpr int kChunk = 64;

// The bound on the chunk states of N sequences of T steps in all.
inline long long max_chunks(long long T, int num_seqs) { return (T + 63LL * num_seqs) / 64; }

// The plan's bytes: order, chunk_begin, chunk_seq, each 256-byte aligned.
inline unsigned long long plan_aligned(unsigned long long bytes) { return (bytes + 255) / 256 * 256; }
inline unsigned long long plan_bytes(int num_seqs, long long T) {
  return plan_aligned(4ull * num_seqs) + plan_aligned(4ull * (num_seqs + 1)) +
         plan_aligned(4ull * static_cast<unsigned long long>(max_chunks(T, num_seqs)));
}

struct Plan {
  const int* cu_seqlens = nullptr;  // null: a dense batch
  const int* order = nullptr;
  const int* chunk_begin = nullptr;
  const int* chunk_seq = nullptr;
  int num_seqs = 0;
};

// One sequence as a kernel sees it: its first token, its length, its chunk count and its first
// chunk state.
struct Sequence {
  int t_begin, length, chunks, chunk0;
};

#ifdef __CUDACC__
// Offsets clamped into [0, T] and made non-decreasing, so that no caller's mistake reads past
// the tensors.
__device__ __forceinline__ Sequence sequence(const Plan& plan, int seq, int T) {
  const int lo = min(max(plan.cu_seqlens[seq], 0), T);
  const int hi = min(max(plan.cu_seqlens[seq + 1], lo), T);
  return {lo, hi - lo, (hi - lo + kChunk - 1) / kChunk, plan.chunk_begin[seq]};
}

#endif

}  // namespace overlap::cuda::gla_varlen

namespace overlap::cuda {
// Writes the plan into `plan_bytes` (gla_varlen_plan_bytes(num_seqs, T) of device memory) and
// points `plan` at it. Returns a cudaError_t as int.
int gla_varlen_plan(gla_varlen::Plan* plan, const int* cu_seqlens, int num_seqs, int T, void* plan_bytes,
                    CUstream_st* stream);
}  // namespace overlap::cuda
