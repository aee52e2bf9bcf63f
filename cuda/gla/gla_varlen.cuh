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
//   offsets[i]      sequence i's first step as the kernels take it (plan_entry): the caller's
//                   offsets where they are valid, disjoint ranges inside [0, T] where not;
//   chunk_seq[c]    the sequence that owns chunk state c, -1 past the total (up to the bound
//                   max_chunks = (T + 63 N) / 64): a chunk-parallel CTA finds its sequence in one
//                   load rather than a search (measured: the binary search's dependent loads
//                   cost the backward's chunk kernel 6%).
struct CUstream_st;

namespace overlap::cuda::gla_varlen {

constexpr int kChunk = 64;

// The bound on the chunk states of N sequences of T steps in all.
inline long long max_chunks(long long T, int num_seqs) { return (T + 63LL * num_seqs) / 64; }

// The plan's bytes: order, chunk_begin, offsets, chunk_seq, each 256-byte aligned.
inline unsigned long long plan_aligned(unsigned long long bytes) { return (bytes + 255) / 256 * 256; }
inline unsigned long long plan_bytes(int num_seqs, long long T) {
  return plan_aligned(4ull * num_seqs) + 2 * plan_aligned(4ull * (num_seqs + 1)) +
         plan_aligned(4ull * static_cast<unsigned long long>(max_chunks(T, num_seqs)));
}

#ifdef __CUDACC__
#define OVERLAP_VARLEN_HD __host__ __device__
#else
#define OVERLAP_VARLEN_HD
#endif

// What the plan's thread i computes for sequence i (gla_varlen_plan.cu; here so that a CPU test
// checks it): its steps [t_begin, t_begin + length), its chunks, its rank in the walk order and
// its first chunk state. The range runs from the largest of offsets 0..i to the largest of
// offsets 0..i+1, each clamped into [0, T]: for valid offsets (0 first, non-decreasing, T last)
// exactly the caller's; for malformed ones still disjoint ranges inside [0, T], so that no
// kernel reads or writes past the tensors or past max_chunks chunk states (their results are
// meaningless; overlap.ops refuses such offsets first).
struct PlanEntry {
  int t_begin, length, chunks, rank, chunk0;
};

OVERLAP_VARLEN_HD inline int plan_clamp(int x, int T) { return x < 0 ? 0 : x > T ? T : x; }

OVERLAP_VARLEN_HD inline PlanEntry plan_entry(const int* cu, int n, int T, int i) {
  // Sequence j's range from the running maximum of the offsets.
  const auto chunks_from = [](int lo, int hi) { return (hi - lo + kChunk - 1) / kChunk; };
  PlanEntry e{};
  int top = 0;  // the largest offset so far, clamped
  for (int j = 0; j <= i; ++j) top = top > plan_clamp(cu[j], T) ? top : plan_clamp(cu[j], T);
  const int next = plan_clamp(cu[i + 1], T);
  e.t_begin = top;
  e.length = (next > top ? next : top) - top;
  e.chunks = chunks_from(0, e.length);
  top = 0;
  for (int j = 0; j < n; ++j) {
    const int lo = top > plan_clamp(cu[j], T) ? top : plan_clamp(cu[j], T);
    const int hi = lo > plan_clamp(cu[j + 1], T) ? lo : plan_clamp(cu[j + 1], T);
    top = lo;
    const int c = chunks_from(lo, hi);
    e.rank += c > e.chunks || (c == e.chunks && j < i);
    if (j < i) e.chunk0 += c;
  }
  return e;
}

struct Plan {
  const int* cu_seqlens = nullptr;  // null: a dense batch
  const int* order = nullptr;
  const int* chunk_begin = nullptr;
  const int* offsets = nullptr;
  const int* chunk_seq = nullptr;
  int num_seqs = 0;
};

// One sequence as a kernel sees it: its first token, its length, its chunk count and its first
// chunk state.
struct Sequence {
  int t_begin, length, chunks, chunk0;
};

#ifdef __CUDACC__
// From the plan's offsets (plan_entry's ranges), not the caller's.
__device__ __forceinline__ Sequence sequence(const Plan& plan, int seq) {
  const int lo = plan.offsets[seq], hi = plan.offsets[seq + 1];
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
