// Every workload through the shared test-vector path: write a set with the float64 oracle,
// read it back, check the CPU fast reference against it, and make sure the checker fails
// what it must fail (unwritten elements, NaN, wrong values, missing or misshapen tensors).
#include "vectors/vectors.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "vectors/poison.hpp"

namespace overlap {
namespace {

class VectorsPerWorkload : public ::testing::TestWithParam<std::string> {
 protected:
  VectorSet make(std::uint64_t seed) const {
    const TensorFile file = make_vector_set({.workload = GetParam(), .shape = "", .seed = seed});
    // Through bytes, as a reader in another process would see it.
    return load_vector_set(decode_safetensors(encode_safetensors(file), "memory"), "memory");
  }
};

TEST_P(VectorsPerWorkload, MetadataNamesWorkloadShapeSeedAndTolerances) {
  const TensorFile file = make_vector_set({.workload = GetParam(), .shape = "", .seed = 11});
  for (const char* key : {"format", "format_version", "workload", "shape", "seed", "distribution",
                          "distribution_description", "inputs", "outputs", "tolerance", "reference"})
    EXPECT_TRUE(file.metadata.contains(key)) << key;
  EXPECT_EQ(file.metadata.at("workload"), GetParam());
  EXPECT_EQ(file.metadata.at("seed"), "11");
}

TEST_P(VectorsPerWorkload, GenerationIsDeterministicFromTheSeed) {
  const auto a = encode_safetensors(make_vector_set({.workload = GetParam(), .seed = 5}));
  const auto b = encode_safetensors(make_vector_set({.workload = GetParam(), .seed = 5}));
  const auto c = encode_safetensors(make_vector_set({.workload = GetParam(), .seed = 6}));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST_P(VectorsPerWorkload, FastReferencePassesTheCheck) {
  const VectorSet set = make(1);
  const TensorMap result = set.workload->fast_reference(set.shape, set.inputs);
  for (const auto& c : check_outputs(set, result)) {
    EXPECT_TRUE(c.pass()) << c.name << " rel_error " << c.rel_error << " " << c.problem;
    EXPECT_LT(c.rel_error, 1e-5) << c.name;
  }
}

TEST_P(VectorsPerWorkload, CheckerCatchesUnwrittenNonFiniteWrongAndMissingOutputs) {
  const VectorSet set = make(2);
  const TensorMap good = set.workload->fast_reference(set.shape, set.inputs);
  const std::string first = set.outputs.front().name;

  TensorMap unwritten = good;  // one element left poisoned
  {
    Tensor& t = unwritten.at(first);
    Tensor poisoned(t.dtype(), t.shape());
    poison(poisoned);
    std::memcpy(t.bytes().data(), poisoned.bytes().data(), dtype_size(t.dtype()));
  }
  auto checks = check_outputs(set, unwritten);
  EXPECT_EQ(checks.front().unwritten, 1);
  EXPECT_FALSE(checks.front().pass());

  TensorMap nan = good;
  nan.at(first).view<float>()[0] = NAN;
  checks = check_outputs(set, nan);
  EXPECT_EQ(checks.front().non_finite, 1);
  EXPECT_EQ(checks.front().unwritten, 0);
  EXPECT_FALSE(checks.front().pass());

  TensorMap wrong = good;  // a 10% error everywhere
  for (float& v : wrong.at(first).view<float>()) v *= 1.1f;
  checks = check_outputs(set, wrong);
  EXPECT_NEAR(checks.front().rel_error, 0.1, 1e-3);
  EXPECT_FALSE(checks.front().pass());

  TensorMap missing = good;
  missing.erase(first);
  EXPECT_EQ(check_outputs(set, missing).front().problem, "missing from result");

  TensorMap misshapen = good;
  misshapen.at(first) = Tensor(DType::F32, {1});
  EXPECT_FALSE(check_outputs(set, misshapen).front().pass());
}

TEST_P(VectorsPerWorkload, ReaderRejectsAFileWhoseInputsWereTamperedWith) {
  TensorFile file = make_vector_set({.workload = GetParam(), .seed = 3});
  const std::string first_input = file.metadata.at("inputs").substr(0, file.metadata.at("inputs").find(','));
  file.tensors.at(first_input) = Tensor(file.tensors.at(first_input).dtype(), {1});
  EXPECT_THROW(load_vector_set(file, "tampered"), Error);
  file = make_vector_set({.workload = GetParam(), .seed = 3});
  file.metadata["format_version"] = "99";
  EXPECT_THROW(load_vector_set(file, "future"), Error);
  file.metadata.erase("format_version");
  EXPECT_THROW(load_vector_set(file, "no version"), Error);
}

INSTANTIATE_TEST_SUITE_P(AllWorkloads, VectorsPerWorkload,
                         ::testing::Values("gla", "linrnn", "projchain", "dualgemm"));

TEST(Vectors, UnknownWorkloadAndDistributionAreNamedInTheError) {
  try {
    make_vector_set({.workload = "glaa"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "unknown workload 'glaa' (known: gla, linrnn, projchain, dualgemm)");
  }
  EXPECT_THROW(make_vector_set({.workload = "gla", .distribution = "nope"}), Error);
}

// The block check, on a synthetic bf16 output of 256 tiles of 64x64: rounding alone passes, a
// 3% error confined to one tile fails the block check although the whole-tensor error passes.
class BlockCheck : public ::testing::Test {
 protected:
  static constexpr std::int64_t kRows = 256 * 64, kCols = 64;
  BlockCheck() {
    std::mt19937_64 rng(7);
    std::normal_distribution<double> normal;
    reference.resize(kRows * kCols);
    for (double& v : reference) v = normal(rng);
    set.outputs = {{"o", 5e-3}};
    set.expected.emplace("o", Tensor::from_f64(reference, DType::F64, {kRows, kCols}));
  }
  OutputCheck check(const std::vector<double>& values) const {
    TensorMap result;
    result.emplace("o", Tensor::from_f64(values, DType::BF16, {kRows, kCols}));
    return check_outputs(set, result).front();
  }
  std::vector<double> reference;
  VectorSet set;
};

TEST_F(BlockCheck, RoundingToBf16PassesEveryBlock) {
  const OutputCheck c = check(reference);
  EXPECT_GT(c.rel_error, 1e-3);  // bf16 rounding is really there
  EXPECT_LT(c.worst_block_rel_error, 5e-3);
  EXPECT_TRUE(c.pass()) << describe(c);
}

TEST_F(BlockCheck, OneWrongTileFailsTheBlockCheckNotTheWholeTensorCheck) {
  std::vector<double> wrong = reference;
  const std::int64_t tile = 137;
  for (std::int64_t i = tile * kCheckBlockElements; i < (tile + 1) * kCheckBlockElements; ++i) wrong[i] *= 1.03;
  const OutputCheck c = check(wrong);
  EXPECT_LT(c.rel_error, c.tolerance);  // what the old check saw: a pass
  EXPECT_NEAR(c.worst_block_rel_error, 0.03, 0.005);
  EXPECT_EQ(c.worst_block_offset, tile * kCheckBlockElements);
  EXPECT_FALSE(c.pass());
  EXPECT_NE(describe(c).find("worst block"), std::string::npos);
}

TEST_F(BlockCheck, ABlockWhoseReferenceIsZeroIsJudgedOnAnAbsoluteScale) {
  std::vector<double> zeroed = reference;
  std::fill(zeroed.begin(), zeroed.begin() + kCheckBlockElements, 0.0);
  set.expected.at("o") = Tensor::from_f64(zeroed, DType::F64, {kRows, kCols});
  EXPECT_TRUE(check(zeroed).pass());  // exact zeros where zeros are due
  std::vector<double> noisy = zeroed;
  for (std::int64_t i = 0; i < kCheckBlockElements; ++i) noisy[i] = 1e-6;  // far below the floor
  EXPECT_TRUE(check(noisy).pass()) << describe(check(noisy));
  for (std::int64_t i = 0; i < kCheckBlockElements; ++i) noisy[i] = 0.01;  // 1% of the tensor's scale
  const OutputCheck c = check(noisy);
  EXPECT_FALSE(c.pass()) << describe(c);
  EXPECT_EQ(c.worst_block_offset, 0);
}

TEST(BlockError, ShortTailJoinsThePreviousBlockAndALongOneStandsAlone) {
  auto error_with_tail = [](std::int64_t n) {
    std::vector<double> ref(n, 1.0), out(n, 1.0);
    out[n - 1] = 2.0;  // the last element is wrong by 1
    return worst_block_relative_error(Tensor::from_f64(out, DType::F64, {n}), Tensor::from_f64(ref, DType::F64, {n}), 100);
  };
  EXPECT_NEAR(error_with_tail(340).rel_error, 1 / std::sqrt(140.0), 1e-12);  // tail of 40 joins
  EXPECT_EQ(error_with_tail(340).offset, 200);
  EXPECT_NEAR(error_with_tail(360).rel_error, 1 / std::sqrt(60.0), 1e-12);   // tail of 60 alone
  EXPECT_EQ(error_with_tail(360).offset, 300);
  EXPECT_NEAR(error_with_tail(30).rel_error, 1 / std::sqrt(30.0), 1e-12);    // smaller than a block
}

}  // namespace
}  // namespace overlap
