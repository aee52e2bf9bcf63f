#include <algorithm>

#include "core/error.hpp"
#include "dualgemm/dualgemm.hpp"

namespace overlap::dualgemm {

std::string_view format_name(Format format) {
  switch (format) {
    case Format::Bf16:
      return "bf16";
    case Format::Fp8E4m3:
      return "fp8_e4m3";
    case Format::Nvfp4:
      return "nvfp4";
  }
  fail("dualgemm: unknown format {}", static_cast<std::int64_t>(format));
}

Format format_from_code(std::int64_t fmt) {
  OVERLAP_REQUIRE(fmt >= 0 && fmt <= 2, "dualgemm: fmt={} is not a format (0 = bf16, 1 = fp8_e4m3, 2 = nvfp4)", fmt);
  return static_cast<Format>(fmt);
}

const std::vector<ShapeKey>& shape_keys() {
  static const std::vector<ShapeKey> keys{
      {"L", 1, "batch count (independent problems)"},
      {"M", 256, "rows of A and C"},
      {"N", 512, "rows of B1 and B2, columns of C"},
      {"K", 256, "reduction length, a multiple of 256"},
      {"fmt", 0, "input format: 0 = bf16, 1 = fp8 e4m3 with per-row fp32 scales, 2 = nvfp4", 0,
       {{"bf16", 0}, {"fp8", 1}, {"fp8_e4m3", 1}, {"nvfp4", 2}}},
  };
  return keys;
}

DualGemmShape shape_from_args(const ShapeArgs& args) {
  DualGemmShape s;
  s.L = args.get("L");
  s.M = args.get("M");
  s.N = args.get("N");
  s.K = args.get("K");
  require_positive("dualgemm", {{"L", s.L}, {"M", s.M}, {"N", s.N}, {"K", s.K}});
  // The kernels' K tile; it also makes K / 16 NVFP4 scales a whole number of 4-block tiles.
  OVERLAP_REQUIRE(s.K % 256 == 0, "dualgemm: K={} is not a multiple of 256", s.K);
  s.format = format_from_code(args.get("fmt"));
  // Guard element counts before anything is allocated (numel of C and of A/B).
  shape_numel({s.L, s.M, s.N});
  shape_numel({s.L, std::max(s.M, s.N), s.K});
  return s;
}

// Headroom over what a correct kernel produces, small enough that a wrong scale, tile or
// nibble order (errors of 5% and more) fails:
//   bf16: fp16 rounding of C alone gives ~3e-4 (relative norm), fp32 accumulation ~1e-6;
//         fast approximate exp/sigmoid in the epilogue adds up to ~5e-4.
//   fp8 / nvfp4: as bf16, plus the tensor cores' reduced-precision accumulation of fp8
//         products (on Hopper about 14 mantissa bits are kept, which costs ~1e-3 at
//         K = 7168; the reason CUTLASS/DeepGEMM promote to fp32 every few K tiles).
double output_tolerance(Format format) { return format == Format::Bf16 ? 2e-3 : 1e-2; }

}  // namespace overlap::dualgemm
