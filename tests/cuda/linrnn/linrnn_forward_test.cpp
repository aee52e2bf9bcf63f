// Every linrnn variant against every shared test-vector shape: inputs and the float64 oracle
// from the CPU reference (make_vector_set), outputs poisoned on the device before the run,
// checked with expect_outputs_pass (whole-tensor and per-block relative error vs the oracle, no
// NaN, every element written).
// Each case runs twice on one workspace, so the look-back's counters and epochs are tested
// across launches too. chunk_fused packs W inside the call on the first launch and takes W
// packed by linrnn_pack_weight on the second.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <ostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "../gpu_test_support.hpp"
#include "linrnn/linrnn_forward.hpp"
#include "vectors/poison.hpp"
#include "vectors/vectors.hpp"

namespace overlap::linrnn {
// gtest prints parameters by name rather than as bytes.
void PrintTo(const Variant& v, std::ostream* os) { *os << cuda::linrnn_variant_name(v); }
}  // namespace overlap::linrnn

namespace overlap::cuda {
namespace {

using gpu_test::DeviceTensor;
using gpu_test::expect_outputs_pass;
using gpu_test::gpu_present;
using gpu_test::VectorCase;

// Odd T (1, 63, 130, 257, 1000, 1100: batch rows start inside chunk_fused's 128-row tiles), d
// not a multiple of the 64-wide k-slice (72, 200), dv not a multiple of the 64-channel block
// (8, 40, 96), with and without h0 / hT, long_memory (a ~ 0.99: carries cross many tiles), T a
// multiple of 128 with two channel blocks (tiles that start a batch row and skip the look-back,
// beside tiles that wait), and one case with more tiles than persistent CTAs (B=2, T=1100,
// dv=1024: 18 x 16 = 288 tiles, about 2.2 per CTA: look-back waits across the CTAs' passes).
const std::vector<VectorCase> kCases = {
    {"B=2,T=63,d=64,dv=32,h0=1,hT=1", "default", 1},
    {"B=2,T=63,d=64,dv=32,h0=1,hT=1", "long_memory", 2},
    {"B=1,T=1,d=64,dv=64,h0=0,hT=1", "default", 3},
    {"B=3,T=1,d=72,dv=8,h0=1,hT=1", "long_memory", 4},
    {"B=2,T=130,d=128,dv=96,h0=0,hT=0", "default", 5},
    {"B=1,T=257,d=200,dv=64,h0=1,hT=1", "long_memory", 6},
    {"B=2,T=1000,d=64,dv=40,h0=1,hT=1", "long_memory", 7},
    {"B=4,T=2048,d=256,dv=64,h0=0,hT=1", "default", 8},
    {"B=2,T=1100,d=128,dv=1024,h0=1,hT=1", "long_memory", 9},
    {"B=3,T=256,d=64,dv=128,h0=1,hT=1", "long_memory", 10},
};

class LinrnnForwardGpu : public ::testing::TestWithParam<std::tuple<linrnn::Variant, VectorCase>> {};

TEST_P(LinrnnForwardGpu, MatchesOracle) {
  if (!gpu_present()) GTEST_SKIP() << "no CUDA device";
  const auto& [variant, c] = GetParam();
  const std::string name = linrnn_variant_name(variant);
  if (auto why = linrnn_cannot_implement(variant, linrnn::LinrnnShape::from_args(
                                                      ShapeArgs::parse(c.shape, linrnn::shape_keys()))))
    FAIL() << "refused a shape it supports: " << *why;  // every variant runs every case
  // Naming the workload links ref/linrnn/workload.cpp from the static library, so the
  // registry gets the real linrnn workload.
  ASSERT_EQ(make_linrnn_workload()->name(), "linrnn");
  const VectorSet vs = load_vector_set(
      make_vector_set({.workload = "linrnn", .shape = c.shape, .seed = c.seed, .distribution = c.distribution}),
      "linrnn " + c.shape);
  const linrnn::LinrnnShape shape = linrnn::LinrnnShape::from_args(vs.shape);

  const DeviceTensor x(vs.inputs.at("x")), W(vs.inputs.at("W"));
  const Tensor no_state(DType::F32, {1});
  const DeviceTensor h0(shape.has_h0 ? vs.inputs.at("h0") : no_state);
  TensorMap result;
  result["y"] = Tensor(DType::BF16, shape.y_shape());
  if (shape.want_hT) result["hT"] = Tensor(DType::F32, shape.state_shape());
  DeviceTensor y(result["y"]);
  DeviceTensor hT(shape.want_hT ? result["hT"] : no_state);
  const std::size_t ws_bytes = linrnn_workspace_bytes(variant, shape);
  const DeviceTensor ws(ws_bytes ? ws_bytes : 1);
  ASSERT_TRUE(x.get() && W.get() && h0.get() && y.get() && hT.get() && ws.get());
  OVERLAP_GPU_TEST_OK(cudaMemset(ws.get(), 0, ws.bytes()));

  LinrnnDeviceArgs args;
  args.x = x.get();
  args.W = W.get();
  args.h0 = shape.has_h0 ? static_cast<const float*>(h0.get()) : nullptr;
  args.y = y.get();
  args.hT = shape.want_hT ? static_cast<float*>(hT.get()) : nullptr;
  args.workspace = ws_bytes ? ws.get() : nullptr;
  const bool packs = variant == linrnn::Variant::ChunkFused;
  const DeviceTensor w_packed(packs ? linrnn_packed_weight_bytes(shape) : 1);
  ASSERT_TRUE(w_packed.get());
  // The second launch reuses the workspace (look-back counters, epochs and words) with other
  // inputs (another seed), so a stale word of the first launch would be a wrong value there.
  const VectorSet second = load_vector_set(
      make_vector_set({.workload = "linrnn", .shape = c.shape, .seed = c.seed + 1000, .distribution = c.distribution}),
      "linrnn " + c.shape + " second set");
  for (int launch = 0; launch < 2; ++launch) {
    const VectorSet& set = launch == 0 ? vs : second;
    if (launch > 0) {
      x.upload(set.inputs.at("x"));
      W.upload(set.inputs.at("W"));
      if (shape.has_h0) h0.upload(set.inputs.at("h0"));
      if (packs) {
        linrnn_pack_weight(W.get(), w_packed.get(), shape, nullptr);
        args.w_packed = w_packed.get();
      }
    }
    poison(result["y"]);
    y.upload(result["y"]);
    if (shape.want_hT) {
      poison(result["hT"]);
      hT.upload(result["hT"]);
    }
    linrnn_forward(variant, args, shape, nullptr);
    OVERLAP_GPU_TEST_OK(cudaDeviceSynchronize());
    OVERLAP_GPU_TEST_OK(cudaGetLastError());
    y.download(result["y"]);
    if (shape.want_hT) hT.download(result["hT"]);
    expect_outputs_pass(set, result, name + " " + c.shape + " " + c.distribution + " launch " + std::to_string(launch));
  }
}

std::string case_name(const ::testing::TestParamInfo<LinrnnForwardGpu::ParamType>& info) {
  return gpu_test::case_name(linrnn_variant_name(std::get<0>(info.param)), std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(AllVariantsAllShapes, LinrnnForwardGpu,
                         ::testing::Combine(::testing::ValuesIn(all_linrnn_variants()), ::testing::ValuesIn(kCases)),
                         case_name);

// Host-side contract; needs no GPU.
TEST(LinrnnForwardContract, RefusesUnsupportedShapesClearly) {
  linrnn::LinrnnShape s;
  s.B = 1;
  s.T = 10;
  s.d = 60;  // not a multiple of 8
  s.dv = 64;
  for (linrnn::Variant v : all_linrnn_variants()) {
    const auto why = linrnn_cannot_implement(v, s);
    ASSERT_TRUE(why.has_value()) << linrnn_variant_name(v);
    EXPECT_NE(why->find(linrnn_variant_name(v)), std::string::npos) << *why;
    EXPECT_NE(why->find("d = 60"), std::string::npos) << *why;
  }
  s.d = 64;
  s.dv = 12;
  for (linrnn::Variant v : all_linrnn_variants()) EXPECT_FALSE(linrnn_can_implement(v, s)) << linrnn_variant_name(v);
  s.dv = 64;
  for (linrnn::Variant v : all_linrnn_variants()) EXPECT_TRUE(linrnn_can_implement(v, s)) << linrnn_variant_name(v);
  EXPECT_THROW(parse_linrnn_variant("warp_speed"), Error);
  for (linrnn::Variant v : all_linrnn_variants()) EXPECT_EQ(parse_linrnn_variant(linrnn_variant_name(v)), v);
  EXPECT_EQ(linrnn_workspace_bytes(linrnn::Variant::FullFused, s), 0u);
  EXPECT_GT(linrnn_workspace_bytes(linrnn::Variant::ChunkFused, s), 0u);
}

}  // namespace
}  // namespace overlap::cuda
