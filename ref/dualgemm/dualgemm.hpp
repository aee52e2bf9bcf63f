#pragma once
// dualgemm: the gated dual GEMM of SPEC section 4, for every batch index l
//   C[l] = silu(A[l] B1[l]^T) ⊙ (A[l] B2[l]^T),   A [L,M,K], B1, B2 [L,N,K] (K-major),
// C [L,M,N] stored as fp16 by the kernels, accumulated in fp32. K is a multiple of 256.
//
// Input formats (shape key `fmt`), with the tensors each one uses:
//   0 bf16    a, b1, b2: BF16.
//   1 fp8     a, b1, b2: F8_E4M3 codes; a_scale [L,M], b1_scale, b2_scale [L,N]: F32 per-row
//             scales, value = e4m3(code) * scale of its row. This is torch._scaled_mm's
//             row-wise scaling (scale_a [M,1], scale_b [1,N] fp32), which contains per-tensor
//             scaling as the case of equal scales. Hopper runs it.
//   2 nvfp4   a [L,M,K/2], b1, b2 [L,N,K/2]: U8, two e2m1 codes per byte (even k in the low
//             nibble); a_scale [L, M/128, K/64, 512], b1_scale, b2_scale [L, N/128, K/64, 512]
//             (row counts rounded up to 128): F8_E4M3 block scales, one per 16 elements
//             along K, each batch's scales in the 128x4 blocked layout
//             (formats/blocked_scale_layout.hpp). No global scale. Blackwell (sm_100) only.
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/shape_args.hpp"
#include "core/tensor.hpp"

namespace overlap::dualgemm {

enum class Format : std::int64_t { Bf16 = 0, Fp8E4m3 = 1, Nvfp4 = 2 };

struct DualGemmShape {
  std::int64_t L = 1, M = 0, N = 0, K = 0;
  Format format = Format::Bf16;

  double flops() const { return 4.0 * L * M * N * K; }  // two GEMMs, multiply + add
};

std::string_view format_name(Format format);  // "bf16", "fp8_e4m3", "nvfp4"
// The format of the shape key `fmt`'s code; throws overlap::Error naming a code that is none.
Format format_from_code(std::int64_t fmt);
const std::vector<ShapeKey>& shape_keys();    // L, M, N, K, fmt
// Reads and checks a shape: positive sizes, K a multiple of 256, a known fmt. Throws
// overlap::Error naming the offending value.
DualGemmShape shape_from_args(const ShapeArgs& args);
// The kernels' precision: bound on ||C - oracle|| / ||oracle|| for fp16 output.
double output_tolerance(Format format);

// Inputs drawn from `seed`: a, b1, b2 ~ N(0, 1/sqrt(K)) each (so A B^T ~ N(0, 1) and NVFP4
// block scales stay in e4m3's normal range), then quantized to the shape's format: bf16 by
// round to nearest even; fp8 with scale = amax(row) / 448; nvfp4 with formats/nvfp4.hpp.
TensorMap make_inputs(const DualGemmShape& shape, std::uint64_t seed);
// Throws on a missing tensor, wrong dtype or shape, a NaN/Inf value, or a NaN or negative
// NVFP4 block scale, naming the tensor and the value.
void validate_inputs(const DualGemmShape& shape, const TensorMap& inputs);

// The operands exactly as the tensor cores multiply them, decoded to float (exact for every
// format): bf16 values; fp8 code values, with the per-row scales kept apart because the
// kernels apply them in the epilogue; nvfp4 e2m1 value x block scale.
struct Operands {
  DualGemmShape shape;
  std::vector<float> a, b1, b2;                    // [L,M,K], [L,N,K], [L,N,K]
  std::vector<float> a_scale, b1_scale, b2_scale;  // fp8 only: [L,M], [L,N], [L,N]
  bool has_row_scales() const { return !a_scale.empty(); }
};
Operands decode_operands(const DualGemmShape& shape, const TensorMap& inputs);  // validates first

// Float64 oracle straight from the definition for rows [m_begin, m_end) of batch l, into
// `out` ((m_end - m_begin) x N, row-major). A plain triple loop.
void oracle_rows(const Operands& ops, std::int64_t l, std::int64_t m_begin, std::int64_t m_end,
                 std::span<double> out);
Tensor oracle(const Operands& ops);  // F64 [L,M,N]

// Fast reference, computed the way the kernels compute: both GEMMs on the same A tile in fp32
// (Eigen, blocked, tiles spread over OpenMP threads), then the epilogue (row scales,
// silu(x) * y) in fp32. F32 [L,M,N]: the fp32 epilogue value before the fp16 store.
Tensor fast_reference(const Operands& ops);

}  // namespace overlap::dualgemm
