#pragma once
// How fast a scheduler issues code that does not stay in its instruction cache: our mma.sync
// gla kernels unroll a chunk into tens of KiB of SASS, run by two warps of different roles on
// each scheduler. Measured as the issue rate of straight-line bodies of growing size (the same
// instruction mix each time, so the pipes allow the same rate), the code fetched once already.
#include <vector>

#include "calibrate/calibrate.hpp"

namespace overlap::gpu {

std::vector<MeasuredField> measure_fetch_rate();

}  // namespace overlap::gpu
