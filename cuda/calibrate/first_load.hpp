#pragma once
// A workload's cold start: how long its first TMA loads take beyond the launch itself
// (first_load.cu). sm_90 or later only (an empty list before).
#include <vector>

#include "calibrate/calibrate.hpp"

namespace overlap::gpu {

std::vector<MeasuredField> measure_first_load(int repeats, int compute_capability);

}  // namespace overlap::gpu
