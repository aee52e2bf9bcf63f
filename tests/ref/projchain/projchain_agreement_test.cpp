// The fp32 wide-GEMM reference against the float64 oracle, on fresh inputs per seed, over
// every shape, token tile and input distribution.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "projchain_test_support.hpp"

namespace overlap::projchain::testing {
namespace {

// Both sides see the same bf16 inputs; fp32 GEMM accumulation over d <= 512 stays far inside.
constexpr double kAgreement = 1e-5;

// One token, one head of one element, odd d/H/dk, the SPEC reference shape
// (B=8,T=4096,d=2048,H=16,dk=128) with its head layout kept and N and d cut to keep the
// oracle fast, and a shape with many narrow heads.
const char* const kShapes[] = {
    "B=1,T=1,d=8,H=1,dk=1",    "B=2,T=33,d=64,H=2,dk=32",  "B=3,T=7,d=33,H=3,dk=5",
    "B=2,T=64,d=256,H=4,dk=64", "B=1,T=16,d=256,H=16,dk=128", "B=4,T=9,d=128,H=16,dk=8",
};

// Tokens per GEMM tile: small tiles that do not divide N (a ragged last tile), the default
// (one tile at these N).
const std::int64_t kTokenTiles[] = {5, 48, kDefaultTokenTile};

using Param = std::tuple<const char*, std::int64_t, const char*, std::uint64_t>;

class ProjchainAgreement : public ::testing::TestWithParam<Param> {};

TEST_P(ProjchainAgreement, WideGemmMatchesOracle) {
  const auto& [shape_text, tile, distribution, seed] = GetParam();
  const ProjchainShape shape = parse_shape(shape_text);
  const TensorMap inputs = make_inputs(shape, seed, distribution);
  validate_inputs(shape, inputs);

  const TensorMap ref = oracle(shape, inputs);
  const TensorMap out = wide_gemm_reference(shape, inputs, tile);
  ASSERT_EQ(out.size(), std::size(kOutputNames));
  for (std::string_view name : kOutputNames)
    EXPECT_LE(output_error(out, ref, std::string(name)), kAgreement) << name;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ProjchainAgreement,
    ::testing::Combine(::testing::ValuesIn(kShapes), ::testing::ValuesIn(kTokenTiles),
                       ::testing::Values("default", "zero_key_head"),
                       ::testing::Values(std::uint64_t{1}, std::uint64_t{2})),
    [](const ::testing::TestParamInfo<Param>& info) {
      return test_name(std::get<0>(info.param)) + "_tile" + std::to_string(std::get<1>(info.param)) +
             "_" + std::get<2>(info.param) + "_seed" + std::to_string(std::get<3>(info.param));
    });

}  // namespace
}  // namespace overlap::projchain::testing
