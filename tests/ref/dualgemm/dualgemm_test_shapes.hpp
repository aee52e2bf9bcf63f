#pragma once
// SPEC section 4 shapes for the dualgemm tests, grouped by what a 2-core CPU can afford:
// the float64 oracle over the whole output, the oracle on sampled rows, or (too large for
// ctest) disabled cases to run by hand with --gtest_also_run_disabled_tests. Every SPEC
// shape (tests and benchmark) is in one of the lists.
#include <fmt/format.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "dualgemm/dualgemm.hpp"

namespace overlap::dualgemm {
// Readable parameter values in test output and ctest names.
inline void PrintTo(Format f, std::ostream* os) { *os << format_name(f); }
}  // namespace overlap::dualgemm

namespace overlap::dualgemm::testing {

struct TestShape {
  std::int64_t L, M, N, K;
  std::string args(Format f) const {
    return fmt::format("L={},M={},N={},K={},fmt={}", L, M, N, K, static_cast<std::int64_t>(f));
  }
  std::string name() const { return fmt::format("L{}_M{}_N{}_K{}", L, M, N, K); }
};
inline void PrintTo(const TestShape& s, std::ostream* os) { *os << s.name(); }

// Whole-output oracle: the smallest SPEC shape, plus batches and row counts that are not
// multiples of 128 (NVFP4 scale padding, partial tiles).
inline const std::vector<TestShape> kOracleShapes{
    {1, 256, 512, 256},
    {2, 100, 200, 256},
    {3, 1, 1, 512},
    {2, 129, 384, 768},
};

// SPEC test shapes of up to ~11 GFLOP (including the largest K, 7168): fast reference over
// the whole output, oracle on sampled rows (the whole-output oracle would take seconds).
inline const std::vector<TestShape> kSampledShapes{
    {1, 4096, 768, 512},
    {1, 7168, 1024, 256},
    {1, 512, 768, 7168},
};

// The remaining SPEC test shapes and the benchmark shapes (13-135 GFLOP each for the fast
// reference): too slow for ctest on 2 shared cores.
inline const std::vector<TestShape> kLargeShapes{
    {1, 256, 3072, 4096}, {1, 3072, 1024, 1536}, {1, 1536, 512, 7168},
    {1, 7168, 384, 2304}, {1, 7168, 2304, 2048}, {1, 4608, 384, 7168},
    {1, 256, 4096, 7168}, {1, 512, 4096, 7168},  {1, 512, 3072, 7168},
};

inline const std::vector<Format> kFormats{Format::Bf16, Format::Fp8E4m3, Format::Nvfp4};

}  // namespace overlap::dualgemm::testing
