#pragma once
// linrnn — linear-RNN layer: projection → gated scan → SiLU gate (SPEC §2).
//
//   u_t, a_pre_t, z_t = x_t W            (W = [W_u | W_a | W_z], each block dv wide)
//   a_t = sigmoid(a_pre_t)
//   h_t = a_t ⊙ h_{t−1} + (1 − a_t) ⊙ u_t   (h_{−1} = h0, or 0 when the shape says h0=0)
//   y_t = h_t ⊙ silu(z_t)
//
// Tensors (row-major, names as in the test vectors):
//   inputs  x  [B,T,d]    BF16
//           W  [d,3·dv]   BF16
//           h0 [B,dv]     F32   only when h0=1
//   outputs y  [B,T,dv]   (kernels store bf16; checked at 1e-2)
//           hT [B,dv]     only when hT=1 (fp32 state; checked at 1e-2)
//
// Two CPU computations of the same function:
//   oracle()            float64, token by token, straight from the definition;
//   chunked_reference() fp32 the way the kernels do it: one blocked GEMM for the projection,
//                       then a two-level scan over (a, b) pairs in chunks of timesteps.
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/shape_args.hpp"
#include "core/tensor.hpp"
#include "workloads/workload.hpp"

namespace overlap::linrnn {

struct LinrnnShape {
  std::int64_t B = 2;
  std::int64_t T = 63;
  std::int64_t d = 64;
  std::int64_t dv = 32;
  bool has_h0 = true;   // an initial state h0 is an input
  bool want_hT = true;  // the final state hT is an output

  // Throws overlap::Error for sizes below 1, flags other than 0/1, or element counts that
  // overflow.
  static LinrnnShape from_args(const ShapeArgs& args);
  ShapeArgs to_args() const;
  void validate() const;

  Shape x_shape() const { return {B, T, d}; }
  Shape w_shape() const { return {d, 3 * dv}; }
  Shape state_shape() const { return {B, dv}; }  // h0 and hT
  Shape y_shape() const { return {B, T, dv}; }

  // Counted FLOPs: the projection GEMM only (2·B·T·d·3dv). The scan and gate add about
  // 10 element-wise operations per (token, channel), under 1% at every SPEC shape.
  double gemm_flops() const;
  // Bytes the CPU reference must read and write: bf16 x and W, fp32 h0, y and hT.
  double min_bytes() const;
};

// Shape keys as users write them: "B=4,T=2048,d=256,dv=64,h0=1,hT=1".
const std::vector<ShapeKey>& shape_keys();

// Input distributions; the first is the default.
//   default     x ~ N(0,1), W ~ N(0,1)/sqrt(d) (both rounded to bf16), h0 ~ N(0,1)
//   long_memory as default, but feature 0 of x is 1 (a bias channel) and W_a is
//               N(0,0.1²)/sqrt(d) with row 0 = 4.6, so a ≈ sigmoid(4.6) ≈ 0.99: state
//               survives ~100 steps, which stresses how chunk carries accumulate.
std::vector<Distribution> distributions();

TensorMap make_inputs(const LinrnnShape& shape, std::uint64_t seed, std::string_view distribution);

// Presence, dtypes and shapes of every input and no unexpected tensors; values unchecked.
void require_input_layout(const LinrnnShape& shape, const TensorMap& inputs);
// Presence, dtypes and shapes of every input, no unexpected tensors, and no NaN/Inf (the
// message names the tensor, the value and its flat index).
void validate_inputs(const LinrnnShape& shape, const TensorMap& inputs);

// Both computations check the layout (cheap) but not finiteness: call validate_inputs()
// first on untrusted data.
TensorMap oracle(const LinrnnShape& shape, const TensorMap& inputs);  // F64 outputs

inline constexpr std::int64_t kDefaultChunk = 64;
TensorMap chunked_reference(const LinrnnShape& shape, const TensorMap& inputs,
                            std::int64_t chunk = kDefaultChunk);  // F32 outputs

// The second stage on its own, for callers that already hold the projection:
// proj [B·T, 3·dv] fp32 rows of (u | a_pre | z) is overwritten with scratch values;
// h0 is [B·dv] or empty for zeros; y [B·T·dv]; hT [B·dv] or empty.
void scan_and_gate(const LinrnnShape& shape, std::span<float> proj, std::span<const float> h0,
                   std::span<float> y, std::span<float> hT, std::int64_t chunk = kDefaultChunk);

}  // namespace overlap::linrnn
