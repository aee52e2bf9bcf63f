// ProjchainShape: the shape keys, their parsing and the sanity rules beyond key minimums.
#include <limits>

#include "core/error.hpp"
#include "projchain/projchain.hpp"

namespace overlap::projchain {

const std::vector<ShapeKey>& shape_keys() {
  static const std::vector<ShapeKey> keys = {
      {"B", 2, "batch size (N = B*T tokens)"},
      {"T", 33, "timesteps"},
      {"d", 64, "model width (input features per token)"},
      {"H", 2, "heads"},
      {"dk", 32, "head dimension of q, k, v, g"},
  };
  return keys;
}

ProjchainShape ProjchainShape::from_args(const ShapeArgs& args) {
  ProjchainShape s;
  s.B = args.get("B");
  s.T = args.get("T");
  s.d = args.get("d");
  s.H = args.get("H");
  s.dk = args.get("dk");
  s.validate();
  return s;
}

ShapeArgs ProjchainShape::to_args() const {
  ShapeArgs args = ShapeArgs::defaults(shape_keys());
  args.set("B", B);
  args.set("T", T);
  args.set("d", d);
  args.set("H", H);
  args.set("dk", dk);
  return args;
}

void ProjchainShape::validate() const {
  require_positive("projchain", {{"B", B}, {"T", T}, {"d", d}, {"H", H}, {"dk", dk}});
  // The products that build shapes are checked before they are formed; shape_numel then
  // checks every tensor's element count, the widest output included.
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  OVERLAP_REQUIRE(product_fits({B, T}) && product_fits({H, dk}) && H * dk <= (kMax - H) / 4,
                  "projchain: shape B={},T={},H={},dk={} is too large", B, T, H, dk);
  for (const Shape& s : {x_shape(), head_weight_shape(), head_output_shape(), Shape{d, wide_width()},
                         Shape{N(), wide_width()}})
    shape_numel(s);
}

double ProjchainShape::gemm_flops() const {
  return 2.0 * static_cast<double>(N()) * d * wide_width();
}

double ProjchainShape::min_bytes() const {
  const double x = 2.0 * N() * d, w = 2.0 * d * wide_width(), out = 4.0 * N() * wide_width();
  return x + w + out;
}

}  // namespace overlap::projchain
