#pragma once
// The fp8 (e4m3) tensor rate as a library GEMM reaches it, measured the way the bf16 rate is:
// a cuBLASLt 8192^3 GEMM on random data, fp32 accumulation, median time. The fp8 rate is not
// simply twice the bf16 one on a real GPU (the datasheet's ratio): at twice the operations per
// clock the SM clock drops further under its power limit.
#include <vector>

#include "calibrate/calibrate.hpp"

namespace overlap::gpu {

// Empty below sm_89 (no fp8 tensor cores).
std::vector<MeasuredField> measure_fp8_tensor_rate(int repeats, int compute_capability);

}  // namespace overlap::gpu
