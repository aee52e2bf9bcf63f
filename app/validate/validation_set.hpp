#pragma once
// The shapes `overlap validate` runs per workload: SPEC's and the kernel issues' reference
// shapes plus a sweep of sizes, so errors are seen across the range, not at one point.
#include <string>
#include <vector>

namespace overlap::app {

std::vector<std::string> validation_shapes(const std::string& workload, bool quick);

// The shapes of `workload`'s set that `wanted` names, in the set's order (the whole set when
// `wanted` is empty). Shapes are compared as the workload parses them, so keys may come in any
// order and missing keys take their defaults.
std::vector<std::string> select_validation_shapes(const std::string& workload, bool quick,
                                                  const std::vector<std::string>& wanted);

// Throws, naming it, for the first of `wanted` that is a shape of none of `workloads`' sets, so
// that a run asked for a shape it would not time fails before it starts.
void require_validation_shapes(const std::vector<std::string>& workloads, bool quick,
                               const std::vector<std::string>& wanted);

}  // namespace overlap::app
