#pragma once
// Dependent-chain latencies of the SM instructions the model's in-order issue simulation of a
// kernel's SASS needs (tools/sass_mix.py): FFMA, MUFU.EX2, LDS, SHFL, the one-way hand-off of an
// mbarrier between two warps, a bar.sync every warp reaches at once, and what a fence.proxy.async
// adds after a shared store. Cycles of the SM clock (clock64), medians.
#include <vector>

#include "calibrate/calibrate.hpp"

namespace overlap::gpu {

std::vector<MeasuredField> measure_sm_latencies();

}  // namespace overlap::gpu
