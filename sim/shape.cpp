// Shape parsing for predictions: the workload's own keys when its CPU reference is built;
// until then (parallel development) the same keys copied here, so the model never depends on
// code that is not there yet.
#include "core/error.hpp"
#include "sim/api.hpp"
#include "sim/variants.hpp"
#include "workloads/workload.hpp"

namespace overlap::sim {
namespace {

std::vector<ShapeKey> fallback_keys(std::string_view workload) {
  if (workload == "gla" || workload == "gla_backward")
    return {{"B", 8, "batch"}, {"T", 4096, "sequence length"}, {"H", 16, "heads"}, {"K", 128, "key dim"},
            {"V", 128, "value dim"}, {"h0", 0, "initial state input", 0}, {"hT", 0, "final state output", 0}};
  if (workload == "linrnn")
    return {{"B", 4, "batch"}, {"T", 2048, "timesteps"}, {"d", 256, "model width"}, {"dv", 64, "state channels"},
            {"h0", 0, "initial state input", 0}, {"hT", 0, "final state output", 0}};
  if (workload == "projchain")
    return {{"B", 8, "batch"}, {"T", 4096, "timesteps"}, {"d", 2048, "model width"}, {"H", 16, "heads"},
            {"dk", 128, "head dim"}};
  if (workload == "dualgemm")
    return {{"L", 1, "batch"}, {"M", 256, "rows"}, {"N", 4096, "columns"}, {"K", 7168, "reduction"},
            {"fmt", 0, "0 bf16, 1 fp8 e4m3, 2 nvfp4", 0, {{"bf16", 0}, {"fp8", 1}, {"fp8_e4m3", 1}, {"nvfp4", 2}}}};
  std::string names;
  for (const auto& w : workload_names()) names += (names.empty() ? "" : ", ") + w;
  fail("unknown workload '{}' (known: {})", workload, names);
}

}  // namespace

ShapeArgs parse_shape(std::string_view workload, std::string_view text) {
  const Workload* w = nullptr;
  try {
    w = &find_workload(workload);
  } catch (const Error&) {
    w = nullptr;  // not built yet: use the copy of its keys
  }
  if (w) return w->parse_shape(text);
  return ShapeArgs::parse(text, fallback_keys(workload));
}

std::string reference_shape(std::string_view workload) {
  if (workload == "gla" || workload == "gla_backward") return "B=8,T=4096,H=16,K=128,V=128,h0=0,hT=0";
  if (workload == "linrnn") return "B=4,T=2048,d=256,dv=64,h0=0,hT=0";
  if (workload == "projchain") return "B=8,T=4096,d=2048,H=16,dk=128";
  if (workload == "dualgemm") return "M=256,N=4096,K=7168";
  (void)fallback_keys(workload);  // names the unknown workload
  return {};
}

}  // namespace overlap::sim
