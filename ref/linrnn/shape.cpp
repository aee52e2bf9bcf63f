// LinrnnShape: the shape keys, their parsing and the sanity rules beyond key minimums.
#include "core/error.hpp"
#include "linrnn/linrnn.hpp"

namespace overlap::linrnn {

const std::vector<ShapeKey>& shape_keys() {
  static const std::vector<ShapeKey> keys = {
      {"B", 2, "batch size"},
      {"T", 63, "timesteps"},
      {"d", 64, "model width (input features per token)"},
      {"dv", 32, "state channels (W is d x 3*dv)"},
      {"h0", 1, "1: an initial state h0 [B,dv] is an input; 0: h starts at zero", 0},
      {"hT", 1, "1: the final state hT [B,dv] is an output", 0},
  };
  return keys;
}

LinrnnShape LinrnnShape::from_args(const ShapeArgs& args) {
  LinrnnShape s;
  s.B = args.get("B");
  s.T = args.get("T");
  s.d = args.get("d");
  s.dv = args.get("dv");
  s.has_h0 = args.flag("h0");
  s.want_hT = args.flag("hT");
  s.validate();
  return s;
}

ShapeArgs LinrnnShape::to_args() const {
  ShapeArgs args = ShapeArgs::defaults(shape_keys());
  args.set("B", B);
  args.set("T", T);
  args.set("d", d);
  args.set("dv", dv);
  args.set("h0", has_h0 ? 1 : 0);
  args.set("hT", want_hT ? 1 : 0);
  return args;
}

void LinrnnShape::validate() const {
  require_positive("linrnn", {{"B", B}, {"T", T}, {"d", d}, {"dv", dv}});
  // Every tensor's element count must fit an int64 (shape_numel throws otherwise); the
  // products used to build shapes are checked first so that building them cannot overflow.
  OVERLAP_REQUIRE(product_fits({B, T}) && product_fits({dv, 3}),
                  "linrnn: shape B={},T={},dv={} is too large", B, T, dv);
  for (const Shape& s : {x_shape(), w_shape(), y_shape(), Shape{B * T, 3 * dv}}) shape_numel(s);
}

double LinrnnShape::gemm_flops() const {
  return 2.0 * static_cast<double>(B) * T * d * 3 * dv;
}

double LinrnnShape::min_bytes() const {
  const double x = 2.0 * B * T * d, w = 2.0 * d * 3 * dv, y = 4.0 * B * T * dv;
  const double states = 4.0 * B * dv * ((has_h0 ? 1 : 0) + (want_hT ? 1 : 0));
  return x + w + y + states;
}

}  // namespace overlap::linrnn
