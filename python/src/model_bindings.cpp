// The model's entry points for python/overlap/model.py. Results cross as JSON text (the same
// Prediction::to_json / sweep_json the command line prints, plus the command line's table as
// "text"), so the Python side never re-derives a number or a sentence the C++ computed.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "sim/api.hpp"
#include "sim/sweep.hpp"
#include "sim/tune.hpp"
#include "workloads/workload.hpp"

namespace nb = nanobind;

namespace overlap::python {
namespace {

std::string predict_json(const std::string& workload, const std::string& variant, const std::string& shape,
                         const std::string& hw, const std::string& trace_path) {
  nb::gil_scoped_release release;
  sim::PredictOptions options;
  options.trace_path = trace_path;
  const sim::Prediction p =
      sim::predict(sim::load_profile(hw), workload, variant, sim::parse_shape(workload, shape), options);
  nlohmann::json j = p.to_json();
  j["text"] = sim::format_prediction(p);
  return j.dump();
}

std::string compare_json(const std::string& workload, const std::string& a, const std::string& b,
                         const std::string& shape, const std::string& hw) {
  nb::gil_scoped_release release;
  const sim::HardwareProfile profile = sim::load_profile(hw);
  const ShapeArgs args = sim::parse_shape(workload, shape);
  const sim::Comparison c =
      sim::compare(sim::predict(profile, workload, a, args), sim::predict(profile, workload, b, args));
  return nlohmann::json{{"a", c.a.to_json()}, {"b", c.b.to_json()}, {"speedup", c.speedup}, {"reason", c.reason},
                        {"text", sim::format_comparison(c)}}
      .dump();
}

// hw and variants as the command line takes them ("all" or a comma list); one sweep axis per
// entry of `sweeps` (KEY=FROM:TO:xF, KEY=FROM:TO:+S, KEY=A/B/C).
std::string sweep_json(const std::string& workload, const std::string& variants, const std::string& shape,
                       const std::vector<std::string>& sweeps, const std::string& hw) {
  nb::gil_scoped_release release;
  std::vector<sim::SweepAxis> axes;
  for (const auto& s : sweeps) axes.push_back(sim::parse_sweep_axis(s));
  const auto configs = sim::expand_sweep(sim::profile_list(hw), sim::variant_list(workload, variants), shape, axes);
  return sim::sweep_json(sim::run_sweep(workload, configs)).dump();
}

std::string tune_json(const std::string& workload, const std::string& shape, const std::string& hw) {
  nb::gil_scoped_release release;
  const sim::TuneResult t = sim::tune(sim::load_profile(hw), workload, sim::parse_shape(workload, shape));
  nlohmann::json j = sim::tune_json(t);
  j["text"] = sim::format_tune(t);
  return j.dump();
}

std::string variants_json(const std::string& workload) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& v : sim::list_variants(workload))
    out.push_back({{"workload", v.workload}, {"name", v.name}, {"description", v.description}, {"aliases", v.aliases}});
  return out.dump();
}

}  // namespace

void bind_model(nb::module_& m) {
  m.def("predict_json", &predict_json, nb::arg("workload"), nb::arg("variant"), nb::arg("shape"), nb::arg("hw"),
        nb::arg("trace_path") = "", "Prediction::to_json() of one variant; writes a Chrome trace when trace_path is set");
  m.def("compare_json", &compare_json, nb::arg("workload"), nb::arg("a"), nb::arg("b"), nb::arg("shape"),
        nb::arg("hw"));
  m.def("sweep_json", &sweep_json, nb::arg("workload"), nb::arg("variants"), nb::arg("shape"), nb::arg("sweeps"),
        nb::arg("hw"));
  m.def("tune_json", &tune_json, nb::arg("workload"), nb::arg("shape"), nb::arg("hw"));
  m.def("variants_json", &variants_json, nb::arg("workload") = "");
  m.def("workload_names", [] {
    std::vector<std::string> out;
    for (const auto* w : all_workloads()) out.emplace_back(w->name());
    return out;
  });
  m.def("canonical_shape", [](const std::string& workload, const std::string& shape) {
    return sim::parse_shape(workload, shape).to_string();
  });
  m.def("reference_shape", [](const std::string& workload) { return sim::reference_shape(workload); });
  m.def("cannot_run", [](const std::string& workload, const std::string& variant, const std::string& shape,
                         const std::string& hw) {
    return sim::cannot_run(sim::load_profile(hw), workload, variant, sim::parse_shape(workload, shape));
  });
  m.def("builtin_profile_names", &sim::builtin_profile_names);
  m.def("profile_json", [](const std::string& name_or_path) { return sim::load_profile(name_or_path).to_json().dump(); },
        nb::arg("name_or_path"), "A built-in profile name or a profile file, as JSON (base resolved, every field)");
  m.def("parse_profile_json", [](const std::string& text, const std::string& origin) {
    return sim::parse_profile(text, origin).to_json().dump();
  }, nb::arg("text"), nb::arg("origin"), "Profile JSON text checked as a profile file is; errors name `origin`");
}

}  // namespace overlap::python
