#pragma once
// Chrome trace-event JSON (opens in Perfetto / chrome://tracing): one track per unit and per
// role of the simulated SM, plus a track of the kernel launches.
#include <string>
#include <string_view>
#include <vector>

#include "sim/engine.hpp"

namespace overlap::sim {

std::string chrome_trace_json(const std::vector<TraceEvent>& events, std::string_view title);
// Written atomically.
void write_chrome_trace(const std::string& path, const std::vector<TraceEvent>& events, std::string_view title);

}  // namespace overlap::sim
