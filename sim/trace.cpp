#include "sim/trace.hpp"

#include <map>

#include <nlohmann/json.hpp>

#include "vectors/safetensors.hpp"

namespace overlap::sim {

std::string chrome_trace_json(const std::vector<TraceEvent>& events, std::string_view title) {
  nlohmann::json out = nlohmann::json::array();
  std::map<std::string, int> tids;
  const auto tid = [&](const std::string& track) {
    const auto [it, inserted] = tids.emplace(track, int(tids.size()) + 1);
    if (inserted)
      out.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", 1}, {"tid", it->second}, {"args", {{"name", track}}}});
    return it->second;
  };
  out.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", 1}, {"args", {{"name", std::string(title) + " - one SM"}}}});
  tid("kernels");
  std::uint64_t id = 0;
  for (const auto& e : events) {
    const int t = tid(e.track);
    const double ts = e.start_ns * 1e-3, dur = (e.end_ns - e.start_ns) * 1e-3;
    if (!e.async) {
      out.push_back({{"ph", "X"}, {"name", e.name}, {"pid", 1}, {"tid", t}, {"ts", ts}, {"dur", dur}});
    } else {  // overlapping ops of one unit: async slices, nested by Perfetto
      ++id;
      out.push_back({{"ph", "b"}, {"cat", e.track}, {"name", e.name}, {"id", id}, {"pid", 1}, {"tid", t}, {"ts", ts}});
      out.push_back({{"ph", "e"}, {"cat", e.track}, {"name", e.name}, {"id", id}, {"pid", 1}, {"tid", t}, {"ts", ts + dur}});
    }
  }
  return nlohmann::json{{"traceEvents", out}, {"displayTimeUnit", "ns"}}.dump();
}

void write_chrome_trace(const std::string& path, const std::vector<TraceEvent>& events, std::string_view title) {
  write_text_atomic(path, chrome_trace_json(events, title));
}

}  // namespace overlap::sim
