#include "gla/shape.hpp"

#include <cmath>

#include "core/error.hpp"

namespace overlap::gla {

const std::vector<ShapeKey>& GlaShape::keys() {
  // Defaults are a small test shape whose T is not a multiple of the chunk (64).
  static const std::vector<ShapeKey> keys = {
      {"B", 2, "batch size"},
      {"T", 63, "sequence length"},
      {"H", 2, "number of heads"},
      {"K", 64, "query/key head dimension"},
      {"V", 64, "value head dimension"},
      {"h0", 1, "1: an initial state h0 [B,H,K,V] is an input", 0},
      {"hT", 1, "1: the final state hT [B,H,K,V] is an output", 0},
  };
  return keys;
}

GlaShape GlaShape::from_args(const ShapeArgs& args) {
  // ShapeArgs::parse already enforces the minimums; ShapeArgs built by hand (set()) do not, so
  // every entry point re-checks here.
  const auto size = [&](const char* key) {
    const std::int64_t value = args.get(key);
    OVERLAP_REQUIRE(value >= 1, "gla: shape key '{}' = {} must be at least 1", key, value);
    return value;
  };
  const auto flag = [&](const char* key) {
    const std::int64_t value = args.get(key);
    OVERLAP_REQUIRE(value == 0 || value == 1, "gla: shape key '{}' = {} must be 0 or 1", key, value);
    return value == 1;
  };
  GlaShape s;
  s.B = size("B");
  s.T = size("T");
  s.H = size("H");
  s.K = size("K");
  s.V = size("V");
  s.has_h0 = flag("h0");
  s.want_hT = flag("hT");
  s.scale = 1.0 / std::sqrt(static_cast<double>(s.K));
  // Tensor sizes must fit an int64 element count; shape_numel names the shape if not.
  shape_numel(s.qk_shape());
  shape_numel(s.v_shape());
  shape_numel(s.state_shape());
  return s;
}

ShapeArgs GlaShape::to_args() const {
  ShapeArgs args = ShapeArgs::defaults(keys());
  args.set("B", B);
  args.set("T", T);
  args.set("H", H);
  args.set("K", K);
  args.set("V", V);
  args.set("h0", has_h0 ? 1 : 0);
  args.set("hT", want_hT ? 1 : 0);
  return args;
}

}  // namespace overlap::gla
