#pragma once
// A variant described as data (JSON), predicted without recompiling: tiles, roles, operations
// with size formulas, stages. See sim/README.md ("Schedule files") for the format and
// examples/ for worked files.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/shape_args.hpp"
#include "sim/kernel.hpp"
#include "sim/profile.hpp"

namespace overlap::sim {

struct ScheduleFile {
  std::string origin;       // path, for messages
  std::string workload;     // whose shape keys the formulas use
  std::string name, description;
  nlohmann::ordered_json json;
};

ScheduleFile read_schedule_file(const std::string& path);
ScheduleFile parse_schedule(const std::string& text, const std::string& origin);
// Builds the launches for one shape on one GPU; every formula error names its place.
std::vector<KernelSpec> build_schedule(const ScheduleFile& file, const HardwareProfile& hw, const ShapeArgs& shape);

}  // namespace overlap::sim
