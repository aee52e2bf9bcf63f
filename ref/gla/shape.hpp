#pragma once
// The shape of one gla problem (chunkwise gated linear attention, SPEC section 1), with the
// tensor shapes it implies. Layout is flash-linear-attention's `chunk_gla` (head-interleaved,
// "BTHK"): q, k, g [B,T,H,K]; v, o [B,T,H,V]; h0, hT [B,H,K,V] fp32.
//
// Room for the backward pass: a backward problem is described by the same struct. Every
// gradient has the shape of the tensor it differentiates (dq, dk, dg: qk_shape(); dv: v_shape();
// dh0: state_shape() when has_h0), and the incoming gradients are do (v_shape()) and dhT
// (state_shape() when want_hT). That is why the two flags say which *states exist* rather than
// "forward only", and why the scale lives here rather than in one function's argument list.
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/shape_args.hpp"
#include "core/tensor.hpp"

namespace overlap::gla {

struct GlaShape {
  std::int64_t B = 0;  // batch
  std::int64_t T = 0;  // sequence length (any value >= 1; need not be a multiple of the chunk)
  std::int64_t H = 0;  // heads
  std::int64_t K = 0;  // key / query head dimension
  std::int64_t V = 0;  // value head dimension
  bool has_h0 = true;   // an initial state h0 is given (otherwise the state starts at zero)
  bool want_hT = true;  // the final state hT is an output
  double scale = 0;     // s in o_t = s * S_t^T q_t; from_args sets K^-1/2 as chunk_gla does

  // Shape keys as users write them: "B=4,T=4096,H=32,K=64,V=64,h0=1,hT=1".
  static const std::vector<ShapeKey>& keys();
  // Throws overlap::Error naming the key and value for a size below 1 or a flag not 0/1.
  static GlaShape from_args(const ShapeArgs& args);
  ShapeArgs to_args() const;
  // The scale a kernel applies: `scale`, or K^-1/2 where it is left at 0.
  double scale_or_default() const { return scale > 0 ? scale : 1.0 / std::sqrt(static_cast<double>(K)); }

  Shape qk_shape() const { return {B, T, H, K}; }
  Shape v_shape() const { return {B, T, H, V}; }
  Shape state_shape() const { return {B, H, K, V}; }
  std::int64_t qk_numel() const { return B * T * H * K; }
  std::int64_t v_numel() const { return B * T * H * V; }
  std::int64_t state_numel() const { return B * H * K * V; }
};

}  // namespace overlap::gla
