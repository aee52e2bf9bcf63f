#pragma once
// `overlap calibrate`: measures the GPU found with microbenchmarks (warm-up, device events,
// medians, buffers larger than L2) and reports each measured hardware-profile field with the
// method that produced it. The command turns this into a profile file derived from the
// closest built-in profile.
#include <string>
#include <vector>

namespace overlap::gpu {

struct MeasuredField {
  std::string field;   // a hardware-profile field name, e.g. "hbm_bandwidth_GBps"
  double value;
  std::string method;  // how it was measured, recorded as the field's source
};

struct Calibration {
  std::string gpu_name;
  int compute_capability = 0;  // 90 for sm_90
  std::vector<MeasuredField> fields;
};

struct CalibrateOptions {
  int repeats = 10;  // timed repetitions per microbenchmark (median taken)
};

Calibration calibrate_device(const CalibrateOptions& options = {});

}  // namespace overlap::gpu
