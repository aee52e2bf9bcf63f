#pragma once
// Named integer shape parameters as users write them: "B=4,T=4096,H=32,K=64,V=64".
// A workload declares its keys with defaults; parsing rejects unknown keys and bad values.
#include <cstdint>
#include <initializer_list>
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
  // Names a user may write instead of a value ("fmt=nvfp4" for "fmt=2"); the canonical text
  // keeps the number.
  std::vector<std::pair<std::string, std::int64_t>> names = {};
};

class ShapeArgs {
 public:
  ShapeArgs() = default;
  // Parses "K=V,K=V" against `keys`: missing keys take their default; V is an integer or one of
  // the key's names. An unknown key, a repeated key, a value that is neither or a value below
  // the key's minimum is an overlap::Error.
  static ShapeArgs parse(std::string_view text, const std::vector<ShapeKey>& keys);
  static ShapeArgs defaults(const std::vector<ShapeKey>& keys);

  std::int64_t get(std::string_view key) const;  // throws on an unknown key
  // An on/off key: true for 1, false for 0; any other value throws
  // "shape key 'hT' = 2 must be 0 or 1".
  bool flag(std::string_view key) const;
  void set(std::string_view key, std::int64_t value);
  bool has(std::string_view key) const;
  // Canonical text in declaration order: "B=4,T=63,H=2,K=64,V=64".
  std::string to_string() const;
  const std::vector<std::pair<std::string, std::int64_t>>& items() const { return values_; }

  bool operator==(const ShapeArgs&) const = default;

 private:
  std::vector<std::pair<std::string, std::int64_t>> values_;
};

// Sizes of a shape built by hand (ShapeArgs::set or a struct) bypass the key minimums; this
// re-checks them, throwing "<workload>: shape key 'T' = 0 must be at least 1" on the first
// size below 1.
void require_positive(std::string_view workload,
                      std::initializer_list<std::pair<std::string_view, std::int64_t>> sizes);

// True when the product of `factors` (each at least 1) fits an int64: lets a shape check that
// a product it is about to form cannot overflow.
bool product_fits(std::initializer_list<std::int64_t> factors);

}  // namespace overlap
