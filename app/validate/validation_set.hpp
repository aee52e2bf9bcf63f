#pragma once
// The shapes `overlap validate` runs per workload: SPEC's and the kernel issues' reference
// shapes plus a sweep of sizes, so errors are seen across the range, not at one point.
#include <string>
#include <vector>

namespace overlap::app {

std::vector<std::string> validation_shapes(const std::string& workload, bool quick);

}  // namespace overlap::app
