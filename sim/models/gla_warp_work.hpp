#pragma once
// What one warp of our mma.sync gla kernels (forward: cuda/gla/gla_chunk_kernel.cuh; backward:
// cuda/gla/gla_chunk_grad_kernel.cuh, gla_state_grad_kernel.cuh) executes in one
// barrier-separated phase, and the steps that costs an SM. Counts per warp, in warp
// instructions and shared-memory bytes, are written by the models from the kernels' code.
//
// Warp w sits on SM sub-partition w % 4 (one of 4 schedulers, each with a quarter of the SM's
// FP32, SFU and tensor pipes), so a phase lasts as long as its busiest sub-partition; the
// shared-memory pipe is one per SM. With 2 warps per scheduler the dependent chain of a
// decayed operand (LDS -> FADD -> MUFU -> FMUL -> pack) is not hidden, so the pipes a phase
// uses are charged one after the other.
#include <vector>

#include "sim/kernel.hpp"

namespace overlap::sim::gla_work {

constexpr int kSubPartitions = 4;          // SM sub-partitions (schedulers), Volta..Blackwell
constexpr double kPairSmemBytes = 640;     // decayed_pair per warp: LDS.32 x + 2 x LDS.64 gates
constexpr double kPairSmemNoAnchor = 384;  // anchor at the chunk start: no anchor gates read
constexpr double kPairAluInstr = 7;        // unpack 2, subtract 2, multiply 2, pack 1
constexpr double kLdsm4Bytes = 512;        // ldmatrix.x4: 4 8x8 bf16 matrices
constexpr double kLds32Bytes = 128;        // one 32-bit shared load / store per lane
constexpr double kMmaFlops = 2.0 * 16 * 8 * 16;  // one mma.sync m16n8k16

// Work of one warp in one phase, in warp instructions / bytes.
struct WarpWork {
  double exp_pairs = 0;  // decayed_pair calls (2 MUFU.EX2 each)
  double mufu = 0;       // other MUFU.EX2 warp instructions
  double alu = 0;        // FP32/ALU warp instructions
  double mma = 0;        // mma.sync m16n8k16
  double smem = 0;       // shared-memory bytes (loads, stores, ldmatrix)
  void pair(double n, bool anchor) {
    exp_pairs += n;
    alu += n * kPairAluInstr;
    smem += n * (anchor ? kPairSmemBytes : kPairSmemNoAnchor);
  }
};

// Appends the steps of one phase: per-sub-partition pipes charged for the busiest
// sub-partition (x4 = the SM-wide amount that takes as long; `balanced`: the SM total),
// shared memory for the SM total.
void add_phase(std::vector<Step>& to, const std::vector<WarpWork>& warps, bool balanced, TensorPath path,
               const char* what);

}  // namespace overlap::sim::gla_work
