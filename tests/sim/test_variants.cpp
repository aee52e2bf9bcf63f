// Every workload x variant x profile predicts at its reference shape, or refuses with a clear
// can_implement reason; predictions are deterministic, monotone in problem size, and errors
// name what is wrong and what is allowed.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <set>
#include <fstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "sim/api.hpp"
#include "tests/sim/sim_test_support.hpp"
#include "sim/variants.hpp"

namespace overlap::sim {
namespace {

// Shapes built with ShapeArgs::set so these tests do not depend on the CPU references.
ShapeArgs shape_of(const std::string& workload, std::int64_t scale = 1) {
  ShapeArgs s;
  if (workload == "gla" || workload == "gla_backward") {
    for (auto [k, v] : {std::pair{"B", 8}, {"T", 4096}, {"H", 16}, {"K", 128}, {"V", 128}, {"h0", 0}, {"hT", 0}}) s.set(k, v);
    s.set("T", 4096 * scale);
  } else if (workload == "linrnn") {
    for (auto [k, v] : {std::pair{"B", 4}, {"T", 2048}, {"d", 256}, {"dv", 64}, {"h0", 0}, {"hT", 0}}) s.set(k, v);
    s.set("T", 2048 * scale);
  } else if (workload == "projchain") {
    for (auto [k, v] : {std::pair{"B", 4}, {"T", 1024}, {"d", 2048}, {"H", 16}, {"dk", 128}}) s.set(k, v);
    s.set("T", 1024 * scale);
  } else {
    for (auto [k, v] : {std::pair{"L", 1}, {"M", 256}, {"N", 4096}, {"K", 7168}, {"fmt", 0}}) s.set(k, v);
    s.set("M", 256 * scale);
  }
  return s;
}

std::vector<std::tuple<std::string, std::string>> all_pairs() {
  std::vector<std::tuple<std::string, std::string>> v;
  for (const auto& m : all_variant_models()) v.emplace_back(m.workload, m.name);
  return v;
}

class EveryVariant : public ::testing::TestWithParam<std::tuple<std::string, std::tuple<std::string, std::string>>> {
 protected:
  HardwareProfile hw = load_profile(std::get<0>(GetParam()));
  std::string workload = std::get<0>(std::get<1>(GetParam()));
  std::string variant = std::get<1>(std::get<1>(GetParam()));
};

TEST_P(EveryVariant, PredictsOrRefusesClearly) {
  const ShapeArgs shape = shape_of(workload);
  const std::string why = cannot_run(hw, workload, variant, shape);
  if (!why.empty()) {
    // The refusal goes through predict() as an error naming variant, GPU and reason.
    try {
      predict(hw, workload, variant, shape);
      FAIL() << "predict ran although cannot_run said: " << why;
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(variant), std::string::npos) << msg;
      EXPECT_NE(msg.find(hw.name), std::string::npos) << msg;
      EXPECT_NE(msg.find(why), std::string::npos) << msg;
    }
    return;
  }
  const Prediction p = predict(hw, workload, variant, shape);
  EXPECT_GT(p.time_us, 0);
  EXPECT_GT(p.hbm_bytes, 0);
  EXPECT_GT(p.flops, 0);
  EXPECT_FALSE(p.bottleneck.empty());
  EXPECT_FALSE(p.kernels.empty());
  for (const auto& [unit, busy] : p.units) {
    EXPECT_GE(busy, 0) << unit;
    EXPECT_LE(busy, 1.0 + 1e-9) << unit;
  }
  EXPECT_LE(p.achieved_GBps, hw.hbm_bandwidth_GBps * 1.0001);
  EXPECT_GE(p.load_hidden_fraction, 0);
  EXPECT_LE(p.load_hidden_fraction, 1);
  const nlohmann::json j = p.to_json();
  for (const char* key : {"time_us", "bottleneck", "flops", "hbm_bytes", "units"}) EXPECT_TRUE(j.contains(key)) << key;
  // Deterministic.
  EXPECT_EQ(predict(hw, workload, variant, shape).to_json(), j);
  // Monotone in problem size.
  const Prediction bigger = predict(hw, workload, variant, shape_of(workload, 2));
  EXPECT_GE(bigger.time_us, p.time_us);
  EXPECT_FALSE(format_prediction(p).empty());
}

INSTANTIATE_TEST_SUITE_P(All, EveryVariant,
                         ::testing::Combine(::testing::ValuesIn(builtin_profile_names()), ::testing::ValuesIn(all_pairs())),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" + std::get<0>(std::get<1>(info.param)) + "_" +
                                  std::get<1>(std::get<1>(info.param));
                         });

