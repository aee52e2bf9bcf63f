// The fp32 chunked gradients against the float64 oracle's, on fresh inputs per case: lengths
// around and across chunks, K != V, every state-flag combination, every input distribution
// (strong gates included), two chunk sizes.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cctype>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "core/random.hpp"
#include "gla_test_support.hpp"

namespace overlap::gla::testing {
namespace {

// The gates' gradient is a running sum over the sequence of q dq - k dk, and its fp32
// cancellation sets this margin: over these 90 cases dg agrees to 4.2e-5 at worst, dq, dk, dv
// and dh0 to 1.1e-6 (the per-case values are test properties in --gtest_output=xml).
constexpr double kAgreement = 1e-4;

std::vector<float> normal_floats(std::size_t n, std::uint64_t seed, const char* name) {
  std::vector<float> x(n);
  fill_normal(std::span<float>(x), seed, name);
  return x;
}

using Param = std::tuple<const char*, const char*, const char*, int>;
class GlaBackwardAgreement : public ::testing::TestWithParam<Param> {};

TEST_P(GlaBackwardAgreement, ChunkedMatchesOracle) {
  const auto& [sizes, flags, distribution, chunk] = GetParam();
  const Problem p(parse_shape(std::string(sizes) + "," + flags), 7, distribution);
  const GlaShape& s = p.shape;
  const auto d_o = normal_floats(std::size_t(s.v_numel()), 21, "do");
  const auto dhT = s.want_hT ? normal_floats(std::size_t(s.state_numel()), 22, "dhT") : std::vector<float>{};
  Gradients<double> ref(s);
  oracle_backward(s, p.in.spans(), {d_o, dhT}, ref.spans());
  Gradients<float> out(s);
  chunked_reference_backward(s, p.in.spans(), {d_o, dhT}, out.spans(), {.chunk = chunk});
  const std::vector<std::tuple<const char*, const std::vector<float>*, const std::vector<double>*>> pairs = {
      {"dq", &out.dq, &ref.dq}, {"dk", &out.dk, &ref.dk}, {"dv", &out.dv, &ref.dv},
      {"dg", &out.dg, &ref.dg}, {"dh0", &out.dh0, &ref.dh0}};
  for (const auto& [name, got, want] : pairs) {
    const double e = rel_error(*got, *want);
    RecordProperty(std::string("rel_error_") + name, fmt::format("{:.3g}", e));
    EXPECT_TRUE(all_finite(*got)) << name;
    EXPECT_LE(e, kAgreement) << name;
  }
}

std::string case_name(const ::testing::TestParamInfo<Param>& info) {
  std::string n = fmt::format("{}_{}_{}_C{}", std::get<0>(info.param), std::get<1>(info.param),
                              std::get<2>(info.param), std::get<3>(info.param));
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GlaBackwardAgreement,
    ::testing::Combine(::testing::Values("B=1,T=1,H=1,K=64,V=64", "B=2,T=63,H=2,K=64,V=32", "B=1,T=65,H=2,K=32,V=64",
                                         "B=1,T=200,H=1,K=64,V=64", "B=1,T=130,H=1,K=128,V=128"),
                       ::testing::Values("h0=1,hT=1", "h0=0,hT=0", "h0=1,hT=0"),
                       ::testing::Values("default", "strong_gates", "mixed_gates"), ::testing::Values(64, 16)),
    case_name);

}  // namespace
}  // namespace overlap::gla::testing
