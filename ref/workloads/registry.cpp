#include "core/error.hpp"
#include "workloads/workload.hpp"

namespace overlap {

const std::vector<const Workload*>& all_workloads() {
  // Built once, on first use; explicit (no static self-registration) so nothing is lost when
  // linking static libraries.
  static const std::vector<std::unique_ptr<Workload>> owned = [] {
    std::vector<std::unique_ptr<Workload>> v;
    v.push_back(make_gla_workload());
    v.push_back(make_linrnn_workload());
    v.push_back(make_projchain_workload());
    v.push_back(make_dualgemm_workload());
    v.push_back(make_gla_backward_workload());
    return v;
  }();
  static const std::vector<const Workload*> view = [] {
    std::vector<const Workload*> v;
    for (const auto& w : owned) v.push_back(w.get());
    return v;
  }();
  return view;
}

const Workload& find_workload(std::string_view name) {
  std::string known;
  for (const Workload* w : all_workloads()) {
    if (w->name() == name) return *w;
    known += (known.empty() ? "" : ", ") + std::string(w->name());
  }
  fail("unknown workload '{}' (known: {})", name, known);
}

}  // namespace overlap
