#pragma once
// What TMA loads deliver when every SM streams tiles into a ring of shared-memory stages, as
// the warp-specialized GEMMs do: one CTA per SM, one thread issuing 32 KiB tile loads, a
// consumer that only waits for each stage and releases it, for 1 to 6 stages in flight, from
// an L2-resident tensor and from one larger than L2. With one stage a load's whole latency
// under the GPU-wide load shows; with more, how far bytes in flight raise the delivered rate
// until a bandwidth binds. Then a GEMM's operand walk (128-row boxes, 128 bytes of each row, one
// box of each of up to three tensors a stage): from HBM; from L2 for one tensor and for three
// (an SM's rate per tensor and in all); and beside two warpgroups streaming wgmma with
// shared-memory operands. sm_90 or later only (an empty list before).
#include <vector>

#include "calibrate/calibrate.hpp"

namespace overlap::gpu {

std::vector<MeasuredField> measure_tma_stream(int repeats, int compute_capability);

}  // namespace overlap::gpu
