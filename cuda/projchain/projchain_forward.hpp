#pragma once
// projchain on Hopper (SPEC section 3): the entry point other code calls with device pointers.
// Host-includable without nvcc; the kernels live in projchain_activations.cu and
// projchain_fused_gemm.cu.
//
//   if (auto why = projchain_cannot_implement(v, shape)) ...;   // or let projchain_forward throw
//   projchain_forward(v, args, shape, stream);
//
// Layout (row-major, ref/projchain/projchain.hpp): x [N,d]; W_q, W_k, W_v, W_g [d,H·dk];
// W_alpha [d,H]; outputs q, k, v, g [N,H·dk] and alpha [N,H]. Everything bf16, fp32 accumulation.
//
// The wide variants (wide_gemm, epilogue_fused) multiply by the packed weight
// [W_q|W_k|W_v|W_g|W_alpha]. A model packs it once at load time (projchain_pack_weights) and
// passes it as `w_packed`; without it, projchain_forward packs into the workspace on every
// call, and that copy (2·d·(4·H·dk+H)·2 bytes of traffic) is part of the call's time.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "projchain/projchain.hpp"
#include "projchain/projchain_tiling.hpp"

struct CUstream_st;  // cudaStream_t without the CUDA headers

namespace overlap::cuda {

using projchain::ProjchainShape;
using ProjchainVariant = projchain::Variant;

// Every variant, in the simulator's order and with its names (sim/models/projchain_model.cpp).
const std::vector<ProjchainVariant>& all_projchain_variants();
std::string projchain_variant_name(ProjchainVariant variant);    // "epilogue_fused", ...
ProjchainVariant parse_projchain_variant(std::string_view name);  // throws overlap::Error

struct ProjchainDeviceArgs {
  const void* x = nullptr;        // bf16 [N, d]
  const void* w_q = nullptr;      // bf16 [d, H·dk]
  const void* w_k = nullptr;
  const void* w_v = nullptr;
  const void* w_g = nullptr;
  const void* w_alpha = nullptr;  // bf16 [d, H]
  // This variant's packed weight from projchain_pack_weights, or null: the wide variants then
  // pack into the workspace on each call (the five weights above are read instead).
  const void* w_packed = nullptr;
  void* q = nullptr;              // bf16 [N, H·dk]
  void* k = nullptr;
  void* v = nullptr;
  void* g = nullptr;
  void* alpha = nullptr;          // bf16 [N, H]
  // projchain_workspace_bytes(variant, shape, w_packed != null) bytes, or null: allocated on
  // the stream (cudaMallocAsync) and released after the call.
  void* workspace = nullptr;
  // epilogue_fused's tile order, column tiles per strip (projchain_strip_scheduler.cuh); 0: the
  // tiling's choice for the shape, projchain::fused_strip_n. Other values are for comparisons.
  int fused_strip_n = 0;
};

// The packed weight holds [W_q|W_k|W_v|W_g|W_alpha] (4·H·dk + H columns, rounded up to
// packed_weight_ld: TMA needs 16-byte strides; only the stride is padded, with zeros the GEMM
// reads but the epilogue never stores, never the problem). Its layout depends on the variant:
//   wide_gemm        [d, ld], row-major as the weights are stored (cuBLAS's operand)
//   epilogue_fused   [ld, d], transposed (the CUTLASS kernel's K-major B operand), the q|k|v|g
//                    columns permuted inside 16-column blocks for the epilogue's stores
//                    (projchain_fused_columns.hpp)
// The layout is internal to one build: pack with the same build that runs the forward (a weight
// packed by a build before session 5's column order gives wrong outputs, with no error).
std::int64_t packed_weight_ld(const ProjchainShape& shape);
std::size_t packed_weight_bytes(const ProjchainShape& shape);

// Writes `variant`'s packed weight into `w_packed` (packed_weight_bytes) on `stream`.
void projchain_pack_weights(ProjchainVariant variant, const ProjchainDeviceArgs& weights, void* w_packed,
                            const ProjchainShape& shape, CUstream_st* stream);

// Why `variant` cannot run `shape`, or nullopt when it can.
std::optional<std::string> projchain_cannot_implement(ProjchainVariant variant, const ProjchainShape& shape);
bool projchain_can_implement(ProjchainVariant variant, const ProjchainShape& shape);
// Device scratch projchain_forward needs (0: none).
std::size_t projchain_workspace_bytes(ProjchainVariant variant, const ProjchainShape& shape, bool weights_packed);

// Enqueues the forward pass on `stream`. Throws overlap::Error on a shape the variant cannot
// run, a null required pointer, or a CUDA / cuBLAS / CUTLASS error.
void projchain_forward(ProjchainVariant variant, const ProjchainDeviceArgs& args, const ProjchainShape& shape,
                       CUstream_st* stream);

}  // namespace overlap::cuda
