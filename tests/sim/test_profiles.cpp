// Hardware profiles: built-ins load with a source for every field; derived profiles override
// field by field; unknown fields, wrong units and missing sources are errors naming them.
#include <gtest/gtest.h>

#include <functional>

#include "core/error.hpp"
#include "sim/api.hpp"
#include "tests/sim/sim_test_support.hpp"

namespace overlap::sim {
namespace {

using test_support::error_of;

class BuiltinProfile : public ::testing::TestWithParam<std::string> {};

TEST_P(BuiltinProfile, LoadsWithASourceForEveryField) {
  const HardwareProfile p = load_profile(GetParam());
  EXPECT_EQ(p.name, GetParam());
  for (const auto& f : profile_fields()) {
    ASSERT_TRUE(p.sources.count(std::string(f.name))) << f.name;
    EXPECT_FALSE(p.sources.at(std::string(f.name)).empty()) << f.name;
  }
  EXPECT_TRUE(p.sources.count("copy_engine"));
  EXPECT_GT(p.sm_count, 0);
  EXPECT_GT(p.hbm_bandwidth_GBps, 0);
  // Round trip through JSON.
  const HardwareProfile again = parse_profile(p.to_json().dump(), "round trip");
  EXPECT_EQ(again.hbm_bandwidth_GBps, p.hbm_bandwidth_GBps);
  EXPECT_EQ(again.copy_engine, p.copy_engine);
}

INSTANTIATE_TEST_SUITE_P(All, BuiltinProfile, ::testing::ValuesIn(builtin_profile_names()));

TEST(Profiles, BuiltinNamesAreTheFiveGpus) {
  EXPECT_EQ(builtin_profile_names(), (std::vector<std::string>{"T4", "A100", "H100", "H200", "B200"}));
}

TEST(Profiles, DerivedProfileOverridesOnlyWhatItNames) {
  const HardwareProfile base = load_profile("H100");
  const HardwareProfile p = parse_profile(
      R"({"name": "H100-slow", "base": "H100", "fields": {"hbm_bandwidth_GBps": {"value": 1000, "source": "test"}}})", "t");
  EXPECT_EQ(p.name, "H100-slow");
  EXPECT_EQ(p.hbm_bandwidth_GBps, 1000);
  EXPECT_EQ(p.sources.at("hbm_bandwidth_GBps"), "test");
  EXPECT_EQ(p.sm_count, base.sm_count);
  EXPECT_EQ(p.tensor_bf16_TFLOPs, base.tensor_bf16_TFLOPs);
  EXPECT_EQ(load_profile("H200").sm_count, base.sm_count);  // H200 derives from H100
  EXPECT_NE(load_profile("H200").hbm_bandwidth_GBps, base.hbm_bandwidth_GBps);
}

TEST(Profiles, UnknownFieldIsAnErrorNamingIt) {
  const std::string e = error_of([] {
    parse_profile(R"({"name": "x", "base": "H100", "fields": {"hbm_bandwidth_TBps": {"value": 3, "source": "s"}}})", "t");
  });
  EXPECT_NE(e.find("unknown profile field 'hbm_bandwidth_TBps'"), std::string::npos) << e;
  EXPECT_NE(e.find("hbm_bandwidth_GBps"), std::string::npos) << e;  // lists what is allowed
}

TEST(Profiles, ARetiredFieldIsReadAndIgnored) {
  // Profiles calibrated before tma_walk_stream_GBps was retired still load, to the same model.
  const HardwareProfile old = parse_profile(
      R"({"name": "x", "base": "H100", "fields": {"tma_walk_stream_GBps": {"value": 47.8, "unit": "GB/s", "source": "s"}}})",
      "t");
  EXPECT_EQ(old.to_json().dump(), parse_profile(R"({"name": "x", "base": "H100", "fields": {}})", "t").to_json().dump());
}

TEST(Profiles, AFieldGivenTwiceIsAnErrorNamingIt) {
  // A parser keeps one of two equal keys silently; a stale second entry must not win unseen.
  const std::string e = error_of([] {
    parse_profile(R"({"name": "x", "base": "H100", "fields": {"tma_walk_sm_multi_GBps": {"value": 96, "source": "s"},
                      "tma_walk_sm_multi_GBps": {"value": 0, "source": "not measured"}}})",
                  "t");
  });
  EXPECT_NE(e.find("key 'tma_walk_sm_multi_GBps' appears twice"), std::string::npos) << e;
  // The same key in two different objects is fine.
  const HardwareProfile p = parse_profile(
      R"({"name": "x", "base": "H100", "fields": {"sm_count": {"value": 132, "source": "a"},
          "clock_MHz": {"value": 1980, "source": "b"}}})",
      "t");
  EXPECT_EQ(p.sm_count, 132);
}

TEST(Profiles, WrongUnitIsAnError) {
  const std::string e = error_of([] {
    parse_profile(R"({"name": "x", "base": "H100", "fields": {"hbm_bandwidth_GBps": {"value": 3, "unit": "TB/s", "source": "s"}}})", "t");
  });
  EXPECT_NE(e.find("'GB/s'"), std::string::npos) << e;
  EXPECT_NE(e.find("TB/s"), std::string::npos) << e;
  EXPECT_NO_THROW(parse_profile(
      R"({"name": "x", "base": "H100", "fields": {"hbm_bandwidth_GBps": {"value": 3, "unit": "GB/s", "source": "s"}}})", "t"));
}

TEST(Profiles, MissingSourceIsAnError) {
  const std::string e = error_of([] {
    parse_profile(R"({"name": "x", "base": "H100", "fields": {"sm_count": {"value": 100}}})", "t");
  });
  EXPECT_NE(e.find("sm_count"), std::string::npos) << e;
  EXPECT_NE(e.find("source"), std::string::npos) << e;
}

TEST(Profiles, IncompleteProfileWithoutBaseNamesTheMissingField) {
  const std::string e = error_of([] {
    parse_profile(R"({"name": "x", "fields": {"sm_count": {"value": 100, "source": "s"}}})", "t");
  });
  EXPECT_NE(e.find("lacks field"), std::string::npos) << e;
}

TEST(Profiles, UnknownProfileNameListsTheBuiltins) {
  const std::string e = error_of([] { load_profile("V100"); });
  EXPECT_NE(e.find("'V100'"), std::string::npos) << e;
  EXPECT_NE(e.find("H100"), std::string::npos) << e;
}

TEST(Profiles, BadValuesAreErrors) {
  EXPECT_THROW(parse_profile(R"({"name": "x", "base": "H100", "fields": {"sm_count": {"value": "many", "source": "s"}}})", "t"), Error);
  EXPECT_THROW(parse_profile(R"({"name": "x", "base": "H100", "fields": {"sm_count": {"value": -1, "source": "s"}}})", "t"), Error);
  EXPECT_THROW(parse_profile(R"({"name": "x", "base": "H100", "fields": {"copy_engine": {"value": "dma", "source": "s"}}})", "t"), Error);
  EXPECT_THROW(parse_profile(R"({"name": "x", "base": "H100", "extra": 1})", "t"), Error);
  EXPECT_THROW(parse_profile("{not json", "t"), Error);
}

}  // namespace
}  // namespace overlap::sim
