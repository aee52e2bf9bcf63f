// Every gla variant against every shared test-vector shape: inputs and the float64 oracle
// from the CPU reference (make_vector_set), outputs poisoned on the device before the run,
// checked with expect_outputs_pass (whole-tensor and per-block relative error vs the oracle, no NaN,
// every element written).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "gla/gla_forward.hpp"
#include "gla/inputs.hpp"
#include "../gpu_test_support.hpp"
#include "vectors/poison.hpp"
#include "vectors/vectors.hpp"

namespace overlap::cuda {

// gtest prints parameters by name rather than as bytes.
void PrintTo(const GlaVariant& v, std::ostream* os) { *os << gla_variant_name(v); }

namespace {

using gpu_test::DeviceTensor;
using gpu_test::expect_outputs_pass;
using gpu_test::gpu_present;
using gpu_test::VectorCase;

// Odd T (1, 63, 130, 257, 1000: tail chunks), K and V in {64, 128}, strong gates (about -7 per
// step, where an unanchored chunk formula overflows), mixed gates (the pingpong fused kernel's
// single-anchor and anchored paths in one sequence), with and without h0 / hT.
const std::vector<VectorCase> kCases = {
    {"B=2,T=63,H=2,K=64,V=64,h0=1,hT=1", "default", 1},
    {"B=2,T=63,H=2,K=64,V=64,h0=1,hT=1", "strong_gates", 2},
    {"B=1,T=1,H=1,K=64,V=64,h0=0,hT=1", "default", 3},
    {"B=1,T=1,H=2,K=128,V=128,h0=1,hT=1", "strong_gates", 4},
    {"B=2,T=130,H=3,K=128,V=64,h0=0,hT=0", "default", 5},
    {"B=1,T=257,H=2,K=64,V=128,h0=1,hT=1", "default", 6},
    {"B=1,T=1000,H=2,K=128,V=128,h0=1,hT=1", "strong_gates", 7},
    {"B=1,T=1000,H=1,K=64,V=64,h0=0,hT=1", "default", 8},
    {"B=2,T=700,H=2,K=128,V=128,h0=1,hT=1", "mixed_gates", 9},
    {"B=1,T=640,H=3,K=64,V=128,h0=1,hT=1", "mixed_gates", 10},
};

class GlaForwardGpu : public ::testing::TestWithParam<std::tuple<GlaVariant, VectorCase>> {};

TEST_P(GlaForwardGpu, MatchesOracle) {
  if (!gpu_present()) GTEST_SKIP() << "no CUDA device";
  const auto& [variant, c] = GetParam();
  // Every variant runs every vector shape on a Hopper GPU: a refusal here is a bug, not a skip.
  if (auto why = gla_cannot_implement(variant, gla::GlaShape::from_args(ShapeArgs::parse(c.shape, gla::GlaShape::keys()))))
    FAIL() << "refused a shape it supports: " << *why;
  // Naming gla::make_workload links ref/gla/workload.cpp from the static library, so the
  // registry gets the real gla workload rather than the weak "not built yet" fallback.
  ASSERT_EQ(gla::make_workload()->name(), "gla");
  const VectorSet vs = load_vector_set(
      make_vector_set({.workload = "gla", .shape = c.shape, .seed = c.seed, .distribution = c.distribution}),
      "gla " + c.shape);
  const gla::GlaShape shape = gla::GlaShape::from_args(vs.shape);

  const DeviceTensor q(vs.inputs.at("q")), k(vs.inputs.at("k")), v(vs.inputs.at("v")), g(vs.inputs.at("g"));
  const Tensor no_state(DType::F32, {1});
  const DeviceTensor h0(shape.has_h0 ? vs.inputs.at("h0") : no_state);
  TensorMap result;
  result["o"] = Tensor(DType::BF16, shape.v_shape());
  if (shape.want_hT) result["hT"] = Tensor(DType::F32, shape.state_shape());
  DeviceTensor o(result["o"]);
  DeviceTensor hT(shape.want_hT ? result["hT"] : no_state);
  ASSERT_TRUE(q.get() && k.get() && v.get() && g.get() && h0.get() && o.get() && hT.get());

  GlaDeviceArgs args;
  args.q = q.get();
  args.k = k.get();
  args.v = v.get();
  args.g = static_cast<const float*>(g.get());
  args.h0 = shape.has_h0 ? static_cast<const float*>(h0.get()) : nullptr;
  args.o = o.get();
  args.hT = shape.want_hT ? static_cast<float*>(hT.get()) : nullptr;

  // Launch forms the library picks by shape and GPU, forced here in turn through the launch
  // options (the test shapes are small, so the shape alone would pick one): the pingpong
  // materialized carry's one or two work units per CTA, the pingpong fused carry's 64 or 128
  // V columns per CTA, each walk whole or split along T into three segments (the later ones
  // walking the earlier chunks state-only).
  std::vector<GlaLaunchOptions> forms = {{}};
  if (variant.schedule == gla::Schedule::Pingpong && variant.carry == gla::StateCarry::Materialized)
    forms = {{.pingpong_units_per_cta = 1}, {.pingpong_units_per_cta = 2}};
  if (variant.schedule == gla::Schedule::Pingpong && variant.carry == gla::StateCarry::Fused) {
    forms.clear();
    for (int bv : {64, 128})
      for (int segments : {1, 3})
        if (shape.V % bv == 0) forms.push_back({.pingpong_block_v = bv, .pingpong_segments = segments});
  }
  for (const GlaLaunchOptions& options : forms) {
    std::string form;
    if (options.pingpong_units_per_cta) form = " units_per_cta=" + std::to_string(options.pingpong_units_per_cta);
    if (options.pingpong_block_v)
      form = " block_v=" + std::to_string(options.pingpong_block_v) +
             " segments=" + std::to_string(options.pingpong_segments);
    poison(result["o"]);
    o.upload(result["o"]);
    if (shape.want_hT) {
      poison(result["hT"]);
      hT.upload(result["hT"]);
    }
    gla_forward(variant, args, shape, nullptr, options);
    OVERLAP_GPU_TEST_OK(cudaDeviceSynchronize());
    OVERLAP_GPU_TEST_OK(cudaGetLastError());

    o.download(result["o"]);
    if (shape.want_hT) hT.download(result["hT"]);
    expect_outputs_pass(vs, result, gla_variant_name(variant) + form + " " + c.shape + " " + c.distribution, form);
  }
}

std::string case_name(const ::testing::TestParamInfo<GlaForwardGpu::ParamType>& info) {
  return gpu_test::case_name(gla_variant_name(std::get<0>(info.param)), std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(AllVariantsAllShapes, GlaForwardGpu,
                         ::testing::Combine(::testing::ValuesIn(all_gla_variants()), ::testing::ValuesIn(kCases)),
                         case_name);

// Host-side contract; needs no GPU.
TEST(GlaForwardContract, RefusesUnsupportedShapesClearly) {
  gla::GlaShape s;
  s.B = 1;
  s.T = 10;
  s.H = 1;
  s.K = 96;
  s.V = 64;
  for (const GlaVariant& v : all_gla_variants()) {
    const auto why = gla_cannot_implement(v, s);
    ASSERT_TRUE(why.has_value()) << gla_variant_name(v);
    EXPECT_NE(why->find(gla_variant_name(v)), std::string::npos) << *why;
  }
  s.K = 64;
  EXPECT_TRUE(gla_can_implement(default_gla_variant(s), s));
  EXPECT_THROW(parse_gla_variant("warp_speed"), Error);
  EXPECT_THROW(gla_forward(default_gla_variant(s), GlaDeviceArgs{}, s, nullptr, {.pingpong_units_per_cta = 3}), Error);
  EXPECT_THROW(gla_forward(default_gla_variant(s), GlaDeviceArgs{}, s, nullptr, {.pingpong_block_v = 128}), Error);
  EXPECT_THROW(gla_forward(default_gla_variant(s), GlaDeviceArgs{}, s, nullptr, {.pingpong_segments = 9}), Error);
  for (const GlaVariant& v : all_gla_variants()) EXPECT_EQ(parse_gla_variant(gla_variant_name(v)), v);
}

}  // namespace
}  // namespace overlap::cuda