using test_support::error_of;

TEST(Variants, EveryWorkloadHasItsSpecVariants) {
  for (const char* v : {"sequential_fused", "sequential_materialized", "pipelined_fused", "pipelined_materialized",
                        "pingpong_fused", "pingpong_materialized", "sequential", "pipelined", "pingpong"})
    EXPECT_NO_THROW(find_variant_model("gla", v)) << v;
  EXPECT_EQ(find_variant_model("gla", "pipelined").name, "pipelined_fused");
  for (const char* v : {"three_kernel", "semi_fused", "full_fused", "chunk_fused"}) EXPECT_NO_THROW(find_variant_model("linrnn", v));
  for (const char* v : {"unfused", "wide_gemm", "epilogue_fused", "cluster_fused"}) EXPECT_NO_THROW(find_variant_model("projchain", v));
  EXPECT_GE(list_variants("dualgemm").size(), 8u);
}

TEST(Variants, UnknownNamesAreErrorsListingWhatIsAllowed) {
  std::string e = error_of([] { find_variant_model("gla", "fast"); });
  EXPECT_NE(e.find("'fast'"), std::string::npos) << e;
  EXPECT_NE(e.find("pipelined_fused"), std::string::npos) << e;
  e = error_of([] { list_variants("attention"); });
  EXPECT_NE(e.find("'attention'"), std::string::npos) << e;
  EXPECT_NE(e.find("linrnn"), std::string::npos) << e;
}

TEST(Variants, HopperOnlyVariantsRefuseOnOlderGpus) {
  const HardwareProfile t4 = load_profile("T4"), a100 = load_profile("A100");
  EXPECT_NE(cannot_run(a100, "gla", "pingpong", shape_of("gla")).find("sm_90"), std::string::npos);
  EXPECT_NE(cannot_run(a100, "projchain", "cluster_fused", shape_of("projchain")).find("sm_90"), std::string::npos);
  ShapeArgs fp4 = shape_of("dualgemm");
  fp4.set("fmt", 2);
  EXPECT_NE(cannot_run(load_profile("H100"), "dualgemm", "tile128x128_stages4_ws", fp4).find("NVFP4"), std::string::npos);
  EXPECT_EQ(cannot_run(load_profile("B200"), "dualgemm", "tile128x128_stages4_ws", fp4), "");
  (void)t4;
}

// A GPU with less shared memory than our Hopper tiling needs gets the tiling a kernel for it
// would take (gla::fit_shared_memory), named in the kernel; only a missing hardware feature
// (pingpong's TMA and wgmma) is a refusal. At the SPEC benchmark shapes, on every profile.
TEST(Variants, GlaPredictsOnEveryGpuExceptWhereAFeatureIsMissing) {
  for (const char* shape_text : {"B=4,T=4096,H=32,K=64,V=64", "B=8,T=4096,H=16,K=128,V=128"})
    for (const auto& name : builtin_profile_names()) {
      const HardwareProfile hw = load_profile(name);
      const ShapeArgs shape = parse_shape("gla", shape_text);
      for (const auto& v : list_variants("gla")) {
        const std::string why = cannot_run(hw, "gla", v.name, shape);
        if (v.name.rfind("pingpong", 0) == 0 && !hw.has_wgmma()) {
          EXPECT_NE(why.find("sm_90"), std::string::npos) << name << " " << v.name << ": " << why;
          continue;
        }
        EXPECT_EQ(why, "") << name << " " << v.name;
        if (!why.empty()) continue;
        const Prediction p = predict(hw, "gla", v.name, shape);
        const bool refitted = p.kernels.front().name.find("refitted") != std::string::npos;
        // Our kernels' own tiling wherever it fits: every Hopper / Blackwell profile here.
        if (hw.has_wgmma()) {
          EXPECT_FALSE(refitted) << name << " " << v.name << ": " << p.kernels.front().name;
        }
      }
    }
}

