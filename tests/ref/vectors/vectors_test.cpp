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
                         ::testing::Values("gla", "linrnn", "projchain", "dualgemm", "gla_backward"));

TEST(Vectors, UnknownWorkloadAndDistributionAreNamedInTheError) {
  try {
    make_vector_set({.workload = "glaa"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "unknown workload 'glaa' (known: gla, linrnn, projchain, dualgemm, gla_backward)");
  }
  EXPECT_THROW(make_vector_set({.workload = "gla", .distribution = "nope"}), Error);
}

// The block check, on synthetic bf16 outputs of `rows` x `cols`: rounding alone passes, a 3%
// error confined to one 64 x 64 tile fails the block check although the whole-tensor error
// passes, at a narrow (64-column) and a wide (1024-column) output alike.
class BlockCheck : public ::testing::TestWithParam<std::int64_t> {
 protected:
  const std::int64_t cols = GetParam(), rows = 256 * 64 * 64 / GetParam();  // 256 tiles either way
  BlockCheck() {
    std::mt19937_64 rng(7);
    std::normal_distribution<double> normal;
    reference.resize(rows * cols);
    for (double& v : reference) v = normal(rng);
    set.outputs = {{"o", 5e-3}};
    set.expected.emplace("o", Tensor::from_f64(reference, DType::F64, {rows, cols}));
  }
  OutputCheck check(const std::vector<double>& values) const {
    TensorMap result;
    result.emplace("o", Tensor::from_f64(values, DType::BF16, {rows, cols}));
    return check_outputs(set, result).front();
  }
  // Every element of the 64 x 64 tile whose first row and column are (r0, c0).
  template <class F>
  void for_tile(std::int64_t r0, std::int64_t c0, F f) const {
    for (std::int64_t i = r0; i < r0 + 64; ++i)
      for (std::int64_t j = c0; j < c0 + 64; ++j) f(i * cols + j);
  }
  std::vector<double> reference;
  VectorSet set;
};

TEST_P(BlockCheck, RoundingToBf16PassesEveryBlock) {
  const OutputCheck c = check(reference);
  EXPECT_GT(c.rel_error, 1e-3);  // bf16 rounding is really there
  EXPECT_LT(c.worst_block_rel_error, 5e-3);
  EXPECT_TRUE(c.pass()) << describe(c);
}

TEST_P(BlockCheck, OneWrongTileFailsTheBlockCheckNotTheWholeTensorCheck) {
  std::vector<double> wrong = reference;
  const std::int64_t r0 = rows - 128, c0 = cols - 64;  // a tile away from the origin
  for_tile(r0, c0, [&](std::int64_t e) { wrong[e] *= 1.03; });
  const OutputCheck c = check(wrong);
  EXPECT_LT(c.rel_error, c.tolerance);  // what the whole-tensor check sees: a pass
  EXPECT_NEAR(c.worst_block_rel_error, 0.03, 0.005);
  EXPECT_EQ(c.worst_block_row, r0);
  EXPECT_EQ(c.worst_block_col, c0);
  EXPECT_FALSE(c.pass());
  EXPECT_NE(describe(c).find("worst block"), std::string::npos);
}

TEST_P(BlockCheck, ABlockWhoseReferenceIsZeroIsJudgedOnAnAbsoluteScale) {
  std::vector<double> zeroed = reference;
  for_tile(0, 0, [&](std::int64_t e) { zeroed[e] = 0.0; });
  set.expected.at("o") = Tensor::from_f64(zeroed, DType::F64, {rows, cols});
  EXPECT_TRUE(check(zeroed).pass());  // exact zeros where zeros are due
  std::vector<double> noisy = zeroed;
  for_tile(0, 0, [&](std::int64_t e) { noisy[e] = 1e-6; });  // far below the floor
  EXPECT_TRUE(check(noisy).pass()) << describe(check(noisy));
  for_tile(0, 0, [&](std::int64_t e) { noisy[e] = 0.01; });  // 1% of the tensor's scale
  const OutputCheck c = check(noisy);
  EXPECT_FALSE(c.pass()) << describe(c);
  EXPECT_EQ(c.worst_block_row, 0);
  EXPECT_EQ(c.worst_block_col, 0);
}

INSTANTIATE_TEST_SUITE_P(NarrowAndWide, BlockCheck, ::testing::Values(64, 1024));

TEST(BlockError, ShortTailsJoinTheBlockBeforeAndLongOnesStandAlone) {
  // rows x cols all ones, the last element wrong by 1; blocks of 10 x 100.
  auto worst = [](std::int64_t rows, std::int64_t cols) {
    std::vector<double> ref(rows * cols, 1.0), out = ref;
    out.back() = 2.0;
    return worst_block_relative_error(Tensor::from_f64(out, DType::F64, {rows, cols}),
                                      Tensor::from_f64(ref, DType::F64, {rows, cols}), 10, 100);
  };
  const BlockError joined = worst(24, 340);  // row tail 4 joins, column tail 40 joins: 14 x 140
  EXPECT_NEAR(joined.rel_error, 1 / std::sqrt(14.0 * 140.0), 1e-12);
  EXPECT_EQ(joined.row, 10);
  EXPECT_EQ(joined.col, 200);
  const BlockError alone = worst(26, 360);  // tails of 6 rows and 60 columns stand alone
  EXPECT_NEAR(alone.rel_error, 1 / std::sqrt(6.0 * 60.0), 1e-12);
  EXPECT_EQ(alone.row, 20);
  EXPECT_EQ(alone.col, 300);
  EXPECT_NEAR(worst(3, 30).rel_error, 1 / std::sqrt(90.0), 1e-12);  // smaller than one block
}

}  // namespace
}  // namespace overlap
