#pragma once
// dualgemm on Hopper (SPEC section 4): the entry point other code calls with device pointers.
// Host-includable without nvcc; the kernels (dualgemm_kernel.cuh) are instantiated in
// dualgemm_launch_bf16.cu and dualgemm_launch_fp8.cu, one per variant of
// dualgemm_tiling.hpp's kTilings and operand format.
//
//   if (auto why = dualgemm_cannot_implement(tiling, shape)) ...;   // or let forward throw
//   dualgemm_forward(tiling, args, shape, stream);
//
// Layout (ref/dualgemm/dualgemm.hpp): A [L,M,K], B1, B2 [L,N,K] (K-major), C [L,M,N] fp16.
// bf16 operands, or fp8 e4m3 codes with fp32 per-row scales (a_scale [L,M], b1_scale and
// b2_scale [L,N]; per-tensor scaling is the case of equal scales).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dualgemm/dualgemm.hpp"
#include "dualgemm/dualgemm_args.hpp"
#include "dualgemm/dualgemm_tiling.hpp"

struct CUstream_st;  // cudaStream_t without the CUDA headers

namespace overlap::cuda {

// The variants, in kTilings' order (the simulator's names, sim/models/dualgemm_model.cpp).
std::vector<std::string> dualgemm_variant_names();
// The tiling of the variant called `name`; throws overlap::Error naming it when unknown.
const dualgemm::Tiling& dualgemm_tiling(std::string_view name);

// Why the variant cannot run `shape`, or nullopt when it can (CUTLASS's can_implement): the
// format (nvfp4 is Blackwell-only), N not a multiple of 8 (16-byte rows of C for TMA), sizes
// past the kernels' 32-bit indexing.
std::optional<std::string> dualgemm_cannot_implement(const dualgemm::Tiling& tiling,
                                                     const dualgemm::DualGemmShape& shape);

// Enqueues the variant on `stream`. Throws overlap::Error on a shape it cannot run, a missing
// pointer, or a CUDA error at launch.
void dualgemm_forward(const dualgemm::Tiling& tiling, const DualGemmDeviceArgs& args,
                      const dualgemm::DualGemmShape& shape, CUstream_st* stream);

}  // namespace overlap::cuda