// dualgemm before sm_90: the warp-specialized and TMA-store variants need TMA (refused, saying
// so); the others run as cp.async kernels with the stages that fit, named as refitted.
TEST(Variants, DualgemmBeforeHopperRefusesOnlyForMissingFeatures) {
  const ShapeArgs shape = parse_shape("dualgemm", "M=256,N=4096,K=7168,fmt=bf16");
  for (const char* gpu : {"T4", "A100"}) {
    const HardwareProfile hw = load_profile(gpu);
    for (const auto& v : list_variants("dualgemm")) {
      const std::string why = cannot_run(hw, "dualgemm", v.name, shape);
      const bool needs_tma = v.name.find("_ws") != std::string::npos || v.name.find("tmastore") != std::string::npos;
      if (needs_tma) {
        EXPECT_NE(why.find("sm_90"), std::string::npos) << gpu << " " << v.name << ": " << why;
      } else {
        EXPECT_EQ(why, "") << gpu << " " << v.name;
      }
    }
  }
  const Prediction p = predict(load_profile("T4"), "dualgemm", "tile128x128_stages4_nows", shape);
  EXPECT_NE(p.kernels.front().name.find("refitted"), std::string::npos) << p.kernels.front().name;
}

TEST(Variants, Fp8ScalesLoadedAfterTheKLoopCostTheEpilogueADramLatency) {
  // The kernels without early_scales load their fp8 scales after the k-loop and the epilogue's
  // first multiply waits them; with early_scales the k-loop hides them. bf16 has no scales.
  const HardwareProfile hw = load_profile("H100");
  const double latency_us = hw.dram_latency_cycles * hw.cycle_ns() / 1000.0;
  for (const char* v : {"tile128x48_stages7_ws", "tile128x48_stages7_ws_tmastore", "tile128x64_stages7_ws"}) {
    const ShapeArgs fp8 = parse_shape("dualgemm", "M=256,N=3072,K=4096,fmt=fp8");
    const double late = predict(hw, "dualgemm", v, fp8).time_us;
    const double early = predict(hw, "dualgemm", std::string(v) + "_es", fp8).time_us;
    EXPECT_GT(late - early, 0.5 * latency_us) << v;  // one tile a CTA: the wait is on its path
    EXPECT_LE(late - early, 1.01 * latency_us) << v;
    const ShapeArgs bf16 = parse_shape("dualgemm", "M=256,N=3072,K=4096,fmt=bf16");
    EXPECT_DOUBLE_EQ(predict(hw, "dualgemm", v, bf16).time_us,
                     predict(hw, "dualgemm", std::string(v) + "_es", bf16).time_us) << v;
  }
}

TEST(Variants, ARingDepthNotAPowerOfTwoCostsItsDivisionEveryKBlock) {
  // The consumers take a k-block's stage and phase by dividing by the ring's depth: free at a
  // power of two, ring_division_cycles (at the clock the tensor rates hold) a k-block otherwise.
  const HardwareProfile hw = load_profile("H100");
  ASSERT_GT(hw.ring_division_cycles, 0);
  HardwareProfile free = hw;
  free.ring_division_cycles = 0;
  const ShapeArgs s = parse_shape("dualgemm", "M=512,N=4096,K=7168,fmt=fp8");  // tensor-bound
  const double kblocks = 2 * 7168 / 128;  // 256 tiles on 132 CTAs: two tiles' k-loops on the busiest
  const double charge_us = kblocks * hw.ring_division_cycles * hw.tensor_cycle_ns() / 1000.0;
  const double charged = predict(hw, "dualgemm", "tile128x64_stages6_ws", s).time_us -
                         predict(free, "dualgemm", "tile128x64_stages6_ws", s).time_us;
  EXPECT_GT(charged, 0.8 * charge_us);
  EXPECT_LT(charged, 1.01 * charge_us);
  EXPECT_DOUBLE_EQ(predict(hw, "dualgemm", "tile128x64_stages4_ws", s).time_us,
                   predict(free, "dualgemm", "tile128x64_stages4_ws", s).time_us);
}

