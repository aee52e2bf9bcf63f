#pragma once
// The registry of variant models: for each workload x variant, what it is, whether it can run
// a shape on a GPU (CUTLASS's can_implement), and the kernel launches it consists of.
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "core/shape_args.hpp"
#include "sim/kernel.hpp"
#include "sim/profile.hpp"

namespace overlap::sim {

struct VariantModel {
  std::string workload, name, description;
  std::vector<std::string> aliases;  // e.g. gla "pipelined" for "pipelined_fused"
  // Empty when the variant can run `shape` on `hw`; otherwise the reason, naming the limit.
  std::function<std::string(const HardwareProfile&, const ShapeArgs&)> cannot_run;
  // The launches, in stream order.
  std::function<std::vector<KernelSpec>(const HardwareProfile&, const ShapeArgs&)> build;
  // Launch-form keys the variant takes as "name@key=value,..." (the GPU library's forms, e.g.
  // gla "pingpong_fused@segments=1"): resolve_variant adds them to the shape the model sees.
  std::vector<ShapeKey> forms;
};

const std::vector<VariantModel>& all_variant_models();
// Throws "unknown variant 'x' of workload 'w' (known: ...)" / "unknown workload". A launch form
// ("name@...") is ignored here: resolve_variant checks it.
const VariantModel& find_variant_model(std::string_view workload, std::string_view variant);
// The model of `variant` and the shape it sees: `shape`, plus the keys of a launch form
// ("name@key=value,...", checked against the model's forms).
struct ResolvedVariant {
  const VariantModel& model;
  ShapeArgs shape;
};
ResolvedVariant resolve_variant(std::string_view workload, std::string_view variant, const ShapeArgs& shape);
std::vector<std::string> workload_names();  // gla, gla_backward, linrnn, projchain, dualgemm

// Models of a workload whose variants are the values of an enum, each with a name and a
// description, sharing one cannot_run(variant, hw, shape) and one build(variant, hw, shape).
template <class Variant>
struct EnumVariant {
  Variant variant;
  const char* name;
  const char* description;
};
template <class Variant, class CannotRun, class Build>
std::vector<VariantModel> enum_variant_models(std::string_view workload,
                                              std::initializer_list<EnumVariant<Variant>> variants,
                                              CannotRun cannot_run, Build build) {
  std::vector<VariantModel> out;
  for (const EnumVariant<Variant>& e : variants) {
    VariantModel m;
    m.workload = std::string(workload);
    m.name = e.name;
    m.description = e.description;
    const Variant v = e.variant;
    m.cannot_run = [v, cannot_run](const HardwareProfile& hw, const ShapeArgs& s) { return cannot_run(v, hw, s); };
    m.build = [v, build](const HardwareProfile& hw, const ShapeArgs& s) { return build(v, hw, s); };
    out.push_back(std::move(m));
  }
  return out;
}

// One vector per workload file (sim/models/*_model.cpp).
std::vector<VariantModel> gla_variant_models();
std::vector<VariantModel> gla_backward_variant_models();
// HBM bytes the forward writes more when it saves S_n for gla_backward's saved_states.
double gla_saved_states_bytes(const ShapeArgs& shape);
std::vector<VariantModel> linrnn_variant_models();
std::vector<VariantModel> projchain_variant_models();
std::vector<VariantModel> dualgemm_variant_models();

// A named shape value, or `fallback` when the shape does not carry the key.
std::int64_t shape_value(const ShapeArgs& shape, std::string_view key, std::int64_t fallback);
// A named shape value that must be present and positive.
std::int64_t shape_size(const ShapeArgs& shape, std::string_view workload, std::string_view key);

}  // namespace overlap::sim
