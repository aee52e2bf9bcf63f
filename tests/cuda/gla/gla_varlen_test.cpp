// Variable-length batches (cuda/gla/gla_varlen.hpp) against the float64 oracle run on each
// sequence alone (ref/gla's oracle_varlen, oracle_backward_varlen): the forward (o, every final
// state, and the states it saves for the backward) and both backward variants, with lengths 0,
// 1, around and across the 64-step chunk, sequences in an order that is not the walk order,
// mild to strong gates. Outputs poisoned first; the same checks as the vector tests (whole
// tensor and per block, every element written).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <iostream>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "core/random.hpp"
#include "gla/gla_backward.hpp"
#include "gla/gla_forward.hpp"
#include "gla/inputs.hpp"
#include "../gpu_test_support.hpp"
#include "vectors/poison.hpp"
#include "vectors/vectors.hpp"

namespace overlap::cuda {

void PrintTo(const GlaBackwardVariant& v, std::ostream* os);  // gla_backward_test.cpp

namespace {

using gpu_test::DeviceTensor;
using gpu_test::expect_outputs_pass;
using gpu_test::gpu_present;

struct VarlenCase {
  std::string name;
  std::vector<std::int32_t> lengths;
  int H, K, V;
  bool h0, hT;
  std::string distribution;
  std::uint64_t seed;
};
void PrintTo(const VarlenCase& c, std::ostream* os) { *os << c.name; }

// 40 lengths from 0 to 200 (seeded), for a walk order far from the index order.
std::vector<std::int32_t> many_lengths() {
  std::vector<float> u(40);
  fill_uniform(std::span<float>(u), 31, "lengths", 0.0, 1.0);
  std::vector<std::int32_t> out;
  for (float x : u) out.push_back(static_cast<std::int32_t>(x * 200.f));
  return out;
}

const std::vector<VarlenCase> kCases = {
    {"mixed_k64_v64", {130, 0, 1, 64, 257, 63}, 2, 64, 64, true, true, "default", 41},
    {"mixed_k128_v128_strong", {130, 0, 1, 64, 257, 63}, 2, 128, 128, true, true, "strong_gates", 42},
    {"long_k128_v64", {5, 1000, 64, 129}, 3, 128, 64, false, true, "mixed_gates", 43},
    {"empty_first_k64_v128", {0, 300}, 1, 64, 128, true, false, "default", 44},
    {"forty_k64_v64", many_lengths(), 2, 64, 64, true, true, "mixed_gates", 45},
};

std::vector<std::int32_t> offsets(const std::vector<std::int32_t>& lengths) {
  std::vector<std::int32_t> cu = {0};
  for (auto n : lengths) cu.push_back(cu.back() + n);
  return cu;
}

// The packed batch of one case: inputs as the kernels take them and the oracle's outputs and
// gradients (F64 tensors), named as the vector files name them.
struct Packed {
  gla::GlaShape shape;  // B = 1, T = total
  std::vector<std::int32_t> cu;
  int N;
  TensorMap inputs;             // q, k, v, g, h0, do, dhT
  VectorSet forward, backward;  // expected outputs and their tolerances

