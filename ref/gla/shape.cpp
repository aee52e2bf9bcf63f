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
  GlaShape s;
  s.B = args.get("B");
  s.T = args.get("T");
  s.H = args.get("H");
  s.K = args.get("K");
  s.V = args.get("V");
  require_positive("gla", {{"B", s.B}, {"T", s.T}, {"H", s.H}, {"K", s.K}, {"V", s.V}});
  s.has_h0 = args.flag("h0");
  s.want_hT = args.flag("hT");
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
