#pragma once
// Tiling of every gla kernel variant: the ONE definition both the CUDA kernels (cuda/gla/)
// and the simulator's models (sim/) are built from, so the two cannot drift. Plain C++17,
// includable from host code and from .cu files. The kernels static_assert their shared-memory
// layout against smem_bytes() below.
#include <cstddef>
#include <string_view>

namespace overlap::gla {

// How the tile loop is scheduled (SPEC: sequential, pipelined, pingpong).
enum class Schedule {
  Sequential,  // load -> QK^T -> decay mask -> .V -> accumulate, no explicit overlap
  Pipelined,   // same loop; the next chunk is prefetched into another smem stage (cp.async)
  Pingpong,    // TMA producer warp + mbarrier ring + two consumer warpgroups (wgmma)
};

// How chunk states S_n travel between chunks.
enum class StateCarry {
  Materialized,  // kernel 1 writes every S_n to device memory, kernel 2 reads them (like fla)
  Fused,         // one pass per (b, h, v-block): S stays on chip, chunks walked in order
};

// Pingpong, fused carry (cuda/gla/gla_pingpong_fused.cuh): one CTA per (b, h, v-block), four
// warpgroups -- two gating (the gated operands of a chunk, once, in shared memory; half the
// rows each), state (S in registers, the state update), output (q k^T, q S, A v, TMA store,
// and the TMA loads of the ring).
// Shared memory in order: `stages` stages of the load ring (q, k, g, v of one 64-step chunk; the
// gating warpgroups rewrite them in place: q~ over q, k~ or A over g, kd over k where the
// anchored path needs it), the bf16 state operand
// S_n (K x block_v), the o staging tile (64 x block_v bf16), the anchored path's four 16x16 fp32
// diagonal blocks, the cumulative-sum part totals (two buffers), the per-stage state decay
// (K fp32), q_i . k_i of each row (two halves of K) and path flag, the mbarriers (full, prepared, empty per stage; S ready, S free) and
// 1 KB to align the tiles to the 1024 bytes the 128-byte swizzle needs.
struct PingpongFusedLayout {
  int K, block_v, stages;

  static constexpr int kChunk = 64;
  static constexpr int kWarpgroups = 4;
  static constexpr int kGatingThreads = 256;  // warpgroups 0 and 1
  // Registers per thread after setmaxnreg: 128 x (2 x 120 + 168 + 104) = 65536, the whole file.
  // The state warpgroup holds S (K x block_v fp32: 128 per thread at K = block_v = 128).
  static constexpr int kGatingRegs = 120, kStateRegs = 168, kOutputRegs = 104;
  // A chunk whose channels all decay by at most 2^-96 forms q~ = q 2^b and k~ = k 2^-b against
  // the chunk's start: k~ <= 2^96 k and every masked-out product q~_i k~_j stays finite in fp32.
  // Stronger decay takes the anchored path.
  static constexpr float kMaxFastDecayLog2 = 96.f;
  static constexpr int kSmemLimit = 227 * 1024;  // opt-in shared memory per block, sm_90

  constexpr int k_offset() const { return kChunk * K * 2; }
  constexpr int g_offset() const { return 2 * kChunk * K * 2; }
  constexpr int v_offset() const { return g_offset() + kChunk * K * 4; }
  constexpr int stage_bytes() const { return v_offset() + kChunk * block_v * 2; }
  constexpr int load_bytes() const { return stage_bytes(); }  // every byte of a stage comes by TMA
  constexpr int state_offset() const { return stages * stage_bytes(); }
  constexpr int out_offset() const { return state_offset() + K * block_v * 2; }
  constexpr int diag_offset() const { return out_offset() + kChunk * block_v * 2; }
  constexpr int totals_offset() const { return diag_offset() + 4 * 16 * 16 * 4; }
  constexpr int decay_offset() const { return totals_offset() + 2 * kGatingThreads * 8; }
  constexpr int self_offset() const { return decay_offset() + stages * K * 4; }  // [stages][2][64] fp32
  constexpr int flags_offset() const { return self_offset() + stages * 2 * kChunk * 4; }
  constexpr int barriers_offset() const { return flags_offset() + 16 * ((stages * 4 + 15) / 16); }
  constexpr int bytes() const { return barriers_offset() + (3 * stages + 2) * 8 + 1024; }

