// Every dualgemm variant against every SPEC test shape, in bf16 and fp8, on the shared test
// vectors: inputs and the float64 oracle from the CPU reference (make_vector_set, built once per
// case and shared by the variants), c poisoned on the device before the run, checked with
// expect_outputs_pass (whole-tensor and per-block relative error vs the oracle at the SPEC
// tolerance, no NaN, every element written). Two shapes beyond SPEC's: M and N not multiples of
// any tile with two batches, and the smallest shape the kernels take.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "../gpu_test_support.hpp"
#include "dualgemm/dualgemm_forward.hpp"
#include "vectors/poison.hpp"
#include "vectors/vectors.hpp"
#include "workloads/workload.hpp"

namespace overlap::cuda {
namespace {

using gpu_test::DeviceTensor;
using gpu_test::expect_outputs_pass;
using gpu_test::gpu_present;
using gpu_test::VectorCase;

std::vector<VectorCase> make_cases() {
  const std::vector<std::string> mnk = {
      // SPEC's benchmark shapes, then its test shapes
      "M=256,N=4096,K=7168", "M=512,N=4096,K=7168", "M=256,N=3072,K=4096", "M=512,N=3072,K=7168",
      "M=1536,N=512,K=7168", "M=256,N=512,K=256", "M=3072,N=1024,K=1536", "M=7168,N=1024,K=256",
      "M=7168,N=2304,K=2048", "M=4608,N=384,K=7168", "M=7168,N=384,K=2304", "M=512,N=768,K=7168",
      "M=4096,N=768,K=512",
      // partial tiles in M and N (N = 8 mod 64), two batches; one row, one 8-column strip
      "L=2,M=100,N=200,K=512", "M=1,N=8,K=256"};
  std::vector<VectorCase> out;
  std::uint64_t seed = 1;
  for (const char* fmt : {",fmt=0", ",fmt=1"})
    for (const auto& s : mnk) out.push_back({s + fmt, "default", seed++});
  return out;
}
const std::vector<VectorCase> kCases = make_cases();

// One vector set per case, built on first use and kept for the other variants.
const VectorSet& vectors_for(const VectorCase& c) {
  static std::map<std::string, std::unique_ptr<VectorSet>> cache;
  auto& slot = cache[c.shape];
  if (!slot)
    slot = std::make_unique<VectorSet>(load_vector_set(
        make_vector_set({.workload = "dualgemm", .shape = c.shape, .seed = c.seed, .distribution = c.distribution}),
        "dualgemm " + c.shape));
  return *slot;
}

class DualGemmForwardGpu : public ::testing::TestWithParam<std::tuple<std::string, VectorCase>> {};

TEST_P(DualGemmForwardGpu, MatchesOracle) {
  if (!gpu_present()) GTEST_SKIP() << "no CUDA device";
  const auto& [name, c] = GetParam();
  const dualgemm::Tiling& tiling = dualgemm_tiling(name);
  const auto shape = dualgemm::shape_from_args(ShapeArgs::parse(c.shape, dualgemm::shape_keys()));
  // Every case is one the kernels take: a refusal is a bug, not a skip.
  if (auto why = dualgemm_cannot_implement(tiling, shape)) FAIL() << "refused a shape it supports: " << *why;
  ASSERT_EQ(make_dualgemm_workload()->name(), "dualgemm");
  const VectorSet& vs = vectors_for(c);
  const bool fp8 = shape.format == dualgemm::Format::Fp8E4m3;

  const DeviceTensor a(vs.inputs.at("a")), b1(vs.inputs.at("b1")), b2(vs.inputs.at("b2"));
  std::unique_ptr<DeviceTensor> sa, sb1, sb2;
  DualGemmDeviceArgs args;
  args.a = a.get();
  args.b1 = b1.get();
  args.b2 = b2.get();
  if (fp8) {
    sa = std::make_unique<DeviceTensor>(vs.inputs.at("a_scale"));
    sb1 = std::make_unique<DeviceTensor>(vs.inputs.at("b1_scale"));
    sb2 = std::make_unique<DeviceTensor>(vs.inputs.at("b2_scale"));
    args.a_scale = static_cast<const float*>(sa->get());
    args.b1_scale = static_cast<const float*>(sb1->get());
    args.b2_scale = static_cast<const float*>(sb2->get());
  }
  TensorMap result;
  result["c"] = Tensor(DType::F16, {shape.L, shape.M, shape.N});
  poison(result["c"]);
  const DeviceTensor out(result["c"]);
  args.c = out.get();
  ASSERT_TRUE(a.get() && b1.get() && b2.get() && out.get());

  dualgemm_forward(tiling, args, shape, nullptr);
  OVERLAP_GPU_TEST_OK(cudaDeviceSynchronize());
  OVERLAP_GPU_TEST_OK(cudaGetLastError());
  out.download(result["c"]);
  expect_outputs_pass(vs, result, name + " " + c.shape);
}

std::string case_name(const ::testing::TestParamInfo<DualGemmForwardGpu::ParamType>& info) {
  return gpu_test::case_name(std::get<0>(info.param), std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(AllVariantsAllShapes, DualGemmForwardGpu,
                         ::testing::Combine(::testing::ValuesIn(dualgemm_variant_names()), ::testing::ValuesIn(kCases)),
                         case_name);

// Host-side contract; needs no GPU.
TEST(DualGemmForwardContract, RefusesUnsupportedShapesClearly) {
  const dualgemm::Tiling& t = dualgemm_tiling("tile128x128_stages4_ws");
  dualgemm::DualGemmShape s;
  s.M = 256;
  s.N = 4096;
  s.K = 7168;
  EXPECT_FALSE(dualgemm_cannot_implement(t, s).has_value());
  s.format = dualgemm::Format::Fp8E4m3;
  EXPECT_FALSE(dualgemm_cannot_implement(t, s).has_value());
  s.format = dualgemm::Format::Nvfp4;
  auto why = dualgemm_cannot_implement(t, s);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("Blackwell"), std::string::npos) << *why;
  s.format = dualgemm::Format::Bf16;
  s.N = 4100;
  why = dualgemm_cannot_implement(t, s);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("N=4100"), std::string::npos) << *why;
  s.N = 4096;
  s.K = 7000;
  why = dualgemm_cannot_implement(t, s);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("K=7000"), std::string::npos) << *why;
  EXPECT_THROW(dualgemm_tiling("tile256x256_stages9_ws"), Error);
  // Shared memory of every tiling fits an sm_90 CTA (227 KiB) in both Hopper formats.
  for (const auto& tiling : dualgemm::kTilings)
    for (auto f : {dualgemm::OperandFormat::Bf16, dualgemm::OperandFormat::Fp8E4m3})
      EXPECT_LE(tiling.smem_bytes(f), 227 * 1024) << tiling.name;
}

}  // namespace
}  // namespace overlap::cuda
