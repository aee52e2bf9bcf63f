#pragma once
// How fast every SM can write a GEMM's output tile, by the three ways our epilogues do it: a
// thread's pairs of its wgmma accumulator fragment stored directly (each warp instruction
// writes 8 rows x 16 bytes, half of every 32-byte sector it touches), whole 128-byte lines (16
// bytes a thread), and bulk copies (TMA) from shared memory. The output is L2-resident, as a
// GEMM's C of a few MB is when its last wave stores it.
#include <string>
#include <vector>

#include "calibrate/calibrate.hpp"

namespace overlap::gpu {

std::vector<MeasuredField> measure_store_drain(int repeats, int compute_capability);

// An experiment beside the calibration (tools/device/experiment.sh store_sizes): the same drain
// with narrower tiles (32, 48, 64, 128 columns of 128 rows) and 1 or 2 of them an SM, by
// fragment pairs and by bulk copy, as CSV (mode, cols, tiles, bytes_per_sm, issue_cycles,
// done_cycles, bytes_per_clk over every SM): does a small output per SM drain at the rate of a
// large one? (sm_90 and later.)
std::string store_sizes_csv(int repeats);

}  // namespace overlap::gpu
