// Variable-length batches: every sequence of a packed batch (lengths 0, 1, around and across the
// 64-token chunk) comes out exactly as when run alone, forward and backward, in both
// implementations; an empty sequence passes its state through; the float64 and fp32 versions
// agree on the packed batch; a bad cu_seqlens is refused with the offending offset.
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/random.hpp"
#include "gla_test_support.hpp"

namespace overlap::gla::testing {
namespace {

const std::vector<std::int32_t> kLengths = {5, 0, 64, 1, 65, 130, 0, 63};

std::vector<std::int32_t> offsets(const std::vector<std::int32_t>& lengths) {
  std::vector<std::int32_t> cu = {0};
  for (auto n : lengths) cu.push_back(cu.back() + n);
  return cu;
}

// One packed batch: rows of every sequence back to back, one h0 and one dhT per sequence.
struct Packed {
  GlaShape shape;  // B = 1, T = total
  std::vector<std::int32_t> cu;
  DecodedInputs in;
  std::vector<float> d_o, dhT;
  std::int64_t N;
  Packed(const std::vector<std::int32_t>& lengths, const std::string& distribution)
      : cu(offsets(lengths)), N(std::int64_t(lengths.size())) {
    shape = parse_shape(fmt::format("B=1,T={},H=2,K=32,V=16", cu.back()));
    in = decode_inputs(shape, make_inputs(shape, 5, distribution));
    GlaShape states = shape;
    states.B = N;
    in.h0.resize(std::size_t(states.state_numel()));
    fill_normal(std::span<float>(in.h0), 6, "h0", 0.1);
    d_o.resize(std::size_t(shape.v_numel()));
    fill_normal(std::span<float>(d_o), 7, "do");
    dhT.resize(std::size_t(states.state_numel()));
    fill_normal(std::span<float>(dhT), 8, "dhT", 0.1);
  }
  std::size_t states() const { return dhT.size(); }
};

template <class T>
std::vector<T> slice(const std::vector<T>& all, std::size_t offset, std::size_t count) {
  return {all.begin() + std::ptrdiff_t(offset), all.begin() + std::ptrdiff_t(offset + count)};
}

class GlaVarlen : public ::testing::TestWithParam<const char*> {};

TEST_P(GlaVarlen, EverySequenceComesOutAsWhenRunAlone) {
  const Packed p(kLengths, GetParam());
  const std::int64_t H = p.shape.H, K = p.shape.K, V = p.shape.V, state = H * K * V;
  std::vector<float> o(std::size_t(p.shape.v_numel())), hT(p.states());
  chunked_reference_varlen(p.shape, p.cu, p.in.spans(), {o, hT});
  std::vector<float> dq(std::size_t(p.shape.qk_numel())), dk(dq.size()), dg(dq.size()), dv(o.size()), dh0(p.states());
  chunked_reference_backward_varlen(p.shape, p.cu, p.in.spans(), {p.d_o, p.dhT}, {dq, dk, dg, dv, dh0});
  for (std::int64_t n = 0; n < p.N; ++n) {
    SCOPED_TRACE(fmt::format("sequence {} of length {}", n, kLengths[std::size_t(n)]));
    const std::size_t t0 = std::size_t(p.cu[std::size_t(n)]), L = std::size_t(kLengths[std::size_t(n)]);
    const std::size_t qk0 = t0 * std::size_t(H * K), v0 = t0 * std::size_t(H * V), s0 = std::size_t(n * state);
    if (L == 0) {  // the state passes through, and so does its gradient
      EXPECT_EQ(slice(hT, s0, std::size_t(state)), slice(p.in.h0, s0, std::size_t(state)));
      EXPECT_EQ(slice(dh0, s0, std::size_t(state)), slice(p.dhT, s0, std::size_t(state)));
      continue;
    }
    GlaShape alone = p.shape;
    alone.T = std::int64_t(L);
    DecodedInputs in;
    in.q = slice(p.in.q, qk0, L * H * K);
    in.k = slice(p.in.k, qk0, L * H * K);
    in.g = slice(p.in.g, qk0, L * H * K);
    in.v = slice(p.in.v, v0, L * H * V);
    in.h0 = slice(p.in.h0, s0, std::size_t(state));
    const auto ref = run_chunked(alone, in.spans());
    EXPECT_EQ(slice(o, v0, L * H * V), ref.o);
    EXPECT_EQ(slice(hT, s0, std::size_t(state)), ref.hT);
    Gradients<float> g(alone);
    const auto d_o = slice(p.d_o, v0, L * H * V), dhT = slice(p.dhT, s0, std::size_t(state));
    chunked_reference_backward(alone, in.spans(), {d_o, dhT}, g.spans());
    EXPECT_EQ(slice(dq, qk0, L * H * K), g.dq);
    EXPECT_EQ(slice(dg, qk0, L * H * K), g.dg);
    EXPECT_EQ(slice(dv, v0, L * H * V), g.dv);
    EXPECT_EQ(slice(dh0, s0, std::size_t(state)), g.dh0);
  }
}

TEST_P(GlaVarlen, Fp32AgreesWithTheOracleOnThePackedBatch) {
  const Packed p(kLengths, GetParam());
  std::vector<double> o(std::size_t(p.shape.v_numel())), hT(p.states());
  oracle_varlen(p.shape, p.cu, p.in.spans(), {o, hT});
  std::vector<float> of(o.size()), hTf(hT.size());
  chunked_reference_varlen(p.shape, p.cu, p.in.spans(), {of, hTf});
  EXPECT_LE(rel_error(of, o), 1e-5);
  EXPECT_LE(rel_error(hTf, hT), 1e-5);
  const std::size_t qk = std::size_t(p.shape.qk_numel());
  std::vector<double> dq(qk), dk(qk), dg(qk), dv(o.size()), dh0(p.states());
  oracle_backward_varlen(p.shape, p.cu, p.in.spans(), {p.d_o, p.dhT}, {dq, dk, dg, dv, dh0});
  std::vector<float> dqf(qk), dkf(qk), dgf(qk), dvf(o.size()), dh0f(p.states());
  chunked_reference_backward_varlen(p.shape, p.cu, p.in.spans(), {p.d_o, p.dhT}, {dqf, dkf, dgf, dvf, dh0f});
  EXPECT_LE(rel_error(dqf, dq), 1e-4);
  EXPECT_LE(rel_error(dkf, dk), 1e-4);
  EXPECT_LE(rel_error(dgf, dg), 1e-4);
  EXPECT_LE(rel_error(dvf, dv), 1e-4);
  EXPECT_LE(rel_error(dh0f, dh0), 1e-4);
}

INSTANTIATE_TEST_SUITE_P(Distributions, GlaVarlen, ::testing::Values("default", "strong_gates", "mixed_gates"));

TEST(GlaVarlenBadInput, CuSeqlensIsCheckedAgainstThePackedLength) {
  const Packed p({3, 4}, "default");
  std::vector<float> o(std::size_t(p.shape.v_numel())), hT(p.states());
  const auto message = [&](std::vector<std::int32_t> cu) {
    try {
      chunked_reference_varlen(p.shape, cu, p.in.spans(), {o, hT});
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message({0, 3, 7}), "accepted");
  EXPECT_NE(message({1, 3, 7}).find("cu_seqlens[0] = 1 must be 0"), std::string::npos);
  EXPECT_NE(message({0, 5, 3, 7}).find("decreases at index 2 (3 after 5)"), std::string::npos);
  EXPECT_NE(message({0, 3, 6}).find("ends at 6, the packed length is T = 7"), std::string::npos);
  EXPECT_NE(message({0}).find("at least 2 offsets"), std::string::npos);
  // h0 / hT hold one state per sequence: three offsets say two sequences.
  EXPECT_NE(message({0, 2, 3, 7}).find("'h0'"), std::string::npos) << message({0, 2, 3, 7});
  // The backward names its incoming gradients by their own names.
  std::vector<float> g(std::size_t(p.shape.qk_numel())), gv(o.size()), dh0(p.states());
  const std::vector<float> short_do(o.size() - 1);
  try {
    chunked_reference_backward_varlen(p.shape, p.cu, p.in.spans(), {short_do, p.dhT}, {g, g, g, gv, dh0});
    FAIL() << "accepted a short do";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'do'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace overlap::gla::testing
