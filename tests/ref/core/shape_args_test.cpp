#include "core/shape_args.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace overlap {
namespace {

const std::vector<ShapeKey> kKeys = {
    {"B", 2, "batch"}, {"T", 63, "length"}, {"h0", 1, "initial state", 0}};

TEST(ShapeArgs, DefaultsFillMissingKeysInDeclarationOrder) {
  EXPECT_EQ(ShapeArgs::parse("T=1000", kKeys).to_string(), "B=2,T=1000,h0=1");
  EXPECT_EQ(ShapeArgs::parse("", kKeys).to_string(), "B=2,T=63,h0=1");
  EXPECT_EQ(ShapeArgs::parse(" h0 = 0 , B=7", kKeys).to_string(), "B=7,T=63,h0=0");
}

TEST(ShapeArgs, CanonicalTextParsesBackToTheSameArgs) {
  const auto a = ShapeArgs::parse("B=3,T=5,h0=0", kKeys);
  EXPECT_EQ(ShapeArgs::parse(a.to_string(), kKeys), a);
}

TEST(ShapeArgs, FlagReadsZeroOrOneAndNamesAnyOtherValue) {
  ShapeArgs a = ShapeArgs::parse("h0=0", kKeys);
  EXPECT_FALSE(a.flag("h0"));
  a.set("h0", 1);
  EXPECT_TRUE(a.flag("h0"));
  a.set("h0", 2);
  try {
    a.flag("h0");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "shape key 'h0' = 2 must be 0 or 1");
  }
}

TEST(ShapeArgs, RequirePositiveNamesWorkloadKeyAndValue) {
  EXPECT_NO_THROW(require_positive("w", {{"B", 1}, {"T", 5}}));
  try {
    require_positive("w", {{"B", 1}, {"T", 0}, {"K", -1}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "w: shape key 'T' = 0 must be at least 1");
  }
}

TEST(ShapeArgs, ProductFitsGuardsInt64Overflow) {
  EXPECT_TRUE(product_fits({}));
  EXPECT_TRUE(product_fits({3037000499, 3037000499}));
  EXPECT_FALSE(product_fits({3037000500, 3037000500}));
  EXPECT_TRUE(product_fits({std::int64_t{1} << 62, 1}));
  EXPECT_FALSE(product_fits({std::int64_t{1} << 62, 2}));
  EXPECT_FALSE(product_fits({4000000000, 4000000000, 1}));
}

struct BadShape {
  const char* text;
  const char* message_part;
};
class ShapeArgsRejects : public ::testing::TestWithParam<BadShape> {};

TEST_P(ShapeArgsRejects, WithAMessageNamingTheProblem) {
  try {
    ShapeArgs::parse(GetParam().text, kKeys);
    FAIL() << "accepted '" << GetParam().text << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(GetParam().message_part), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    BadInput, ShapeArgsRejects,
    ::testing::Values(BadShape{"X=1", "unknown shape key 'X'"}, BadShape{"B=0", "B' = 0 is below"},
                      BadShape{"T=-5", "T' = -5 is below"}, BadShape{"B=4x", "value '4x'"},
                      BadShape{"B=", "value ''"}, BadShape{"B", "is not KEY=VALUE"},
                      BadShape{"B=1,B=2", "given twice"}, BadShape{"h0=-1", "below its minimum 0"},
                      BadShape{"T=99999999999999999999", "expected an integer"}));

// A key with names takes a name for its value; the canonical text keeps the number, and a name
// the key does not have is refused with the names it has.
TEST(ShapeArgsNames, ANameStandsForItsValue) {
  const std::vector<ShapeKey> keys = {{"M", 256, "rows"}, {"fmt", 0, "format", 0, {{"bf16", 0}, {"nvfp4", 2}}}};
  EXPECT_EQ(ShapeArgs::parse("fmt=nvfp4", keys).get("fmt"), 2);
  EXPECT_EQ(ShapeArgs::parse("fmt=nvfp4", keys).to_string(), "M=256,fmt=2");
  EXPECT_EQ(ShapeArgs::parse("fmt=2", keys), ShapeArgs::parse("fmt=nvfp4", keys));
  try {
    ShapeArgs::parse("fmt=fp16", keys);
    FAIL() << "accepted fmt=fp16";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("value 'fp16', expected an integer or one of bf16 (0), nvfp4 (2)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(ShapeArgs::parse("M=nvfp4", keys), Error);  // names belong to their key
}

}  // namespace
}  // namespace overlap
