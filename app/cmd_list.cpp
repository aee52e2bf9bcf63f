// `overlap list [--json]`: the workloads, the variants the model knows for each, and the
// built-in hardware profiles.
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "app/commands.hpp"
#include "core/error.hpp"
#include "sim/api.hpp"
#include "sim/variants.hpp"
#include "workloads/workload.hpp"

namespace overlap::app {
namespace {

std::string workload_summary(const std::string& name) {
  try {
    return std::string(find_workload(name).summary());
  } catch (const Error&) {
    return "(CPU reference not built yet)";
  }
}

void list(bool as_json) {
  nlohmann::json j = {{"workloads", nlohmann::json::array()}, {"profiles", nlohmann::json::array()}};
  for (const auto& w : sim::workload_names()) {
    nlohmann::json variants = nlohmann::json::array();
    for (const auto& v : sim::list_variants(w))
      variants.push_back({{"name", v.name}, {"aliases", v.aliases}, {"description", v.description}, {"forms", v.forms}});
    j["workloads"].push_back({{"name", w}, {"summary", workload_summary(w)},
                              {"reference_shape", sim::reference_shape(w)}, {"variants", variants}});
  }
  for (const auto& name : sim::builtin_profile_names()) {
    const sim::HardwareProfile p = sim::load_profile(name);
    j["profiles"].push_back({{"name", p.name}, {"description", p.description}});
  }
  if (as_json) {
    fmt::print("{}\n", j.dump(2));
    return;
  }
  for (const auto& w : j["workloads"]) {
    fmt::print("{}: {}\n  reference shape: {}\n", w["name"].get<std::string>(), w["summary"].get<std::string>(),
               w["reference_shape"].get<std::string>());
    for (const auto& v : w["variants"]) {
      std::string aliases;
      for (const auto& a : v["aliases"]) aliases += " (also: " + a.get<std::string>() + ")";
      for (const auto& f : v["forms"]) aliases += fmt::format(" (form: {}@{}=N)", v["name"].get<std::string>(), f.get<std::string>());
      fmt::print("    {:<34} {}{}\n", v["name"].get<std::string>(), v["description"].get<std::string>(), aliases);
    }
  }
  fmt::print("profiles:\n");
  for (const auto& p : j["profiles"])
    fmt::print("    {:<8} {}\n", p["name"].get<std::string>(), p["description"].get<std::string>());
}

}  // namespace

void register_list_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("list", "List workloads, the variants the model knows, and hardware profiles");
  auto as_json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *as_json, "Print one JSON object");
  cmd->callback([as_json] { list(*as_json); });
}

}  // namespace overlap::app
