// The fp32 chunked reference against the float64 oracle, on fresh inputs per seed, over every
// shape, state flag combination and input distribution (strong gates included).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "gla_test_support.hpp"

namespace overlap::gla::testing {
namespace {

// fp32 accumulation over K <= 256 channels and 1000 steps stays well inside this.
constexpr double kAgreement = 1e-5;

// Every T of the issue (1, 63, 64, 65, 1000: one token, around one chunk, many chunks) and every
// K, V in {60, 64, 100, 128, 256} appears, K != V included; not the full cross product.
const char* const kSizes[] = {
    "B=1,T=1,H=1,K=64,V=64",    "B=2,T=63,H=2,K=64,V=64",   "B=1,T=64,H=2,K=60,V=100",
    "B=2,T=65,H=1,K=100,V=60",  "B=1,T=1000,H=1,K=64,V=64", "B=1,T=130,H=2,K=128,V=128",
    "B=1,T=65,H=1,K=256,V=60",  "B=1,T=200,H=1,K=128,V=256", "B=2,T=1,H=2,K=100,V=128",
    "B=1,T=300,H=1,K=256,V=256",
};
const char* const kStateFlags[] = {"h0=1,hT=1", "h0=0,hT=1", "h0=1,hT=0", "h0=0,hT=0"};

using Param = std::tuple<const char*, const char*, const char*, std::uint64_t>;

class GlaAgreement : public ::testing::TestWithParam<Param> {};

TEST_P(GlaAgreement, ChunkedMatchesOracle) {
  const auto& [sizes, flags, distribution, seed] = GetParam();
  const Problem p(parse_shape(std::string(sizes) + "," + flags), seed, distribution);
  const auto ref = run_oracle(p.shape, p.in.spans());
  const auto out = run_chunked(p.shape, p.in.spans());

  const double o_error = rel_error(out.o, ref.o);
  RecordProperty("rel_error_o", fmt::format("{:.3g}", o_error));  // the margin, in --gtest_output=xml
  EXPECT_TRUE(all_finite(out.o));
  EXPECT_LE(o_error, kAgreement);
  ASSERT_EQ(out.hT.size(), ref.hT.size());
  if (p.shape.want_hT) {
    const double hT_error = rel_error(out.hT, ref.hT);
    RecordProperty("rel_error_hT", fmt::format("{:.3g}", hT_error));
    EXPECT_TRUE(all_finite(out.hT));
    EXPECT_LE(hT_error, kAgreement);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GlaAgreement,
    ::testing::Combine(::testing::ValuesIn(kSizes), ::testing::ValuesIn(kStateFlags),
                       ::testing::Values("default", "strong_gates", "mixed_gates"),
                       ::testing::Values(std::uint64_t{11}, std::uint64_t{12})),
    [](const ::testing::TestParamInfo<Param>& info) {
      std::string name = fmt::format("{}_{}_{}_seed{}", std::get<0>(info.param),
                                     std::get<1>(info.param), std::get<2>(info.param),
                                     std::get<3>(info.param));
      for (char& c : name)
        if (c == '=' || c == ',') c = '_';
      return name;
    });

// The chunk and sub-chunk lengths are free parameters of the algorithm (GPU variants pick
// their own tiles); each choice must compute the same function.
const ChunkOptions kChunkings[] = {{64, 16}, {64, 8}, {32, 16}, {16, 16}, {64, 64}};

class GlaChunking : public ::testing::TestWithParam<std::tuple<ChunkOptions, const char*>> {};

TEST_P(GlaChunking, AnyChunkingMatchesOracle) {
  const auto& [options, distribution] = GetParam();
  const Problem p(parse_shape("B=1,T=150,H=2,K=64,V=60"), 21, distribution);
  const auto ref = run_oracle(p.shape, p.in.spans());
  const auto out = run_chunked(p.shape, p.in.spans(), options);
  EXPECT_LE(rel_error(out.o, ref.o), kAgreement);
  EXPECT_LE(rel_error(out.hT, ref.hT), kAgreement);
}

INSTANTIATE_TEST_SUITE_P(Options, GlaChunking,
                         ::testing::Combine(::testing::ValuesIn(kChunkings),
                                            ::testing::Values("default", "strong_gates", "mixed_gates")),
                         [](const auto& info) {
                           const ChunkOptions& o = std::get<0>(info.param);
                           return fmt::format("C{}_sub{}_{}", o.chunk, o.sub_chunk,
                                              std::get<1>(info.param));
                         });

}  // namespace
}  // namespace overlap::gla::testing
