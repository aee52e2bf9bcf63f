#pragma once
// The gla backward kernels' tiling and shared-memory layouts (gla_backward_common.cuh says what
// each pass does). Host-includable: the model (sim/models/gla_backward_model.cpp) charges the
// shared memory the kernels allocate from these same definitions.
namespace overlap::cuda::gla_backward_kernel {

constexpr int kChunk = 64;
constexpr int kSub = 16;  // rows per anchoring sub-chunk = one mma row tile

// Passes 1 and 2, the state walks (gla_state_walk_kernel.cuh). A CTA owns 64 rows of the state
// and all V of its columns, so that each chunk's q or k and g columns are read by one CTA, not
// by one per 64 columns of V (at V = 128 that halved the bytes the walk pulls through L2, which
// Nsight Compute had at 80% of its throughput).
constexpr int kWalkRows = 64;  // state rows per CTA
constexpr int kWalkWarps = 4;  // warp w owns rows 16w..16w+15 of the block
constexpr int kWalkThreads = 32 * kWalkWarps;
// Chunks in flight: three where two CTAs an SM still fit (V = 64), else two.
template <int V>
constexpr int kWalkStages = V == 64 ? 3 : 2;

// The walk writes each chunk's state through shared memory and a bulk copy a row at V = 128,
// where per-thread stores of 32 fragments a chunk backed up the load-store unit; at V = 64 (16
// a thread) it stores from registers, which measured faster than waiting for the copies' reads
// (walk 0.138 against 0.188 ms at (4,4096,32,64,64), H100).
template <int V>
constexpr bool kWalkStagedStores = V == 128;

// Per stage: the chunk's q or k (this CTA's columns; decayed in place), do or v (all V), and g
// (then its cumulative sum; read along rows only, so unpadded). Two CTAs fit an SM.
template <int V>
struct WalkLayout {
  static constexpr int kXLd = kWalkRows + 8;
  static constexpr int kYLd = V + 8;
  static constexpr int kBLd = kWalkRows;
  static constexpr int kX = 0;
  static constexpr int kY = kX + kChunk * kXLd * 2;
  static constexpr int kB = kY + kChunk * kYLd * 2;
  static constexpr int kStageBytes = kB + kChunk * kBLd * 4;
  // The state as it stands at a chunk, bf16, staged for the row copies out where the walk stages
  // it (kWalkStagedStores): rows padded by 16 bytes, so that an mma fragment's 8 rows x 4 column
  // pairs hit 32 banks.
  static constexpr int kOutLd = V + 8;
  static constexpr int kOut = kStageBytes * kWalkStages<V>;
  static constexpr int kTotals = kOut + (kWalkStagedStores<V> ? kWalkRows * kOutLd * 2 : 0);  // gate totals
  static constexpr int kLast = kTotals + kWalkThreads * 4;      // b_last per channel
  static constexpr int kBytes = kLast + kWalkRows * 4;
  static_assert(2 * (kBytes + 1024) <= 228 * 1024, "two walk CTAs an SM");
};

// Pass 3, the chunk kernel (gla_chunk_grad_kernel.cuh).
constexpr int kChunkGradWarps = 8;
constexpr int kChunkGradThreads = 32 * kChunkGradWarps;

template <int K, int V>
struct ChunkGradLayout {
  static constexpr int kQkLd = K + 8;
  static constexpr int kVLd = V + 8;
  static constexpr int kBLd = K + 4;
  static constexpr int kCLd = kChunk + 8;
  static constexpr int kQ = 0;
  static constexpr int kK = kQ + kChunk * kQkLd * 2;
  static constexpr int kDo = kK + kChunk * kQkLd * 2;
  static constexpr int kB = kDo + kChunk * kVLd * 2;
  static constexpr int kDS = kB + kChunk * kBLd * 4;
  static constexpr int kA = kDS + K * kVLd * 2;  // A, bf16, zero above the diagonal
  // Needed only until dq and dk are formed; then reused for q dq - k dk (fp32 [C][K]).
  static constexpr int kSn = kA + kChunk * kCLd * 2;
  static constexpr int kV = kSn + K * kVLd * 2;
  static constexpr int kDA = kV + kChunk * kVLd * 2;       // dA, bf16, zero above the diagonal
  static constexpr int kDAdiag = kDA + kChunk * kCLd * 2;  // dA's diagonal 16x16 blocks, fp32
  static constexpr int kReusedEnd = kDAdiag + (kChunk / kSub) * kSub * kSub * 4;
  static constexpr int kDgLd = K + 4;
  static constexpr int kDg = kSn;
  static_assert(kDg + kChunk * kDgLd * 4 <= kReusedEnd, "q dq - k dk must fit where S_n, v and dA were");
  static constexpr int kTotals = kReusedEnd;
  static constexpr int kColSums = kTotals + kChunkGradThreads * 4;  // per dk warp: sum_j k_j * dk^inter_j
  // Single-anchor path: k 2^{b_last - b}, bf16 (the A operand of dv's inter-chunk GEMM).
  static constexpr int kKF = kColSums + (kChunk / kSub) * K * 4;
  static constexpr int kSelfDots = kKF + kChunk * kQkLd * 2;  // <q_t, k_t> in fp32, before decay
  // R_n = rowsum(dS_n * S_n) in kChunkGradThreads / K partial sums per row.
  static constexpr int kStateDots = kSelfDots + kChunk * 4;
  static constexpr int kBytes = kStateDots + kChunkGradThreads * 4;
};

// Pass 3 warp-specialized (gla_chunk_grad_ws_kernel.cuh): the compute warps above and a producer
// warpgroup (threads 256-383). Registers after setmaxnreg: 256 * 240 + 128 * 24 = 64512 of the
// SM's 65536.
constexpr int kChunkGradProducerThreads = 128;
constexpr int kChunkGradProducerStreamThreads = kChunkGradProducerThreads / 2;  // two load streams
constexpr int kChunkGradWsThreads = kChunkGradThreads + kChunkGradProducerThreads;
constexpr int kChunkGradWsComputeRegs = 240;
constexpr int kChunkGradWsProducerRegs = 24;
// __launch_bounds__(384, 1) gives every thread 168 registers at launch (65536 / 384, in steps of
// 8); setmaxnreg.inc waits until the producer's decrease has freed what it asks for, so the
// split must fit that pool or the compute warps wait forever.
static_assert(kChunkGradWsComputeRegs * kChunkGradThreads + kChunkGradWsProducerRegs * kChunkGradProducerThreads <=
                  65536 / kChunkGradWsThreads / 8 * 8 * kChunkGradWsThreads,
              "the setmaxnreg split fits the registers the launch gives the CTA");

// Its mbarriers, after the compute threads' layout: one per input group the phases wait for,
// and three the compute threads free buffers through.
template <int K, int V>
struct ChunkGradWsLayout {
  enum Bar { kFullGates, kFullQK, kFullDoV, kFullStates, kFreeAfterGates, kFreeGK, kFreeAfterDv, kBarCount };
  static constexpr int kBars = (ChunkGradLayout<K, V>::kBytes + 7) / 8 * 8;
  static constexpr int kBytes = kBars + kBarCount * 8;
  static_assert(kBytes <= 227 * 1024, "one CTA an SM");
};

// ChunkGradLayout<K, V>::kBytes for the (K, V) the kernels are built for (64 or 128 each).
constexpr int chunk_grad_smem_bytes(int K, int V) {
  if (K == 64) return V == 64 ? ChunkGradLayout<64, 64>::kBytes : ChunkGradLayout<64, 128>::kBytes;
  return V == 64 ? ChunkGradLayout<128, 64>::kBytes : ChunkGradLayout<128, 128>::kBytes;
}
constexpr int chunk_grad_ws_smem_bytes(int K, int V) {
  if (K == 64) return V == 64 ? ChunkGradWsLayout<64, 64>::kBytes : ChunkGradWsLayout<64, 128>::kBytes;
  return V == 64 ? ChunkGradWsLayout<128, 64>::kBytes : ChunkGradWsLayout<128, 128>::kBytes;
}

}  // namespace overlap::cuda::gla_backward_kernel
