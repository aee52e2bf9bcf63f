#pragma once
// Named integer shape parameters as users write them: "B=4,T=4096,H=32,K=64,V=64".
// A workload declares its keys with defaults; parsing rejects unknown keys and bad values.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace overlap {

struct ShapeKey {
  std::string name;
  std::int64_t default_value;
  std::string description;
  std::int64_t min_value = 1;  // smallest allowed value (0 for on/off flags)
};

class ShapeArgs {
 public:
  ShapeArgs() = default;
  // Parses "K=V,K=V" against `keys`: missing keys take their default; an unknown key, a
  // repeated key, a non-integer or a value below the key's minimum is an overlap::Error.
  static ShapeArgs parse(std::string_view text, const std::vector<ShapeKey>& keys);
  static ShapeArgs defaults(const std::vector<ShapeKey>& keys);

  std::int64_t get(std::string_view key) const;  // throws on an unknown key
  void set(std::string_view key, std::int64_t value);
  bool has(std::string_view key) const;
  // Canonical text in declaration order: "B=4,T=63,H=2,K=64,V=64".
  std::string to_string() const;
  const std::vector<std::pair<std::string, std::int64_t>>& items() const { return values_; }

  bool operator==(const ShapeArgs&) const = default;

 private:
  std::vector<std::pair<std::string, std::int64_t>> values_;
};

}  // namespace overlap
