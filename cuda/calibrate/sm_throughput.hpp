#pragma once
// Per-SM throughputs the model charges pipes with: FFMA and MUFU.EX2 lanes, shared-memory bytes
// per clock, the share of the tensor rate warp-level mma.sync reaches against wgmma, and the
// shared-load latency while wgmma streams its operands (the last two sm_90 only). SM clocks (clock64), medians.
#include <vector>

#include "calibrate/calibrate.hpp"

namespace overlap::gpu {

std::vector<MeasuredField> measure_sm_throughput(int repeats, int compute_capability);

}  // namespace overlap::gpu