  // As many stages as fit, at most 4 (K = block_v = 128: 2; K = 64: 3 or 4).
  static constexpr int max_stages(int K, int block_v) {
    int s = 4;
    while (s > 1 && PingpongFusedLayout{K, block_v, s}.bytes() > kSmemLimit) --s;
    return s;
  }
};

// Pingpong, fused carry: V columns per CTA. A CTA holding a head's whole V (up to 128) reads q,
// k, g once; where the heads are too few to give every SM a CTA (fewer than half the SMs), V
// is split into 64-column blocks, each block's CTA reading the head's q, k, g again (from L2).
constexpr int pingpong_fused_block_v(int V, long long heads, int sms) {
  if (V % 128 != 0) return 64;
  if (heads > 0 && sms > 0 && heads * (V / 128) * 2 < sms) return 64;
  return 128;
}

// Pingpong, fused carry: sequence segments. Where the (b, h, v-block) CTAs are too few to fill
// the GPU, each walk is split along T over `count` CTAs. Segment i outputs chunks
// [bounds[i], bounds[i + 1]); before them it walks chunks [0, bounds[i]) state-only (no q, no
// output GEMMs, no stores: the gated keys and the state update), from h0, so that no CTA waits on
// another. The gating chain binds a chunk's time; a state-only chunk's chain costs about
// kStateOnlyCost of a full one (the model's ratio from the kernel's SASS: the gating regions
// @prefix beside the state wgmma against gating.chunk + gating.fast beside all four GEMMs;
// 0.58 at K = 128, block_v = 64, 0.56-0.61 over the four tilings). Segments are sized so that every CTA
// walks the same cost: with r that ratio, segment i owns a share of the chunks proportional to
// (1 - r)^i (the last segment's state-only prefix is the longest).
struct PingpongFusedSegments {
  static constexpr int kMax = 8;
  static constexpr int kMinChunks = 4;  // chunks per segment, on average, at least
  static constexpr double kStateOnlyCost = 0.58;
  int count = 1;
  int bounds[kMax + 1] = {};  // bounds[0] = 0, bounds[count] = the chunk count

  // As many segments as fit the SMs beside the other CTAs (one wave), at most kMax, none
  // shorter than kMinChunks on average.
  static constexpr int count_for(long long ctas, int sms, int chunks) {
    if (ctas <= 0 || sms <= 0) return 1;
    long long n = sms / ctas;
    if (n > chunks / kMinChunks) n = chunks / kMinChunks;
    if (n > kMax) n = kMax;
    return n < 1 ? 1 : int(n);
  }
  // `count` segments over `chunks` chunks (count at most chunks), balanced for ratio r.
  static constexpr PingpongFusedSegments split(int chunks, int count, double r = kStateOnlyCost) {
    PingpongFusedSegments s;
    s.count = count;
    const double q = 1.0 - r;
    double qn = 1.0;  // q^count
    for (int i = 0; i < count; ++i) qn *= q;
    double qi = 1.0;
    for (int i = 1; i < count; ++i) {
      qi *= q;
      int b = int(chunks * (1.0 - qi) / (1.0 - qn) + 0.5);
      if (b < s.bounds[i - 1] + 1) b = s.bounds[i - 1] + 1;  // every segment owns a chunk
      if (b > chunks - (count - i)) b = chunks - (count - i);
      s.bounds[i] = b;
    }
    s.bounds[count] = chunks;
    return s;
  }
};

struct Tiling {
  Schedule schedule;
  StateCarry carry;
  int chunk;                // C: timesteps per chunk
  int subchunk;             // exponent anchoring length inside a chunk (numerics)
  int block_v;              // columns of V (and of S) per CTA
  int stages;               // shared-memory stages in the load ring (1 = no prefetch)
  int producer_warps;       // warps that only issue loads (0 when not specialized)
  int consumer_warpgroups;  // warpgroups of 4 warps that compute
  int compute_warps;        // warps that compute when not warp-specialized
  int max_regs_per_thread;  // register budget the kernel is compiled for (the materialized
                            // carry's output kernel is capped at 128 where two CTAs fit an SM)
  // Materialized carry only: chunks one CTA of the output kernel walks (its stage ring
  // prefetches across them). The state kernel walks all chunks of one (b, h, v-block).
  int chunks_per_cta;

