// Schedule files: a variant described as data predicts without recompiling; mistakes are
// clear errors.
#include <gtest/gtest.h>

#include <functional>

#include "core/error.hpp"
#include "sim/api.hpp"
#include "tests/sim/sim_test_support.hpp"
#include "sim/expr.hpp"
#include "sim/schedule_file.hpp"

namespace overlap::sim {
namespace {

ShapeArgs gla_shape(std::int64_t T, std::int64_t head_dim = 128) {
  ShapeArgs s;
  for (auto [k, v] : {std::pair{"B", 8}, {"T", 4096}, {"H", 16}, {"K", 128}, {"V", 128}, {"h0", 0}, {"hT", 0}}) s.set(k, v);
  s.set("T", T);
  s.set("K", head_dim);
  s.set("V", head_dim);
  return s;
}

using test_support::error_of;

class ExampleSchedule : public ::testing::TestWithParam<std::string> {};

TEST_P(ExampleSchedule, PredictsAndGrowsWithT) {
  const ScheduleFile f = read_schedule_file(std::string(OVERLAP_SIM_EXAMPLES) + "/" + GetParam());
  const HardwareProfile hw = load_profile("H100");
  // Head dims 64: three stages of K=128 tiles do not fit in 227 KiB (the model refuses them).
  const ShapeArgs small = gla_shape(1024, 64), large = gla_shape(4096, 64);
  const Prediction a = predict_kernels(hw, f.workload, f.name, small, build_schedule(f, hw, small));
  const Prediction b = predict_kernels(hw, f.workload, f.name, large, build_schedule(f, hw, large));
  EXPECT_GT(a.time_us, 0);
  EXPECT_GT(b.time_us, a.time_us);
}

INSTANTIATE_TEST_SUITE_P(Examples, ExampleSchedule,
                         ::testing::Values("gla_pingpong_materialized_3stages.json", "stream_copy_roles.json"));

TEST(ScheduleFile, MistakesNameTheirPlace) {
  const HardwareProfile hw = load_profile("H100");
  const auto build = [&](const std::string& text) { build_schedule(parse_schedule(text, "f.json"), hw, gla_shape(64)); };
  std::string e = error_of([&] {
    build(R"({"workload": "gla", "kernels": [{"ctas": "B*Q", "loop": {"loads": [{"op": "load", "bytes": 1}]}}]})");
  });
  EXPECT_NE(e.find("unknown name 'Q'"), std::string::npos) << e;
  EXPECT_NE(e.find("kernels[0].ctas"), std::string::npos) << e;
  e = error_of([&] {
    build(R"({"workload": "gla", "kernels": [{"ctas": 1, "loop": {"loads": [{"op": "teleport", "bytes": 1}]}}]})");
  });
  EXPECT_NE(e.find("unknown op 'teleport'"), std::string::npos) << e;
  e = error_of([&] { build(R"({"workload": "gla", "kernels": [{"ctas": 1, "colour": "red", "loop": {}}]})"); });
  EXPECT_NE(e.find("unknown key 'colour'"), std::string::npos) << e;
  e = error_of([&] {
    build(R"({"workload": "gla", "kernels": [{"ctas": 1, "barriers": [{"name": "full"}], "roles": [{"body": [{"op": "wait", "barrier": "fulll"}]}]}]})");
  });
  EXPECT_NE(e.find("unknown barrier 'fulll'"), std::string::npos) << e;
}

// "store_as" names how a store writes (fragment, lines, bulk): a fragment store of the same
// bytes takes longer on a GPU whose profile measured both; anything else is a clear error.
TEST(ScheduleFile, StoresSayHowTheyWrite) {
  const HardwareProfile hw = load_profile("H100");
  const auto text = [](const std::string& as) {
    return R"({"workload": "gla", "kernels": [{"ctas": "sm_count", "threads": 256, "roles": [{"warps": 8,
        "body": [{"op": "store", "bytes": 32768)" + (as.empty() ? std::string() : R"(, "store_as": ")" + as + "\"") +
           "}]}]}]}";
  };
  const auto time = [&](const std::string& as) {
    return predict_kernels(hw, "gla", "f", gla_shape(64), build_schedule(parse_schedule(text(as), "f.json"), hw, gla_shape(64)))
        .time_us;
  };
  EXPECT_GT(time("fragment"), time("bulk"));
  EXPECT_GE(time("fragment"), time(""));
  const std::string e = error_of([&] { time("scatter"); });
  EXPECT_NE(e.find("store_as 'scatter'"), std::string::npos) << e;
}

// A tile loop whose per-output-tile `output` work moves to an epilogue warpgroup: the file
// builds the role, and an epilogue shorter than the mainloop stops adding to the time.
TEST(ScheduleFile, EpilogueWarpgroupTakesTheOutputWork) {
  const HardwareProfile hw = load_profile("H100");
  const auto text = [](int epilogue_warpgroups, bool handoff) {
    return std::string(R"({"workload": "gla", "params": {"kt": 8}, "kernels": [{"ctas": "sm_count",
        "threads": 512, "smem_bytes": 65536, "loop": {"tiles": "kt * 32",
          "loads": [{"op": "load", "bytes": 2048}],
          "compute": [{"op": "mma", "flops": 2097152}],
          "output": [{"op": "fma", "ops": 400000, "every": "kt", "phase": "kt - 1"}])") +
           (handoff ? R"(, "handoff": [{"op": "smem", "bytes": 65536}])" : "") + R"(},
        "schedule": {"kind": "warp_specialized", "stages": 6, "consumer_warpgroups": 2, "run_length": "kt",
                     "epilogue_warpgroups": )" + std::to_string(epilogue_warpgroups) + "}}]}";
  };
  const auto kernel = [&](const std::string& t) { return build_schedule(parse_schedule(t, "f.json"), hw, gla_shape(64)).at(0); };
  const KernelSpec serial = kernel(text(0, false)), handoff = kernel(text(1, true));
  ASSERT_EQ(handoff.roles.size(), 3u);
  EXPECT_EQ(handoff.roles.back().name, "epilogue");
  const double t_serial = predict_kernels(hw, "gla", "f", gla_shape(64), {serial}).time_us;
  const double t_handoff = predict_kernels(hw, "gla", "f", gla_shape(64), {handoff}).time_us;
  EXPECT_LT(t_handoff, 0.75 * t_serial) << t_handoff << " vs " << t_serial;
  // A hand-off with nobody to hand off to is a mistake in the file, not a silent no-op.
  const std::string e = error_of([&] { kernel(text(0, true)); });
  EXPECT_NE(e.find("epilogue role"), std::string::npos) << e;
}