  explicit Packed(const VarlenCase& c) : cu(offsets(c.lengths)), N(static_cast<int>(c.lengths.size())) {
    const ShapeArgs args = ShapeArgs::parse(
        fmt::format("B=1,T={},H={},K={},V={},h0={},hT={}", cu.back(), c.H, c.K, c.V, int(c.h0), int(c.hT)),
        gla::GlaShape::keys());
    shape = gla::GlaShape::from_args(args);  // the scale K^-1/2, as the kernels default to
    gla::GlaShape per_seq = shape;
    per_seq.B = N;
    const Shape states = per_seq.state_shape();
    inputs = gla::make_backward_inputs(shape, c.seed, c.distribution);  // q, k, v, g, do (+ one h0, dhT)
    std::vector<float> h0(static_cast<std::size_t>(shape_numel(states))), dhT(h0.size());
    fill_normal(std::span<float>(h0), c.seed + 1, "h0", 0.1);
    fill_normal(std::span<float>(dhT), c.seed + 2, "dhT", 0.1);
    inputs["h0"] = Tensor::from_f32(h0, DType::F32, states);
    inputs["dhT"] = Tensor::from_f32(dhT, DType::F32, states);

    const gla::DecodedInputs in = decode(inputs, c.h0);
    const std::vector<float> d_o = inputs.at("do").to_f32();
    std::vector<double> o(static_cast<std::size_t>(shape.v_numel())), hT(c.hT ? h0.size() : 0);
    gla::oracle_varlen(shape, cu, in.spans(), {o, hT});
    std::vector<double> dq(static_cast<std::size_t>(shape.qk_numel())), dk(dq.size()), dg(dq.size());
    std::vector<double> dv(o.size()), dh0(c.h0 ? h0.size() : 0);
    const std::span<const float> dhT_in = c.hT ? std::span<const float>(dhT) : std::span<const float>();
    gla::oracle_backward_varlen(shape, cu, in.spans(), {d_o, dhT_in}, {dq, dk, dg, dv, dh0});

    forward.outputs = gla::make_workload()->outputs(args);
    forward.expected["o"] = Tensor::from_f64(o, DType::F64, shape.v_shape());
    if (c.hT) forward.expected["hT"] = Tensor::from_f64(hT, DType::F64, states);
    backward.outputs = gla::make_backward_workload()->outputs(args);
    backward.expected["dq"] = Tensor::from_f64(dq, DType::F64, shape.qk_shape());
    backward.expected["dk"] = Tensor::from_f64(dk, DType::F64, shape.qk_shape());
    backward.expected["dg"] = Tensor::from_f64(dg, DType::F64, shape.qk_shape());
    backward.expected["dv"] = Tensor::from_f64(dv, DType::F64, shape.v_shape());
    if (c.h0) backward.expected["dh0"] = Tensor::from_f64(dh0, DType::F64, states);
  }

