#include "app/validate/validation_set.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "workloads/workload.hpp"

namespace overlap::app {

std::vector<std::string> validation_shapes(const std::string& workload, bool quick) {
  if (workload == "gla") {
    if (quick) return {"B=2,T=1000,H=4,K=64,V=64", "B=4,T=1024,H=32,K=64,V=64"};
    return {
        // issue 4's benchmark shapes
        "B=4,T=1024,H=32,K=64,V=64", "B=4,T=4096,H=32,K=64,V=64", "B=8,T=4096,H=16,K=128,V=128",
        "B=2,T=16384,H=16,K=128,V=128",
        // a sweep of length and head dimension
        "B=4,T=512,H=32,K=64,V=64", "B=4,T=2048,H=32,K=64,V=64", "B=4,T=8192,H=32,K=64,V=64",
        "B=4,T=2048,H=16,K=128,V=128", "B=1,T=4096,H=8,K=64,V=64"};
  }
  if (workload == "gla_backward") {
    if (quick) return {"B=2,T=1000,H=4,K=64,V=64"};
    // issue 18's benchmark shapes, the forward's short and long ones, and a mid-size K=128
    return {"B=8,T=4096,H=16,K=128,V=128", "B=4,T=4096,H=32,K=64,V=64", "B=4,T=1024,H=32,K=64,V=64",
            "B=2,T=16384,H=16,K=128,V=128", "B=4,T=2048,H=16,K=128,V=128"};
  }
  if (workload == "linrnn") {
    if (quick) return {"B=4,T=2048,d=256,dv=64"};
    return {// issue 6's goal shapes: SPEC's reference shape and the large projection
            "B=4,T=2048,d=256,dv=64", "B=8,T=4096,d=1024,dv=1024",
            // SPEC's batch-16 sweep over length
            "B=16,T=512,d=256,dv=64", "B=16,T=1024,d=256,dv=64", "B=16,T=2048,d=256,dv=64",
            "B=16,T=4096,d=256,dv=64"};
  }
  if (workload == "projchain") {
    if (quick) return {"B=4,T=512,d=2048,H=16,dk=128"};
    return {// SPEC's reference shape, then the B=4 sweep where the fusion crossover lies
            "B=8,T=4096,d=2048,H=16,dk=128", "B=4,T=512,d=2048,H=16,dk=128", "B=4,T=1024,d=2048,H=16,dk=128",
            "B=4,T=2048,d=2048,H=16,dk=128", "B=4,T=4096,d=2048,H=16,dk=128"};
  }
  if (workload == "dualgemm") {
    if (quick) return {"M=256,N=4096,K=7168,fmt=1"};
    // SPEC's benchmark shapes in both Hopper formats: every variant at each is overlap tune's grid.
    std::vector<std::string> out;
    for (const char* fmt : {",fmt=0", ",fmt=1"})
      for (const char* mnk : {"M=256,N=4096,K=7168", "M=512,N=4096,K=7168", "M=256,N=3072,K=4096", "M=512,N=3072,K=7168"})
        out.push_back(std::string(mnk) + fmt);
    return out;
  }
  return {};
}

namespace {

// `text` as `workload` writes it, or nothing where the workload does not parse it (another
// workload's keys, a bad value).
std::optional<std::string> canonical(const Workload& workload, const std::string& text) {
  try {
    return workload.parse_shape(text).to_string();
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace

std::vector<std::string> select_validation_shapes(const std::string& workload, bool quick,
                                                  const std::vector<std::string>& wanted) {
  std::vector<std::string> shapes = validation_shapes(workload, quick);
  if (wanted.empty()) return shapes;
  const Workload& w = find_workload(workload);
  std::vector<std::string> wanted_canonical;
  for (const auto& text : wanted)
    if (auto c = canonical(w, text)) wanted_canonical.push_back(*c);
  std::erase_if(shapes, [&](const std::string& s) {
    const std::string c = canonical(w, s).value_or("");
    return std::find(wanted_canonical.begin(), wanted_canonical.end(), c) == wanted_canonical.end();
  });
  return shapes;
}

void require_validation_shapes(const std::vector<std::string>& workloads, bool quick,
                               const std::vector<std::string>& wanted) {
  for (const auto& text : wanted) {
    const bool found = std::any_of(workloads.begin(), workloads.end(), [&](const std::string& workload) {
      return !select_validation_shapes(workload, quick, {text}).empty();
    });
    OVERLAP_REQUIRE(found, "--shapes '{}' is not a shape of the {}validation set of {}", text, quick ? "quick " : "",
                    fmt::join(workloads, ", "));
  }
}

}  // namespace overlap::app