TEST(ScheduleFile, DeadlockIsReported) {
  const HardwareProfile hw = load_profile("H100");
  const ScheduleFile f = parse_schedule(
      R"({"workload": "gla", "kernels": [{"ctas": 1, "tiles": 2, "barriers": [{"name": "never"}],
          "roles": [{"name": "stuck", "body": [{"op": "wait", "barrier": "never"}]}]}]})",
      "f.json");
  const std::string e = error_of([&] { predict_kernels(hw, "gla", "f", gla_shape(64), build_schedule(f, hw, gla_shape(64))); });
  EXPECT_NE(e.find("deadlock"), std::string::npos) << e;
  EXPECT_NE(e.find("never"), std::string::npos) << e;
}

TEST(Formula, Arithmetic) {
  const std::map<std::string, double> v = {{"T", 100}, {"C", 64}};
  EXPECT_EQ(eval_formula("ceil_div(T, C) * 2 + 1", v), 5);
  EXPECT_EQ(eval_formula("-(T - C) / 4", v), -9);
  EXPECT_EQ(eval_formula("min(T, C) + max(1, 2)", v), 66);
  EXPECT_THROW(eval_formula("T / (C - 64)", v), Error);
  EXPECT_THROW(eval_formula("T +", v), Error);
  EXPECT_THROW(eval_formula("sqrt(T)", v), Error);
}

}  // namespace
}  // namespace overlap::sim
