#include "sim/variants.hpp"

#include "core/error.hpp"

namespace overlap::sim {

const std::vector<VariantModel>& all_variant_models() {
  static const std::vector<VariantModel> models = [] {
    std::vector<VariantModel> v;
    for (auto part : {gla_variant_models(), gla_backward_variant_models(), linrnn_variant_models(),
                      projchain_variant_models(), dualgemm_variant_models()})
      v.insert(v.end(), part.begin(), part.end());
    return v;
  }();
  return models;
}

std::vector<std::string> workload_names() { return {"gla", "gla_backward", "linrnn", "projchain", "dualgemm"}; }

const VariantModel& find_variant_model(std::string_view workload, std::string_view variant) {
  variant = variant.substr(0, variant.find('@'));
  std::string known;
  bool workload_known = false;
  for (const auto& m : all_variant_models()) {
    if (m.workload != workload) continue;
    workload_known = true;
    if (m.name == variant) return m;
    for (const auto& a : m.aliases)
      if (a == variant) return m;
    known += (known.empty() ? "" : ", ") + m.name;
  }
  if (!workload_known) {
    std::string names;
    for (const auto& w : workload_names()) names += (names.empty() ? "" : ", ") + w;
    fail("unknown workload '{}' (known: {})", workload, names);
  }
  fail("unknown variant '{}' of workload '{}' (known: {})", variant, workload, known);
}

ResolvedVariant resolve_variant(std::string_view workload, std::string_view variant, const ShapeArgs& shape) {
  const VariantModel& m = find_variant_model(workload, variant);
  const std::size_t at = variant.find('@');
  if (at == std::string_view::npos) return {m, shape};
  const std::string_view form = variant.substr(at + 1);
  OVERLAP_REQUIRE(!m.forms.empty(), "{} variant '{}' takes no launch form ('@{}')", workload, m.name, form);
  ShapeArgs out = shape;
  const ShapeArgs keys = ShapeArgs::parse(form, m.forms);
  for (const auto& [key, value] : keys.items()) out.set(key, value);
  return {m, std::move(out)};
}

std::int64_t shape_value(const ShapeArgs& shape, std::string_view key, std::int64_t fallback) {
  return shape.has(key) ? shape.get(key) : fallback;
}

std::int64_t shape_size(const ShapeArgs& shape, std::string_view workload, std::string_view key) {
  OVERLAP_REQUIRE(shape.has(key), "{}: shape has no key '{}' (have: {})", workload, key, shape.to_string());
  const std::int64_t v = shape.get(key);
  OVERLAP_REQUIRE(v >= 1, "{}: shape key '{}' = {} must be at least 1", workload, key, v);
  return v;
}

}  // namespace overlap::sim
