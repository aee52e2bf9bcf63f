#pragma once
// projchain — the GLA input projection chain (SPEC §3): five projections of the same tokens
// and their activations.
//
//   q = x W_q                       k = l2normalize_per_head(x W_k)
//   v = x W_v                       g = silu(x W_g)
//   alpha = sigmoid(x W_alpha)
//
// Tensors (row-major, names as in the test vectors; N = B·T, token n = b·T + t):
//   inputs  x        [N, d]       BF16
//           W_q, W_k, W_v, W_g  [d, H·dk]  BF16   (head h owns columns h·dk .. h·dk+dk−1)
//           W_alpha  [d, H]       BF16
//   outputs q, k, v, g  [N, H·dk]  (kernels store bf16; each checked at 1e-2)
//           alpha       [N, H]
// The flat [N, H·dk] layout is the GEMM's output and the same bytes as [B, T, H, dk], the
// layout gla's q, k, v, g use.
//
// l2normalize: k_head / max(‖k_head‖₂, 1e-12), as torch.nn.functional.normalize with its
// default eps: a head whose projection is all zeros comes out as zeros, never NaN.
//
// Two CPU computations of the same function:
//   oracle()                float64, each projection a plain dot product per element;
//   wide_gemm_reference()   fp32 the way the wide_gemm / epilogue_fused kernels do it: one
//                           Eigen GEMM against [W_q|W_k|W_v|W_g|W_alpha] (4·H·dk + H wide),
//                           tiled over tokens, the activations applied to each tile's
//                           column slices (an epilogue), in parallel.
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/shape_args.hpp"
#include "core/tensor.hpp"
#include "workloads/workload.hpp"

namespace overlap::projchain {

inline constexpr double kNormEps = 1e-12;

struct ProjchainShape {
  std::int64_t B = 2;
  std::int64_t T = 33;
  std::int64_t d = 64;
  std::int64_t H = 2;
  std::int64_t dk = 32;

  // Throws overlap::Error for sizes below 1 or element counts that overflow.
  static ProjchainShape from_args(const ShapeArgs& args);
  ShapeArgs to_args() const;
  void validate() const;

  std::int64_t N() const { return B * T; }
  std::int64_t heads_width() const { return H * dk; }            // q, k, v, g columns
  std::int64_t wide_width() const { return 4 * H * dk + H; }     // concatenated weight
  Shape x_shape() const { return {N(), d}; }
  Shape head_weight_shape() const { return {d, heads_width()}; }  // W_q, W_k, W_v, W_g
  Shape alpha_weight_shape() const { return {d, H}; }
  Shape head_output_shape() const { return {N(), heads_width()}; }
  Shape alpha_output_shape() const { return {N(), H}; }

  // Counted FLOPs: the five projections only, 2·N·d·(4·H·dk + H); the activations (norm,
  // silu, sigmoid) are a few operations per output element, under 1% at SPEC shapes.
  double gemm_flops() const;
  // Bytes the CPU reference must read and write: bf16 x and weights, fp32 outputs.
  double min_bytes() const;
};

// Shape keys as users write them: "B=4,T=512,d=2048,H=16,dk=128".
const std::vector<ShapeKey>& shape_keys();

// Input distributions; the first is the default.
//   default        x ~ N(0,1), every W ~ N(0,1)/sqrt(d), all rounded to bf16
//   zero_key_head  as default, but W_k's head-0 columns are zero, so k's head 0 has norm 0
//                  and must come out as zeros (the eps path of l2normalize)
std::vector<Distribution> distributions();

TensorMap make_inputs(const ProjchainShape& shape, std::uint64_t seed, std::string_view distribution);

// Presence, dtypes and shapes of every input and no unexpected tensors; values unchecked.
void require_input_layout(const ProjchainShape& shape, const TensorMap& inputs);
// The layout, and no NaN/Inf (the message names the tensor, the value and its flat index).
void validate_inputs(const ProjchainShape& shape, const TensorMap& inputs);

// Both computations check the layout (cheap) but not finiteness: call validate_inputs()
// first on untrusted data.
TensorMap oracle(const ProjchainShape& shape, const TensorMap& inputs);               // F64
// token_tile: tokens per GEMM tile (bounds the fp32 intermediate); any value gives the same
// result up to GEMM blocking.
inline constexpr std::int64_t kDefaultTokenTile = 2048;
TensorMap wide_gemm_reference(const ProjchainShape& shape, const TensorMap& inputs,
                              std::int64_t token_tile = kDefaultTokenTile);  // F32

// Names of the weights in the order of the concatenated weight's column blocks.
inline constexpr std::string_view kWeightNames[] = {"W_q", "W_k", "W_v", "W_g", "W_alpha"};
inline constexpr std::string_view kOutputNames[] = {"q", "k", "v", "g", "alpha"};

}  // namespace overlap::projchain
