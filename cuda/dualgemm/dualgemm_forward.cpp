#include "dualgemm/dualgemm_forward.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <limits>

#include "core/error.hpp"
#include "dualgemm/dualgemm_launch.hpp"
#include "runtime/cuda_check.hpp"

namespace overlap::cuda {

using dualgemm::DualGemmShape;
using dualgemm::Format;
using dualgemm::Tiling;

std::vector<std::string> dualgemm_variant_names() {
  std::vector<std::string> out;
  for (const Tiling& t : dualgemm::kTilings) out.emplace_back(t.name);
  return out;
}

const Tiling& dualgemm_tiling(std::string_view name) {
  for (const Tiling& t : dualgemm::kTilings)
    if (name == t.name) return t;
  fail("dualgemm: unknown variant '{}' (overlap list --workload dualgemm names them)", name);
}

std::optional<std::string> dualgemm_cannot_implement(const Tiling& t, const DualGemmShape& s) {
  if (s.format == Format::Nvfp4)
    return fmt::format("{}: NVFP4 is a Blackwell (sm_100) format; the Hopper kernels take fmt=0 (bf16) or 1 (fp8)",
                       t.name);
  if (s.L < 1 || s.M < 1 || s.N < 1 || s.K < 1)
    return fmt::format("{}: sizes must be positive (L={}, M={}, N={}, K={})", t.name, s.L, s.M, s.N, s.K);
  if (s.K % 256 != 0) return fmt::format("{}: K={} is not a multiple of 256", t.name, s.K);
  if (s.N % 8 != 0) return fmt::format("{}: N={} is not a multiple of 8 (C's rows must be 16-byte aligned)", t.name, s.N);
  constexpr std::int64_t kInt = std::numeric_limits<int>::max();
  if (s.M > kInt || s.N > kInt || s.K > kInt || s.L > 65535)
    return fmt::format("{}: L={}, M={}, N={}, K={} is past the kernels' 32-bit indexing", t.name, s.L, s.M, s.N, s.K);
  const std::int64_t tiles = s.L * ((s.M + t.tile_m - 1) / t.tile_m) * ((s.N + t.tile_n - 1) / t.tile_n);
  if (tiles > kInt) return fmt::format("{}: {} output tiles is past the grid's limit", t.name, tiles);
  return std::nullopt;
}

void dualgemm_forward(const Tiling& t, const DualGemmDeviceArgs& a, const DualGemmShape& s, CUstream_st* stream) {
  if (auto why = dualgemm_cannot_implement(t, s)) fail("{}", *why);
  OVERLAP_REQUIRE(a.a && a.b1 && a.b2 && a.c, "dualgemm {}: a, b1, b2 and c must all be device pointers", t.name);
  const bool fp8 = s.format == Format::Fp8E4m3;
  OVERLAP_REQUIRE(!fp8 || (a.a_scale && a.b1_scale && a.b2_scale),
                  "dualgemm {}: fp8 operands need a_scale, b1_scale and b2_scale", t.name);
  const std::size_t index = std::size_t(&t - dualgemm::kTilings.data());
  OVERLAP_REQUIRE(index < dualgemm::kTilings.size(), "dualgemm: tiling '{}' is not one of kTilings", t.name);
  const DualGemmSizes sizes{s.L, s.M, s.N, s.K};
  OVERLAP_CUDA_CHECK(fp8 ? dualgemm_launch::launch_fp8(index, a, sizes, stream)
                         : dualgemm_launch::launch_bf16(index, a, sizes, stream));
}

}  // namespace overlap::cuda
