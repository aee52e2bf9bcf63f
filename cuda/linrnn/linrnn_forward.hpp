#pragma once
// linrnn forward on Hopper (SPEC section 2): the entry point other code calls with device
// pointers. Host-includable without nvcc; the kernels live in the .cu files beside it.
//
//   linrnn::Variant v = linrnn::Variant::ChunkFused;
//   if (auto why = linrnn_cannot_implement(v, shape)) ...;     // or let linrnn_forward throw
//   std::size_t n = linrnn_workspace_bytes(v, shape);          // allocate, zero once
//   linrnn_forward(v, {x, W, h0, y, hT, workspace}, shape, stream);
//
// Layout (ref/linrnn/linrnn.hpp): x [B,T,d] bf16, W [d,3dv] bf16 = [W_u | W_a | W_z], h0 [B,dv]
// fp32 (null: zeros); y [B,T,dv] bf16, hT [B,dv] fp32 (null: not written).
// chunk_fused reads W packed once by linrnn_pack_weight ([u|a|z] per block of 64 channels,
// K-major): pass it as w_packed; without it each call packs into its workspace first, which
// costs a read and a write of W.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "linrnn/linrnn.hpp"
#include "linrnn/linrnn_tiling.hpp"

struct CUstream_st;  // cudaStream_t without the CUDA headers

namespace overlap::cuda {

const std::vector<linrnn::Variant>& all_linrnn_variants();
std::string linrnn_variant_name(linrnn::Variant variant);     // the simulator's names
linrnn::Variant parse_linrnn_variant(std::string_view name);  // throws overlap::Error on unknown names

struct LinrnnDeviceArgs {
  const void* x = nullptr;    // bf16 [B,T,d]
  const void* W = nullptr;    // bf16 [d,3dv]
  const float* h0 = nullptr;  // fp32 [B,dv] or null (zero initial state)
  void* y = nullptr;          // bf16 [B,T,dv]
  float* hT = nullptr;        // fp32 [B,dv] or null
  // linrnn_workspace_bytes(variant, shape) bytes, ZERO-FILLED before its first use and then
  // left to the kernels (it holds the look-back's counters and flagged words, which each launch
  // leaves ready for the next). One workspace per stream: two launches in flight at once
  // must not share one, and a workspace used for one shape must be zero-filled again before
  // a launch of another shape (the look-back region moves, and may then lie over bytes that
  // were projection data). 256-byte aligned (cudaMalloc's alignment). Null: allocated,
  // zeroed and freed on the stream in every call.
  // chunk_fused also needs the GPU to itself while it runs: its persistent CTAs wait on each
  // other through the look-back and are sized to be co-resident on an otherwise idle GPU, so
  // kernels running concurrently on other streams can keep some of them waiting forever.
  void* workspace = nullptr;
  // chunk_fused: W packed by linrnn_pack_weight (linrnn_packed_weight_bytes), or null (packed
  // into the workspace in every call). Ignored by the other variants.
  const void* w_packed = nullptr;
};

// chunk_fused's packed weight: bytes, and the packing (enqueued on `stream`).
std::size_t linrnn_packed_weight_bytes(const linrnn::LinrnnShape& shape);
void linrnn_pack_weight(const void* W, void* w_packed, const linrnn::LinrnnShape& shape, CUstream_st* stream);

// Why `variant` cannot run `shape`, or nullopt when it can.
std::optional<std::string> linrnn_cannot_implement(linrnn::Variant variant, const linrnn::LinrnnShape& shape);
bool linrnn_can_implement(linrnn::Variant variant, const linrnn::LinrnnShape& shape);
std::size_t linrnn_workspace_bytes(linrnn::Variant variant, const linrnn::LinrnnShape& shape);

// Enqueues the forward pass on `stream`. Throws overlap::Error on a shape the variant cannot
// run, a null required pointer, or a CUDA / cuBLAS error.
void linrnn_forward(linrnn::Variant variant, const LinrnnDeviceArgs& args, const linrnn::LinrnnShape& shape,
                    CUstream_st* stream);

}  // namespace overlap::cuda
