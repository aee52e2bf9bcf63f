// Every projchain variant against every shared test-vector shape: inputs and the float64 oracle
// from the CPU reference (make_vector_set), outputs poisoned on the device before each run,
// checked with expect_outputs_pass (whole-tensor and per-block relative error vs the oracle at
// the SPEC tolerance, no NaN, every element written). The wide variants run twice: packing the
// weights inside the call, and with a weight packed beforehand by projchain_pack_weights.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <ostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "../gpu_test_support.hpp"
#include "projchain/projchain_forward.hpp"
#include "vectors/poison.hpp"
#include "vectors/vectors.hpp"
#include "workloads/workload.hpp"

namespace overlap::projchain {
// gtest prints parameters by name rather than as bytes.
void PrintTo(const Variant& v, std::ostream* os) { *os << cuda::projchain_variant_name(v); }
}  // namespace overlap::projchain

namespace overlap::cuda {
namespace {

using gpu_test::DeviceTensor;
using gpu_test::expect_outputs_pass;
using gpu_test::gpu_present;
using gpu_test::VectorCase;

// N not a multiple of the 128-row tile (66, 130, 141, 200, 258, 1000), H not a power of 2
// (3, 5: wide widths 771 and 2565, so the packed stride is padded), dk 64 and 128 (dk 32:
// epilogue_fused refuses it), one head (H=1), zero_key_head (k's head 0 must come out 0).
const std::vector<VectorCase> kCases = {
    {"B=2,T=33,d=64,H=2,dk=64", "default", 1},
    {"B=1,T=130,d=128,H=3,dk=64", "zero_key_head", 2},
    {"B=3,T=47,d=96,H=3,dk=128", "default", 3},
    {"B=1,T=200,d=256,H=5,dk=128", "zero_key_head", 4},
    {"B=2,T=129,d=64,H=1,dk=64", "default", 5},
    {"B=1,T=17,d=32,H=2,dk=32", "default", 6},
    {"B=2,T=500,d=512,H=4,dk=128", "default", 7},
    {"B=1,T=1000,d=384,H=6,dk=64", "zero_key_head", 8},
    // H·dk a multiple of the 256-wide tile: epilogue_fused's per-tile fast path (the others
    // have tiles straddling two outputs: its per-element path).
    {"B=1,T=300,d=128,H=8,dk=64", "zero_key_head", 9},
    {"B=3,T=100,d=64,H=2,dk=128", "default", 10},
    // More tiles than SMs (64 x 33 = 2112 tiles of 128x256): the persistent scheduler's later
    // tiles per CTA, the cluster multicast across them, and the tile order used from N = 8192.
    {"B=2,T=4096,d=64,H=16,dk=128", "default", 11},
};


class ProjchainForwardGpu : public ::testing::TestWithParam<std::tuple<ProjchainVariant, VectorCase>> {};

TEST_P(ProjchainForwardGpu, MatchesOracle) {
  if (!gpu_present()) GTEST_SKIP() << "no CUDA device";
  const auto& [variant, c] = GetParam();
  const std::string name = projchain_variant_name(variant);
  const ProjchainShape pshape = ProjchainShape::from_args(ShapeArgs::parse(c.shape, projchain::shape_keys()));
  // The only refusals the cases should meet: cluster_fused (not implemented) and
  // epilogue_fused at dk outside {64, 128}. Any other refusal is a bug, not a skip.
  const bool refusal_expected = variant == ProjchainVariant::ClusterFused ||
                                (variant == ProjchainVariant::EpilogueFused && pshape.dk != 64 && pshape.dk != 128);
  if (auto why = projchain_cannot_implement(variant, pshape)) {
    if (refusal_expected) GTEST_SKIP() << *why;
    FAIL() << "refused a shape it supports: " << *why;
  }
  ASSERT_FALSE(refusal_expected) << "ran a shape it should refuse";
  // Naming the workload links ref/projchain/workload.cpp, so the registry gets the real one.
  ASSERT_EQ(make_projchain_workload()->name(), "projchain");
  const VectorSet vs = load_vector_set(
      make_vector_set({.workload = "projchain", .shape = c.shape, .seed = c.seed, .distribution = c.distribution}),
      "projchain " + c.shape);
  const ProjchainShape shape = ProjchainShape::from_args(vs.shape);

  const DeviceTensor x(vs.inputs.at("x")), wq(vs.inputs.at("W_q")), wk(vs.inputs.at("W_k")),
      wv(vs.inputs.at("W_v")), wg(vs.inputs.at("W_g")), wa(vs.inputs.at("W_alpha"));
  TensorMap result;
  for (std::string_view out : projchain::kOutputNames)
    result[std::string(out)] =
        Tensor(DType::BF16, out == "alpha" ? shape.alpha_output_shape() : shape.head_output_shape());
  const DeviceTensor q(result["q"]), k(result["k"]), v(result["v"]), g(result["g"]), alpha(result["alpha"]);
  const DeviceTensor packed(packed_weight_bytes(shape));
  ASSERT_TRUE(x.get() && wq.get() && wk.get() && wv.get() && wg.get() && wa.get() && q.get() && k.get() && v.get() &&
              g.get() && alpha.get() && packed.get());

  ProjchainDeviceArgs args;
  args.x = x.get();
  args.w_q = wq.get();
  args.w_k = wk.get();
  args.w_v = wv.get();
  args.w_g = wg.get();
  args.w_alpha = wa.get();
  args.q = q.get();
  args.k = k.get();
  args.v = v.get();
  args.g = g.get();
  args.alpha = alpha.get();

  // Each way of running the variant: packing the weights inside the call, and (wide variants)
  // beforehand. epilogue_fused also runs with explicit tile orders (column tiles per strip,
  // ProjchainDeviceArgs::fused_strip_n; 0 = the tiling's choice): AlongM (1), and strips of 4
  // and 7, which leave a narrower last strip on the shapes with many column tiles (33 = 8·4 + 1
  // = 4·7 + 5 on the last case).
  std::vector<std::pair<bool, int>> modes = {{false, 0}};
  if (variant != ProjchainVariant::Unfused) modes.emplace_back(true, 0);
  if (variant == ProjchainVariant::EpilogueFused)
    for (const int strip : {1, 4, 7}) modes.emplace_back(true, strip);
  for (const auto& [prepacked, strip] : modes) {
    args.fused_strip_n = strip;
    for (auto& [out_name, t] : result) poison(t);
    q.upload(result["q"]);
    k.upload(result["k"]);
    v.upload(result["v"]);
    g.upload(result["g"]);
    alpha.upload(result["alpha"]);
    if (prepacked) {
      OVERLAP_GPU_TEST_OK(cudaMemset(packed.get(), 0xff, packed_weight_bytes(shape)));  // NaN pattern, padding included
      projchain_pack_weights(variant, args, packed.get(), shape, nullptr);
    }
    args.w_packed = prepacked ? packed.get() : nullptr;
    projchain_forward(variant, args, shape, nullptr);
    OVERLAP_GPU_TEST_OK(cudaDeviceSynchronize());
    OVERLAP_GPU_TEST_OK(cudaGetLastError());
    q.download(result["q"]);
    k.download(result["k"]);
    v.download(result["v"]);
    g.download(result["g"]);
    alpha.download(result["alpha"]);
    const std::string label = name + (prepacked ? " (prepacked)" : "") +
                              (strip ? " strip " + std::to_string(strip) : std::string()) + " " + c.shape + " " +
                              c.distribution;
    expect_outputs_pass(vs, result, label);
    if (c.distribution == "zero_key_head") {
      // Head 0 of k has norm 0: exact zeros (the eps path), never NaN.
      const std::vector<double> kv = result["k"].to_f64();
      for (std::int64_t n = 0; n < shape.N(); ++n)
        for (std::int64_t i = 0; i < shape.dk; ++i)
          ASSERT_EQ(kv[n * shape.heads_width() + i], 0.0) << label << ": k[" << n << ", " << i << "]";
    }
  }
}

std::string case_name(const ::testing::TestParamInfo<ProjchainForwardGpu::ParamType>& info) {
  return gpu_test::case_name(projchain_variant_name(std::get<0>(info.param)), std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(AllVariantsAllShapes, ProjchainForwardGpu,
                         ::testing::Combine(::testing::ValuesIn(all_projchain_variants()), ::testing::ValuesIn(kCases)),
                         case_name);

// Host-side contract; needs no GPU.
TEST(ProjchainForwardContract, RefusesUnsupportedShapesClearly) {
  ProjchainShape s;
  s.B = 4;
  s.T = 512;
  s.d = 2048;
  s.H = 16;
  s.dk = 128;
  EXPECT_TRUE(projchain_can_implement(ProjchainVariant::Unfused, s));
  EXPECT_TRUE(projchain_can_implement(ProjchainVariant::WideGemm, s));
  EXPECT_TRUE(projchain_can_implement(ProjchainVariant::EpilogueFused, s));
  EXPECT_EQ(packed_weight_ld(s), 8208);  // 4·16·128 + 16, already a multiple of 8
  const auto cluster = projchain_cannot_implement(ProjchainVariant::ClusterFused, s);
  ASSERT_TRUE(cluster.has_value());
  EXPECT_NE(cluster->find("cluster_fused: not implemented"), std::string::npos) << *cluster;

  s.dk = 96;  // not a divisor of the 256-wide tile
  auto why = projchain_cannot_implement(ProjchainVariant::EpilogueFused, s);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("dk = 96"), std::string::npos) << *why;
  EXPECT_TRUE(projchain_can_implement(ProjchainVariant::Unfused, s));

  s.dk = 128;
  s.d = 100;  // rows of x not 16-byte multiples: TMA cannot load them
  why = projchain_cannot_implement(ProjchainVariant::EpilogueFused, s);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("d = 100"), std::string::npos) << *why;

  s.d = 64;
  s.H = 3;
  s.dk = 64;
  EXPECT_EQ(packed_weight_ld(s), 776);  // 771 padded to 8: only the stride, not the problem
  EXPECT_THROW(parse_projchain_variant("warp_speed"), Error);
  for (const ProjchainVariant v : all_projchain_variants()) EXPECT_EQ(parse_projchain_variant(projchain_variant_name(v)), v);
}

}  // namespace
}  // namespace overlap::cuda