  gla::DecodedInputs decode(const TensorMap& t, bool with_h0) const {
    gla::DecodedInputs d;
    d.q = t.at("q").to_f32();
    d.k = t.at("k").to_f32();
    d.v = t.at("v").to_f32();
    d.g = t.at("g").to_f32();
    if (with_h0) d.h0 = t.at("h0").to_f32();
    return d;
  }
};

class GlaVarlenGpu : public ::testing::TestWithParam<std::tuple<GlaBackwardVariant, VarlenCase>> {};

TEST_P(GlaVarlenGpu, EverySequenceMatchesTheOracleAlone) {
  if (!gpu_present()) GTEST_SKIP() << "no CUDA device";
  const auto& [variant, c] = GetParam();
  const Packed p(c);
  const gla::GlaShape& s = p.shape;
  const std::string label = gla_backward_variant_name(variant) + " " + c.name;
  DeviceTensor cu_dev(p.cu.size() * sizeof(std::int32_t));
  ASSERT_TRUE(cu_dev.get());
  OVERLAP_GPU_TEST_OK(cudaMemcpy(cu_dev.get(), p.cu.data(), cu_dev.bytes(), cudaMemcpyHostToDevice));
  const GlaVarlen varlen{static_cast<const int*>(cu_dev.get()), p.N};

  const DeviceTensor q(p.inputs.at("q")), k(p.inputs.at("k")), v(p.inputs.at("v")), g(p.inputs.at("g"));
  const DeviceTensor h0(p.inputs.at("h0")), d_o(p.inputs.at("do")), dhT(p.inputs.at("dhT"));
  TensorMap result;
  result["o"] = Tensor(DType::BF16, s.v_shape());
  result["hT"] = Tensor(DType::F32, p.inputs.at("h0").shape());
  Tensor states_host(DType::BF16, gla_varlen_states_shape(s, p.N));
  for (Tensor* t : {&result["o"], &result["hT"], &states_host}) poison(*t);
  DeviceTensor o(result["o"]), hT(result["hT"]), states(states_host);
  ASSERT_TRUE(q.get() && k.get() && v.get() && g.get() && h0.get() && d_o.get() && dhT.get() && o.get() &&
              hT.get() && states.get());

  // The forward, saving the states where the backward reads them.
  GlaDeviceArgs fa;
  fa.q = q.get(), fa.k = k.get(), fa.v = v.get(), fa.g = static_cast<const float*>(g.get());
  fa.h0 = s.has_h0 ? static_cast<const float*>(h0.get()) : nullptr;
  fa.o = o.get();
  fa.hT = s.want_hT ? static_cast<float*>(hT.get()) : nullptr;
  fa.states = gla_backward_reads_saved_states(variant) ? states.get() : nullptr;
  fa.varlen = varlen;
  gla_forward({gla::Schedule::Pingpong, gla::StateCarry::Fused}, fa, s, nullptr);
  OVERLAP_GPU_TEST_OK(cudaDeviceSynchronize());
  o.download(result["o"]);
  hT.download(result["hT"]);
  if (!s.want_hT) result.erase("hT");
  expect_outputs_pass(p.forward, result, "forward " + label);

  TensorMap grads;
  grads["dq"] = Tensor(DType::BF16, s.qk_shape());
  grads["dk"] = Tensor(DType::BF16, s.qk_shape());
  grads["dv"] = Tensor(DType::BF16, s.v_shape());
  grads["dg"] = Tensor(DType::F32, s.qk_shape());
  grads["dh0"] = Tensor(DType::F32, p.inputs.at("h0").shape());
  for (auto& [name, t] : grads) poison(t);
  DeviceTensor dq(grads["dq"]), dk(grads["dk"]), dv(grads["dv"]), dg(grads["dg"]), dh0(grads["dh0"]);
  ASSERT_TRUE(dq.get() && dk.get() && dv.get() && dg.get() && dh0.get());
  GlaBackwardArgs a;
  a.q = q.get(), a.k = k.get(), a.v = v.get(), a.g = fa.g, a.h0 = fa.h0, a.do_ = d_o.get();
  a.dhT = s.want_hT ? static_cast<const float*>(dhT.get()) : nullptr;
  a.dq = dq.get(), a.dk = dk.get(), a.dv = dv.get(), a.dg = static_cast<float*>(dg.get());
  a.dh0 = s.has_h0 ? static_cast<float*>(dh0.get()) : nullptr;
  a.states = fa.states;
  a.varlen = varlen;
  gla_backward(variant, a, s, nullptr);
  OVERLAP_GPU_TEST_OK(cudaDeviceSynchronize());
  OVERLAP_GPU_TEST_OK(cudaGetLastError());
  for (auto& [name, t] : grads) {
    if (name == "dh0" && !s.has_h0) continue;
    const DeviceTensor* from = name == "dq" ? &dq : name == "dk" ? &dk : name == "dv" ? &dv : name == "dg" ? &dg : &dh0;
    from->download(t);
  }
  if (!s.has_h0) grads.erase("dh0");
  expect_outputs_pass(p.backward, grads, "backward " + label);
}

std::string case_name(const ::testing::TestParamInfo<GlaVarlenGpu::ParamType>& info) {
  return gpu_test::identifier(gla_backward_variant_name(std::get<0>(info.param)) + "_" + std::get<1>(info.param).name);
}

INSTANTIATE_TEST_SUITE_P(BothBackwardsEveryCase, GlaVarlenGpu,
                         ::testing::Combine(::testing::ValuesIn(all_gla_backward_variants()),
                                            ::testing::ValuesIn(kCases)),
                         case_name);

// Host-side contract; needs no GPU: a dense-only variant, B > 1 and no sequences are refused
// by name before anything runs.
TEST(GlaVarlenContract, RefusesWhatItCannotRun) {
  gla::GlaShape s;
  s.B = 1, s.T = 100, s.H = 1, s.K = 64, s.V = 64, s.has_h0 = false, s.want_hT = false;
  int fake = 0;
  GlaDeviceArgs fa;
  fa.q = fa.k = fa.v = fa.o = &fake;
  fa.g = reinterpret_cast<const float*>(&fake);
  fa.varlen = {&fake, 2};
  const auto message = [&](GlaVariant v, const gla::GlaShape& shape) {
    try {
      gla_forward(v, fa, shape, nullptr);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({gla::Schedule::Pipelined, gla::StateCarry::Fused}, s).find("pingpong_fused only"),
            std::string::npos);
  gla::GlaShape two = s;
  two.B = 2;
  EXPECT_NE(message({gla::Schedule::Pingpong, gla::StateCarry::Fused}, two).find("B must be 1, not 2"),
            std::string::npos);
  fa.varlen.num_seqs = 0;
  EXPECT_NE(message({gla::Schedule::Pingpong, gla::StateCarry::Fused}, s).find("num_seqs must be at least 1"),
            std::string::npos);
  EXPECT_EQ(gla_varlen_max_chunks(s, 3), (100 + 63 * 3) / 64);
  EXPECT_EQ(gla_varlen_states_shape(s, 3), (Shape{4, 1, 64, 64}));
}

// The plan's per-sequence arithmetic (gla_varlen::plan_entry, what each plan thread computes),
// checked on the CPU: for valid offsets the caller's ranges, the walk order longest first with
// ties by index, the chunk states back to back; for malformed offsets (decreasing, past T,
// negative) still a permutation, disjoint ranges inside [0, T] and no more chunk states than the
// bound the buffers are sized for.
struct PlanCheck {
  std::vector<gla_varlen::PlanEntry> entries;
  std::vector<int> order;
};
PlanCheck plan_of(const std::vector<int>& cu, int T) {
  const int n = static_cast<int>(cu.size()) - 1;
  PlanCheck p;
  p.order.assign(static_cast<std::size_t>(n), -1);
  for (int i = 0; i < n; ++i) {
    p.entries.push_back(gla_varlen::plan_entry(cu.data(), n, T, i));
    const int r = p.entries.back().rank;
    EXPECT_TRUE(r >= 0 && r < n && p.order[static_cast<std::size_t>(r)] == -1) << "rank " << r << " of " << i;
    if (r >= 0 && r < n) p.order[static_cast<std::size_t>(r)] = i;
  }
  return p;
}

void expect_sound(const std::vector<int>& cu, int T) {
  const PlanCheck p = plan_of(cu, T);
  const int n = static_cast<int>(cu.size()) - 1;
  int end = 0, chunks = 0;
  for (int i = 0; i < n; ++i) {
    const auto& e = p.entries[static_cast<std::size_t>(i)];
    EXPECT_GE(e.t_begin, end) << "sequence " << i << " overlaps the one before";
    EXPECT_GE(e.length, 0);
    EXPECT_LE(e.t_begin + e.length, T);
    EXPECT_EQ(e.chunks, (e.length + 63) / 64);
    EXPECT_EQ(e.chunk0, chunks);
    end = e.t_begin + e.length;
    chunks += e.chunks;
  }
  EXPECT_LE(chunks, gla_varlen::max_chunks(T, n));
}

TEST(GlaVarlenContract, PlanFollowsValidOffsets) {
  const std::vector<int> cu = {0, 130, 130, 131, 195, 452, 515};
  const PlanCheck p = plan_of(cu, 515);
  for (std::size_t i = 0; i + 1 < cu.size(); ++i) {
    EXPECT_EQ(p.entries[i].t_begin, cu[i]);
    EXPECT_EQ(p.entries[i].length, cu[i + 1] - cu[i]);
  }
  // Chunks 3, 0, 1, 1, 5, 1: longest first, ties by index.
  EXPECT_EQ(p.order, (std::vector<int>{4, 0, 2, 3, 5, 1}));
  EXPECT_EQ(p.entries[4].chunk0, 3 + 0 + 1 + 1);
  expect_sound(cu, 515);
}

TEST(GlaVarlenContract, PlanKeepsMalformedOffsetsInBounds) {
  expect_sound({0, 1000, 0, 1000, 0, 1000}, 1000);  // each range restarting at 0
  expect_sound({-50, 2000, 10, 3000}, 1000);          // past both ends
  expect_sound({500, 400, 300, 200}, 1000);           // decreasing
  expect_sound({0, 0, 0}, 1);                          // all empty
}

}  // namespace
}  // namespace overlap::cuda
