// Every gla backward variant against every shared gla_backward vector shape: inputs, do, dhT and
// the float64 oracle's gradients from the CPU reference (make_vector_set), gradients poisoned on
// the device before the run, checked with expect_outputs_pass (whole-tensor and per-block relative
// error vs the oracle, no NaN, every element written).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <iostream>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "gla/gla_backward.hpp"
#include "gla/gla_forward.hpp"
#include "gla/inputs.hpp"
#include "../gpu_test_support.hpp"
#include "vectors/poison.hpp"
#include "vectors/vectors.hpp"

namespace overlap::cuda {

void PrintTo(const GlaBackwardVariant& v, std::ostream* os) { *os << gla_backward_variant_name(v); }

namespace {

using gpu_test::DeviceTensor;
using gpu_test::expect_outputs_pass;
using gpu_test::gpu_present;
using gpu_test::VectorCase;

// Odd T (1, 63, 130, 257, 1000, 1500, 2000: tail chunks; 64 and 128 exactly), K and V in {64, 128}, gates from
// mild (default, about -0.05 a step) through mixed (-0.85) to strong (-7, where any unanchored
// chunk formula overflows), with and without h0 / hT (so with and without dh0 / dhT).
const std::vector<VectorCase> kCases = {
    {"B=2,T=63,H=2,K=64,V=64,h0=1,hT=1", "default", 11},
    {"B=2,T=63,H=2,K=64,V=64,h0=1,hT=1", "strong_gates", 12},
    {"B=1,T=1,H=1,K=64,V=64,h0=0,hT=1", "default", 13},
    {"B=1,T=1,H=2,K=128,V=128,h0=1,hT=1", "strong_gates", 14},
    {"B=1,T=64,H=1,K=128,V=64,h0=1,hT=0", "mixed_gates", 15},
    {"B=2,T=130,H=3,K=128,V=64,h0=0,hT=0", "default", 16},
    {"B=1,T=257,H=2,K=64,V=128,h0=1,hT=1", "default", 17},
    {"B=1,T=128,H=2,K=128,V=128,h0=0,hT=1", "mixed_gates", 18},
    {"B=1,T=1000,H=2,K=128,V=128,h0=1,hT=1", "strong_gates", 19},
    {"B=1,T=1000,H=1,K=64,V=64,h0=0,hT=1", "default", 20},
    {"B=2,T=700,H=2,K=128,V=128,h0=1,hT=1", "mixed_gates", 21},
    {"B=1,T=640,H=3,K=64,V=128,h0=1,hT=1", "mixed_gates", 22},
    // More chunks than an H100 or H200 has SMs (768, 288): saved_states_ws's persistent CTAs take
    // several each, through both of its buffer hand-offs (mixed gates: single-anchor and anchored
    // chunks in turn).
    {"B=3,T=2000,H=8,K=64,V=64,h0=1,hT=1", "mixed_gates", 23},
    {"B=2,T=1500,H=6,K=128,V=128,h0=0,hT=1", "mixed_gates", 24},
};

class GlaBackwardGpu : public ::testing::TestWithParam<std::tuple<GlaBackwardVariant, VectorCase>> {};

TEST_P(GlaBackwardGpu, MatchesOracle) {
  if (!gpu_present()) GTEST_SKIP() << "no CUDA device";
  const auto& [variant, c] = GetParam();
  const auto shape_args = ShapeArgs::parse(c.shape, gla::GlaShape::keys());
  if (auto why = gla_backward_cannot_implement(variant, gla::GlaShape::from_args(shape_args)))
    FAIL() << "refused a shape it supports: " << *why;
  // Naming the factory links ref/gla/backward_workload.cpp (see gla_forward_test.cpp).
  ASSERT_EQ(gla::make_backward_workload()->name(), "gla_backward");
  const VectorSet vs = load_vector_set(
      make_vector_set({.workload = "gla_backward", .shape = c.shape, .seed = c.seed, .distribution = c.distribution}),
      "gla_backward " + c.shape);
  const gla::GlaShape shape = gla::GlaShape::from_args(vs.shape);

  const Tensor no_state(DType::F32, {1});
  const DeviceTensor q(vs.inputs.at("q")), k(vs.inputs.at("k")), v(vs.inputs.at("v")), g(vs.inputs.at("g"));
  const DeviceTensor d_o(vs.inputs.at("do"));
  const DeviceTensor h0(shape.has_h0 ? vs.inputs.at("h0") : no_state);
  const DeviceTensor dhT(shape.want_hT ? vs.inputs.at("dhT") : no_state);
  TensorMap result;
  result["dq"] = Tensor(DType::BF16, shape.qk_shape());
  result["dk"] = Tensor(DType::BF16, shape.qk_shape());
  result["dv"] = Tensor(DType::BF16, shape.v_shape());
  result["dg"] = Tensor(DType::F32, shape.qk_shape());
  if (shape.has_h0) result["dh0"] = Tensor(DType::F32, shape.state_shape());
  for (auto& [name, t] : result) poison(t);
  DeviceTensor dq(result["dq"]), dk(result["dk"]), dv(result["dv"]), dg(result["dg"]);
  DeviceTensor dh0(shape.has_h0 ? result["dh0"] : no_state);
  ASSERT_TRUE(q.get() && k.get() && v.get() && g.get() && d_o.get() && h0.get() && dhT.get());

  GlaBackwardArgs args;
  args.q = q.get();
  args.k = k.get();
  args.v = v.get();
  args.g = static_cast<const float*>(g.get());
  args.h0 = shape.has_h0 ? static_cast<const float*>(h0.get()) : nullptr;
  args.do_ = d_o.get();
  args.dhT = shape.want_hT ? static_cast<const float*>(dhT.get()) : nullptr;
  args.dq = dq.get();
  args.dk = dk.get();
  args.dv = dv.get();
  args.dg = static_cast<float*>(dg.get());
  args.dh0 = shape.has_h0 ? static_cast<float*>(dh0.get()) : nullptr;
  // saved_states reads S_n as a forward saved them. The forward variant rotates with the case's
  // seed, so that every variant's way of saving them (TMA from the wgmma kernel's state tile,
  // the mma.sync kernels' stores) meets the oracle; one that cannot run here passes it on.
  // The states arrive poisoned: one the forward leaves unwritten fails the gradients.
  Tensor states_host(DType::BF16, gla_saved_states_shape(shape));
  poison(states_host);
  const DeviceTensor states(states_host);
  const DeviceTensor o(Tensor(DType::BF16, shape.v_shape()).nbytes());
  ASSERT_TRUE(states.get() && o.get());
  if (gla_backward_reads_saved_states(variant)) {
    const auto& forwards = all_gla_variants();
    std::size_t pick = static_cast<std::size_t>(c.seed) % forwards.size();
    while (!gla_can_implement(forwards[pick], shape)) pick = (pick + 1) % forwards.size();
    GlaDeviceArgs fa;
    fa.q = q.get();
    fa.k = k.get();
    fa.v = v.get();
    fa.g = args.g;
    fa.h0 = args.h0;
    fa.o = o.get();
    fa.states = states.get();
    gla::GlaShape forward_shape = shape;
    forward_shape.want_hT = false;
    gla_forward(forwards[pick], fa, forward_shape, nullptr);
    args.states = states.get();
    std::cout << "[ forward  ] states saved by " << gla_variant_name(forwards[pick]) << "\n";
  }
  gla_backward(variant, args, shape, nullptr);
  OVERLAP_GPU_TEST_OK(cudaDeviceSynchronize());
  OVERLAP_GPU_TEST_OK(cudaGetLastError());

  dq.download(result["dq"]);
  dk.download(result["dk"]);
  dv.download(result["dv"]);
  dg.download(result["dg"]);
  if (shape.has_h0) dh0.download(result["dh0"]);
  expect_outputs_pass(vs, result, gla_backward_variant_name(variant) + " " + c.shape + " " + c.distribution);
}

std::string case_name(const ::testing::TestParamInfo<GlaBackwardGpu::ParamType>& info) {
  return gpu_test::case_name(gla_backward_variant_name(std::get<0>(info.param)), std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(AllVariantsAllShapes, GlaBackwardGpu,
                         ::testing::Combine(::testing::ValuesIn(all_gla_backward_variants()),
                                            ::testing::ValuesIn(kCases)),
                         case_name);

// Host-side contract; needs no GPU.
TEST(GlaBackwardContract, RefusesUnsupportedShapesClearly) {
  for (GlaBackwardVariant v : all_gla_backward_variants()) {
    gla::GlaShape s;
    s.B = 1;
    s.T = 10;
    s.H = 1;
    s.K = 96;
    s.V = 64;
    auto why = gla_backward_cannot_implement(v, s);
    ASSERT_TRUE(why.has_value());
    EXPECT_NE(why->find("K = 96"), std::string::npos) << *why;
    s.K = 64;
    s.V = 256;
    why = gla_backward_cannot_implement(v, s);
    ASSERT_TRUE(why.has_value());
    EXPECT_NE(why->find("V = 256"), std::string::npos) << *why;
    s.V = 64;
    EXPECT_FALSE(gla_backward_cannot_implement(v, s).has_value());
    EXPECT_THROW(gla_backward(v, GlaBackwardArgs{}, s, nullptr), Error);  // null pointers
    EXPECT_EQ(parse_gla_backward_variant(gla_backward_variant_name(v)), v);
  }
  EXPECT_THROW(parse_gla_backward_variant("warp_speed"), Error);
}

}  // namespace
}  // namespace overlap::cuda
