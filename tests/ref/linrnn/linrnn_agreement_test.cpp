// The fp32 chunked reference against the float64 oracle, on fresh inputs per seed, over every
// shape (state flags included), scan chunk length and input distribution.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "linrnn_test_support.hpp"

namespace overlap::linrnn::testing {
namespace {

// Both sides see the same bf16 inputs; fp32 GEMM accumulation over d <= 256 and a contracting
// scan (0 < a < 1) keep the fp32 result far inside this.
constexpr double kAgreement = 1e-5;

// One token, odd T/d/dv, T around and far beyond a chunk, the SPEC reference shape
// (B=4,T=2048,d=256,dv=64) and its B=16 variant with T cut to keep the oracle fast, the
// large d=dv=1024 shape with widths cut by 8. Every h0/hT combination appears twice.
const char* const kShapes[] = {
    "B=1,T=1,d=8,dv=4,h0=1,hT=1",       "B=2,T=63,d=64,dv=32,h0=0,hT=1",
    "B=3,T=17,d=33,dv=7,h0=1,hT=0",     "B=2,T=200,d=96,dv=48,h0=0,hT=0",
    "B=4,T=256,d=256,dv=64,h0=1,hT=1",  "B=16,T=64,d=256,dv=64,h0=0,hT=1",
    "B=1,T=128,d=128,dv=128,h0=1,hT=0", "B=2,T=65,d=1,dv=1,h0=0,hT=0",
};

// Chunk lengths: one step per chunk, chunks that do not divide T, the default, one chunk.
const std::int64_t kChunks[] = {1, 16, kDefaultChunk, 1000};

using Param = std::tuple<const char*, std::int64_t, const char*, std::uint64_t>;

class LinrnnAgreement : public ::testing::TestWithParam<Param> {};

TEST_P(LinrnnAgreement, ChunkedMatchesOracle) {
  const auto& [shape_text, chunk, distribution, seed] = GetParam();
  const LinrnnShape shape = parse_shape(shape_text);
  const TensorMap inputs = make_inputs(shape, seed, distribution);
  validate_inputs(shape, inputs);

  const TensorMap ref = oracle(shape, inputs);
  const TensorMap out = chunked_reference(shape, inputs, chunk);

  EXPECT_LE(output_error(out, ref, "y"), kAgreement);
  EXPECT_EQ(out.contains("hT"), shape.want_hT);
  EXPECT_EQ(ref.contains("hT"), shape.want_hT);
  if (shape.want_hT) {
    EXPECT_LE(output_error(out, ref, "hT"), kAgreement);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, LinrnnAgreement,
    ::testing::Combine(::testing::ValuesIn(kShapes), ::testing::ValuesIn(kChunks),
                       ::testing::Values("default", "long_memory"),
                       ::testing::Values(std::uint64_t{1}, std::uint64_t{2})),
    [](const ::testing::TestParamInfo<Param>& info) {
      return test_name(std::get<0>(info.param)) + "_chunk" + std::to_string(std::get<1>(info.param)) +
             "_" + std::get<2>(info.param) + "_seed" + std::to_string(std::get<3>(info.param));
    });

}  // namespace
}  // namespace overlap::linrnn::testing
