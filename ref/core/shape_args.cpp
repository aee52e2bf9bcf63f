#include "core/shape_args.hpp"

#include <algorithm>
#include <charconv>
#include <limits>

#include "core/error.hpp"

namespace overlap {
namespace {
std::string known_keys(const std::vector<ShapeKey>& keys) {
  std::string s;
  for (const auto& k : keys) s += (s.empty() ? "" : ", ") + k.name;
  return s;
}
std::string value_names(const ShapeKey& key) {
  std::string s;
  for (const auto& [name, value] : key.names) s += (s.empty() ? "" : ", ") + name + " (" + std::to_string(value) + ")";
  return s;
}
std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}
}  // namespace

ShapeArgs ShapeArgs::defaults(const std::vector<ShapeKey>& keys) {
  ShapeArgs args;
  for (const auto& k : keys) args.values_.emplace_back(k.name, k.default_value);
  return args;
}

ShapeArgs ShapeArgs::parse(std::string_view text, const std::vector<ShapeKey>& keys) {
  ShapeArgs args = defaults(keys);
  std::vector<std::string> seen;
  text = trim(text);
  while (!text.empty()) {
    const auto comma = text.find(',');
    const std::string_view item = trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    if (item.empty()) continue;
    const auto eq = item.find('=');
    OVERLAP_REQUIRE(eq != std::string_view::npos, "shape item '{}' is not KEY=VALUE", item);
    const std::string key(trim(item.substr(0, eq)));
    const std::string_view value_text = trim(item.substr(eq + 1));
    const ShapeKey* spec = nullptr;
    for (const auto& k : keys)
      if (k.name == key) spec = &k;
    OVERLAP_REQUIRE(spec, "unknown shape key '{}' (known: {})", key, known_keys(keys));
    for (const auto& s : seen) OVERLAP_REQUIRE(s != key, "shape key '{}' given twice", key);
    seen.push_back(key);
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(value_text.data(), value_text.data() + value_text.size(), value);
    if (ec != std::errc() || end != value_text.data() + value_text.size()) {
      const auto named = std::find_if(spec->names.begin(), spec->names.end(),
                                      [&](const auto& n) { return n.first == value_text; });
      OVERLAP_REQUIRE(named != spec->names.end(), "shape key '{}' has value '{}', expected an integer{}", key,
                      value_text, spec->names.empty() ? "" : " or one of " + value_names(*spec));
      value = named->second;
    }
    OVERLAP_REQUIRE(value >= spec->min_value, "shape key '{}' = {} is below its minimum {}", key,
                    value, spec->min_value);
    args.set(key, value);
  }
  return args;
}

std::int64_t ShapeArgs::get(std::string_view key) const {
  for (const auto& [k, v] : values_)
    if (k == key) return v;
  fail("shape has no key '{}' (have: {})", key, to_string());
}

bool ShapeArgs::flag(std::string_view key) const {
  const std::int64_t value = get(key);
  OVERLAP_REQUIRE(value == 0 || value == 1, "shape key '{}' = {} must be 0 or 1", key, value);
  return value == 1;
}

bool ShapeArgs::has(std::string_view key) const {
  for (const auto& [k, v] : values_)
    if (k == key) return true;
  return false;
}

void ShapeArgs::set(std::string_view key, std::int64_t value) {
  for (auto& [k, v] : values_)
    if (k == key) {
      v = value;
      return;
    }
  values_.emplace_back(std::string(key), value);
}

std::string ShapeArgs::to_string() const {
  std::string s;
  for (const auto& [k, v] : values_) s += (s.empty() ? "" : ",") + k + "=" + std::to_string(v);
  return s;
}

void require_positive(std::string_view workload,
                      std::initializer_list<std::pair<std::string_view, std::int64_t>> sizes) {
  for (const auto& [key, value] : sizes)
    OVERLAP_REQUIRE(value >= 1, "{}: shape key '{}' = {} must be at least 1", workload, key, value);
}

bool product_fits(std::initializer_list<std::int64_t> factors) {
  std::int64_t product = 1;
  for (std::int64_t f : factors) {
    if (f > 0 && product > std::numeric_limits<std::int64_t>::max() / f) return false;
    product *= f;
  }
  return true;
}

}  // namespace overlap
