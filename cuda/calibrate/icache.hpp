#pragma once
// The cost of running code the SM has not yet fetched: a kernel's first pass through its
// instructions waits on instruction-cache misses, which short kernels (a gla walk of a few
// chunks) feel and long ones amortise. Measured as the extra cycles of a first pass over a
// long straight-line body against a second pass over the same instructions, per KiB of SASS,
// with the L2 flushed before the launch (as the benchmarks do) and every SM running it at once.
#include <vector>

#include "calibrate/calibrate.hpp"

namespace overlap::gpu {

std::vector<MeasuredField> measure_cold_code();

}  // namespace overlap::gpu