TEST(Variants, UnsupportedShapeIsRefusedWithTheLimit) {
  ShapeArgs s = shape_of("dualgemm");
  s.set("K", 300);
  EXPECT_NE(cannot_run(load_profile("H100"), "dualgemm", "tile128x128_stages4_ws", s).find("multiple of 256"), std::string::npos);
}

// A launch form ("name@key=value", as the GPU library takes it) reaches the model: one segment
// a walk leaves a few-head walk on 8 SMs and is slower than the launcher's split; the kernel
// names its split; forms a variant does not take, unknown keys and out-of-range values are
// refused naming them.
TEST(Variants, LaunchFormsReachTheModelAndAreChecked) {
  const HardwareProfile hw = load_profile("H100");
  ShapeArgs few = shape_of("gla");
  for (auto [k, v] : {std::pair{"B", 1}, {"H", 8}, {"K", 64}, {"V", 64}}) few.set(k, v);
  const Prediction one = predict(hw, "gla", "pingpong_fused@segments=1", few);
  const Prediction split = predict(hw, "gla", "pingpong_fused", few);
  const Prediction two = predict(hw, "gla", "pingpong_fused@segments=2", few);
  EXPECT_GT(one.time_us, two.time_us);
  EXPECT_GT(two.time_us, split.time_us);
  EXPECT_EQ(one.variant, "pingpong_fused@segments=1");
  EXPECT_EQ(one.shape, split.shape);  // the form is in the variant's name, not the shape
  ASSERT_FALSE(two.kernels.empty());
  EXPECT_NE(two.kernels[0].name.find("2 segments"), std::string::npos) << two.kernels[0].name;
  std::string e = error_of([&] { predict(hw, "gla", "sequential_fused@segments=2", few); });
  EXPECT_NE(e.find("takes no launch form"), std::string::npos) << e;
  e = error_of([&] { predict(hw, "gla", "pingpong_fused@units=2", few); });
  EXPECT_NE(e.find("'units'"), std::string::npos) << e;
  EXPECT_NE(cannot_run(hw, "gla", "pingpong_fused@segments=9", few).find("segments=9"), std::string::npos);
}

TEST(Variants, PipeliningHidesLoadsOnHopper) {
  // Not a hard-coded number: the pipelined schedule must hide more of its load time than the
  // sequential one at the same shape, because its loads overlap compute by construction.
  const HardwareProfile hw = load_profile("H100");
  const Prediction seq = predict(hw, "gla", "sequential", shape_of("gla"));
  const Prediction pipe = predict(hw, "gla", "pipelined", shape_of("gla"));
  EXPECT_GT(pipe.load_hidden_fraction, seq.load_hidden_fraction);
  EXPECT_LE(pipe.time_us, seq.time_us);
}

TEST(Variants, TraceIsChromeTraceJsonWithUnitAndRoleTracks) {
  const auto path = std::filesystem::temp_directory_path() / "overlap_sim_trace_test.json";
  PredictOptions opt;
  opt.trace_path = path.string();
  predict(load_profile("H100"), "gla", "pingpong_fused", shape_of("gla"), opt);
  std::ifstream in(path);
  const nlohmann::json j = nlohmann::json::parse(in);
  std::set<std::string> tracks;
  for (const auto& e : j.at("traceEvents"))
    if (e.at("ph") == "M" && e.at("name") == "thread_name") tracks.insert(e.at("args").at("name").get<std::string>());
  EXPECT_TRUE(tracks.count("unit tensor"));
  EXPECT_TRUE(tracks.count("unit copy"));
  // pingpong_fused's roles (sim/models/gla_pingpong_fused_model.cpp), one track each.
  for (const char* role : {"cta0 gating", "cta0 state", "cta0 output"}) EXPECT_TRUE(tracks.count(role)) << role;
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace overlap::sim
