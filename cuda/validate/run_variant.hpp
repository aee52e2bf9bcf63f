#pragma once
// One variant on one vector set: upload, poison the outputs, run, check against the expected
// outputs; then, only if the check passed, time it over several input sets.
#include <string>
#include <vector>

#include "runtime/timing.hpp"
#include "validate/gpu_variant.hpp"
#include "vectors/vectors.hpp"

namespace overlap::gpu {

struct VariantRun {
  std::vector<OutputCheck> checks;
  bool passed = false;
  TimingResult timing;  // empty unless passed and timing was requested
};

// Uploads a host TensorMap as device tensors.
DeviceTensors upload(const TensorMap& host);

// Runs `variant` on `vectors`; if it passes and `timing_sets` is not empty, times it with
// each of those input sets in rotation (the checked set is usually one of them).
VariantRun run_variant(const GpuVariant& variant, const VectorSet& vectors,
                       const std::vector<TensorMap>& timing_sets, const TimingOptions& options);

}  // namespace overlap::gpu
