#pragma once
// The tensor rate a GEMM's mainloop gets, apart from everything else a whole GEMM spends time
// on: every SM streaming wgmma m64n256 from shared memory (two warpgroups, as our GEMMs' 64 x
// 256 dual-product wgmmas), bf16 and fp8 e4m3, with no loads, no epilogue and no partial wave.
// The library-GEMM rates (tensor_*_TFLOPs, cuBLAS 8192^3) fold those in, and a model that
// charges waves, fills and epilogues itself would count them twice.
#include <vector>

#include "calibrate/calibrate.hpp"

namespace overlap::gpu {

// Empty below sm_90 (wgmma).
std::vector<MeasuredField> measure_tensor_stream(int repeats, int compute_capability);

}  // namespace overlap::gpu