  constexpr int threads() const {
    return 32 * (producer_warps + 4 * consumer_warpgroups + compute_warps);
  }
  // Rows in shared memory are padded by 16 bytes (bf16) / 16 bytes (fp32) so that the eight
  // row addresses of an ldmatrix fall in distinct banks.
  static constexpr int padded_bf16(int cols) { return cols + 8; }
  static constexpr int padded_f32(int cols) { return cols + 4; }

  // Bytes of one load-ring stage: q, k (C x K bf16), v (C x block_v bf16), g (C x K fp32,
  // turned into its in-chunk cumulative sum in place) and the bf16 copy of the chunk's entry
  // state S_n (K x block_v) that the inter-chunk GEMM reads. The pingpong kernel's stages are
  // filled by TMA, which cannot pad rows: they are dense (128-byte swizzled instead), and only
  // the materialized carry's output pass brings S_n with the chunk.
  constexpr std::size_t stage_bytes(int K) const {
    if (schedule == Schedule::Pingpong && carry == StateCarry::Fused)
      return std::size_t(PingpongFusedLayout{K, block_v, stages}.stage_bytes());
    if (schedule == Schedule::Pingpong)
      return std::size_t(chunk) * K * 2 * 2 + std::size_t(chunk) * block_v * 2 + std::size_t(chunk) * K * 4 +
             (carry == StateCarry::Materialized ? std::size_t(K) * block_v * 2 : 0);
    return std::size_t(chunk) * padded_bf16(K) * 2 * 2 + std::size_t(chunk) * padded_bf16(block_v) * 2 +
           std::size_t(chunk) * padded_f32(K) * 4 + std::size_t(K) * padded_bf16(block_v) * 2;
  }
  // Pingpong, materialized carry (each consumer warpgroup walks its own work unit): what a
  // consumer keeps to itself besides its stages: the decayed keys (C x K bf16, B operand of
  // the intra-chunk GEMM, then A of the state update), one 16x16 fp32 diagonal block per warp
  // and 128 floats for the cumulative sum's part totals.
  constexpr std::size_t consumer_private_bytes(int K) const {
    return std::size_t(chunk) * K * 2 + std::size_t(chunk / 16) * 16 * 16 * 4 + 128 * 4;
  }
  // mbarriers of the pingpong materialized kernels: a full and an empty one per stage.
  constexpr std::size_t barrier_bytes() const { return 8 * 2 * std::size_t(stages); }
  // Bytes of shared memory per CTA for head dims K, V. Sequential / pipelined: the load
  // ring, the decayed keys k_j * e^{b_last - b_j} (C x K bf16, A operand of the state update),
  // one 16x16 fp32 tile per 16-row block for the diagonal blocks of the intra-chunk attention
  // matrix, and one float per thread for the cumulative sum's part totals. Pingpong: the ring,
  // the consumers' buffers, the mbarriers, and 1 KB to align the ring to the 1024 bytes the
  // 128-byte swizzle needs. The fp32 state lives in registers.
  constexpr std::size_t smem_bytes(int K, int V) const {
    (void)V;  // V is split into block_v-wide slices
    if (schedule == Schedule::Pingpong && carry == StateCarry::Fused)
      return std::size_t(PingpongFusedLayout{K, block_v, stages}.bytes());
    if (schedule == Schedule::Pingpong)
      return stage_bytes(K) * stages + consumer_private_bytes(K) * consumer_warpgroups + barrier_bytes() + 1024;
    const std::size_t decayed_keys = std::size_t(chunk) * padded_bf16(K) * 2;
    const std::size_t diag = std::size_t(chunk / 16) * 16 * 16 * 4;
    const std::size_t scan_totals = std::size_t(threads()) * 4;
    return stage_bytes(K) * stages + decayed_keys + diag + scan_totals;
  }
};

// Registers per thread the pingpong materialized kernels' producer warpgroup keeps after
// setmaxnreg.dec (their consumers get max_regs_per_thread): 4 x 32 x 24 + 8 x 32 x 240 = 64512.
inline constexpr int kPingpongProducerRegs = 24;

// The tiling each named variant uses at head dims K, V (K in {64, 128}, V a multiple of 64 on
// Hopper). `heads` (B*H) and `sms` (the GPU's SM count), where known, let the pingpong fused
// carry split V when the heads are too few to fill the GPU (pingpong_fused_block_v).
// Sequential and pipelined: 8 warps. Output warps 0-3 each own 16 rows (one anchoring
// sub-chunk) of the chunk; state warps 4-7 build the diagonal 16x16 blocks of the intra-chunk
// matrix and own K/4 rows of the state each.
constexpr Tiling tiling_for(Schedule schedule, StateCarry carry, int K, int V, long long heads = 0, int sms = 0) {
  const int block_v = 64;
  if (schedule == Schedule::Pingpong && carry == StateCarry::Fused) {
    // Four warpgroups (two gating, state, output; one output thread issues the loads), no
    // warps that only load; max_regs_per_thread is the state warpgroup's budget.
    const int bv = pingpong_fused_block_v(V, heads, sms);
    return {schedule, carry, 64, 16, bv, PingpongFusedLayout::max_stages(K, bv), 0, 4, 0,
            PingpongFusedLayout::kStateRegs, 1};
  }
  switch (schedule) {
    case Schedule::Sequential:
      return {schedule, carry, 64, 16, block_v, 1, 0, 0, 8, 255, 4};
    case Schedule::Pipelined:
      return {schedule, carry, 64, 16, block_v, 2, 0, 0, 8, 255, 4};
    case Schedule::Pingpong:
      // Materialized carry: a producer warpgroup (setmaxnreg works per warpgroup; one thread
      // issues the TMA loads) and two consumer warpgroups; 4 stages at K = 64, 2 at K = 128
      // (227 KB of shared memory). Each consumer walks its own work unit with half the ring,
      // or the whole ring where a CTA has a single unit (pingpong_units_per_cta below).
      return {schedule, carry, 64, 16, block_v, K == 64 ? 4 : 2, 4, 2, 0, 240, 4};
  }
  return {};
}

// Sequential and pipelined on a GPU with less shared memory per CTA than this tiling needs
// (T4: 64 KiB against 67 / 120 KiB at K = V = 64): the tiling a kernel for that GPU would take,
// as CUTLASS keeps per-architecture configurations. The chunk is halved first (down to one
// 16-token anchoring sub-chunk), then block_v; the model says so in the kernel's name. There
// is no kernel of ours for such a GPU: this is the model's. Pingpong needs TMA and wgmma
// (sm_90), so it is never refitted.
constexpr Tiling fit_shared_memory(Tiling t, int K, int V, std::size_t smem_limit) {
  if (t.schedule == Schedule::Pingpong) return t;
  while (t.smem_bytes(K, V) > smem_limit) {
    if (t.chunk > 16) {
      t.chunk /= 2;
      t.subchunk = t.subchunk < t.chunk ? t.subchunk : t.chunk;
    } else if (t.block_v > 16) {
      t.block_v /= 2;
    } else {
      break;
    }
  }
  return t;
}

// Pingpong, materialized carry: work units (state pass: slices; output pass: slice x chunk
// group) per CTA of each of its two kernels, by the unit count and the GPU's SM count. Two
// keep both consumer warpgroups of an SM busy. Where the units are no more than the SMs, one
// unit per CTA spreads them over up to twice as many SMs (consumer 1 idles, consumer 0 takes
// the whole ring); measured faster than two per CTA at (4,1024,32,64,64) and (4,4096,32,64,64)
// (docs/results/gla_h100.md).
constexpr int pingpong_units_per_cta(long long units, int sms) { return units <= sms ? 1 : 2; }

}  // namespace overlap::gla
