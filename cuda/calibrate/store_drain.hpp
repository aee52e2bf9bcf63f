#pragma once
// How fast every SM can write a GEMM's output tile, by the three ways our epilogues do it: a
// thread's pairs of its wgmma accumulator fragment stored directly (each warp instruction
// writes 8 rows x 16 bytes, half of every 32-byte sector it touches), whole 128-byte lines (16
// bytes a thread), and bulk copies (TMA) from shared memory. The output is L2-resident, as a
// GEMM's C of a few MB is when its last wave stores it.
#include <vector>

#include "calibrate/calibrate.hpp"

namespace overlap::gpu {

std::vector<MeasuredField> measure_store_drain(int repeats, int compute_capability);

}  // namespace overlap::gpu
