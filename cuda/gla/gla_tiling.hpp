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
  // state S_n (K x block_v) that the inter-chunk GEMM reads.
  constexpr std::size_t stage_bytes(int K) const {
    return std::size_t(chunk) * padded_bf16(K) * 2 * 2 + std::size_t(chunk) * padded_bf16(block_v) * 2 +
           std::size_t(chunk) * padded_f32(K) * 4 + std::size_t(K) * padded_bf16(block_v) * 2;
  }
  // Bytes of shared memory per CTA for head dims K, V: the load ring, the decayed keys
  // k_j * e^{b_last - b_j} (C x K bf16, A operand of the state update), one 16x16 fp32 tile
  // per 16-row block for the diagonal blocks of the intra-chunk attention matrix, and one
  // float per thread for the cumulative sum's part totals. The fp32 state lives in registers.
  constexpr std::size_t smem_bytes(int K, int V) const {
    (void)V;  // V is split into block_v-wide CTAs
    const std::size_t decayed_keys = std::size_t(chunk) * padded_bf16(K) * 2;
    const std::size_t diag = std::size_t(chunk / 16) * 16 * 16 * 4;
    const std::size_t scan_totals = std::size_t(threads()) * 4;
    return stage_bytes(K) * stages + decayed_keys + diag + scan_totals;
  }
};

// The tiling each named variant uses at head dims K, V (both in {64, 128} on Hopper).
// Sequential and pipelined: 8 warps. Output warps 0-3 each own 16 rows (one anchoring
// sub-chunk) of the chunk; state warps 4-7 build the diagonal 16x16 blocks of the intra-chunk
// matrix and own K/4 rows of the state each.
constexpr Tiling tiling_for(Schedule schedule, StateCarry carry, int K, int V) {
  (void)K;
  const int block_v = 64;
  (void)V;
  switch (schedule) {
    case Schedule::Sequential:
      return {schedule, carry, 64, 16, block_v, 1, 0, 0, 8, 255, 4};
    case Schedule::Pipelined:
      return {schedule, carry, 64, 16, block_v, 2, 0, 0, 8, 255, 4};
    case Schedule::Pingpong:  // planned; no kernel yet (cuda/gla/gla_forward.hpp refuses it)
      return {schedule, carry, 64, 16, block_v, 2, 1, 2, 0, 240, 4};
  }
  return {};
}

}  // namespace overlap::gla
