// calibrate's tensor stream: every SM streaming wgmma m64n256 (k16 bf16 / k32 fp8) from shared
// memory in batches of 8, each waited for (calibrate/wgmma_stream.cuh). Device events give the
// wall time of the whole grid (the clock the GPU holds under that load included); clock64 gives
// the cycles, so the clock is reported beside the rate.
#include "calibrate/tensor_stream.hpp"

#include <cuda_runtime.h>

#include <fmt/format.h>

#include "calibrate/wgmma_stream.cuh"
#include "runtime/cuda_check.hpp"

namespace overlap::gpu {

std::vector<MeasuredField> measure_tensor_stream(int repeats, int compute_capability) {
  if (compute_capability != 90) return {};  // wgmma: sm_90a only
  const int sms = overlap::gpu::current_sm_count();
  std::vector<MeasuredField> out;
  double clocks[2] = {0, 0};
  for (const bool fp8 : {false, true}) {
    const WgmmaStreamRate s = fp8 ? measure_wgmma_stream<true, 256, 8, 0>(sms, repeats)
                                  : measure_wgmma_stream<false, 256, 8, 0>(sms, repeats);
    out.push_back({fp8 ? "tensor_fp8_stream_TFLOPs" : "tensor_bf16_stream_TFLOPs", s.tflops,
                   fmt::format("measured by overlap calibrate (cuda/calibrate/tensor_stream.cu): {} CTAs, one an SM, "
                               "two warpgroups each streaming wgmma m64n256{} with A and B in shared memory (8 a "
                               "commit and wait), {:.0f} us a launch, FLOPs over the median event time of {} "
                               "launches; {:.0f} FLOPs an SM a clock (clock64), so the SMs ran at {:.0f} MHz",
                               sms, fp8 ? "k32 e4m3" : "k16 bf16", s.us, repeats, s.flops_per_clk, s.clock_MHz)});
    clocks[fp8] = s.clock_MHz;
  }
  // The clock that goes with these rates, for the model's cycle counts beside the wgmma (launches
  // back to back here; overlap validate flushes L2 between them, which cost 1-2% of clock in
  // cuda/calibrate/tensor_clock.cu).
  out.push_back({"tensor_clock_MHz", (clocks[0] + clocks[1]) / 2,
                 fmt::format("measured by overlap calibrate (cuda/calibrate/tensor_stream.cu): the SM clock of the two "
                             "streams above (clock64 cycles over the event time), bf16 {:.0f} MHz, fp8 {:.0f}, the mean",
                             clocks[0], clocks[1])});
  return out;
}

}  // namespace overlap::gpu
