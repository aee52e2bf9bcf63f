#include "vectors/safetensors.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/random.hpp"

namespace overlap {
namespace {

TensorFile sample_file() {
  TensorFile f;
  f.metadata = {{"workload", "gla"}, {"seed", "7"}};
  std::vector<double> v(24);
  fill_normal<double>(v, 1, "v");
  f.tensors.emplace("a_f32", Tensor::from_f64(v, DType::F32, {2, 3, 4}));
  f.tensors.emplace("b_bf16", Tensor::from_f64(v, DType::BF16, {24}));
  f.tensors.emplace("c_e4m3", Tensor::from_f64(v, DType::F8_E4M3, {4, 6}));
  f.tensors.emplace("d_empty", Tensor(DType::F16, {0, 3}));
  Tensor bytes(DType::U8, {5});
  for (int i = 0; i < 5; ++i) bytes.view<std::uint8_t>()[i] = static_cast<std::uint8_t>(i * 37);
  f.tensors.emplace("e_u8", bytes);
  return f;
}

bool same(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.bytes().data(), b.bytes().data(), a.nbytes()) == 0;
}

TEST(Safetensors, RoundTripKeepsEveryByteAndTheMetadata) {
  const TensorFile f = sample_file();
  const auto bytes = encode_safetensors(f);
  const TensorFile g = decode_safetensors(bytes, "memory");
  EXPECT_EQ(g.metadata, f.metadata);
  ASSERT_EQ(g.tensors.size(), f.tensors.size());
  for (const auto& [name, t] : f.tensors) EXPECT_TRUE(same(t, g.tensors.at(name))) << name;
}

TEST(Safetensors, HeaderIsPaddedToEightBytes) {
  const auto bytes = encode_safetensors(sample_file());
  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n % 8, 0u);
}

TEST(Safetensors, WriteIsAtomicAndFailsCleanlyIntoAMissingDirectory) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "overlap_safetensors_test";
  fs::remove_all(dir);
  EXPECT_THROW(write_safetensors(dir / "x.safetensors", sample_file()), Error);
  EXPECT_FALSE(fs::exists(dir));
  fs::create_directories(dir);
  write_safetensors(dir / "x.safetensors", sample_file());
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1) << "temporary file left behind";
  EXPECT_EQ(read_safetensors(dir / "x.safetensors").tensors.size(), 5u);
  fs::remove_all(dir);
}

// Builds a file from a hand-written header and data, to test how lies are caught.
std::vector<std::byte> raw_file(const std::string& header, std::size_t data_bytes) {
  std::vector<std::byte> out(8 + header.size() + data_bytes, std::byte{0});
  const std::uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  std::memcpy(out.data() + 8, header.data(), header.size());
  return out;
}

struct BadFile {
  const char* name;
  std::string header;
  std::size_t data_bytes;
  const char* message_part;
};

class SafetensorsRejects : public ::testing::TestWithParam<BadFile> {};

TEST_P(SafetensorsRejects, WithAClearMessage) {
  const auto& p = GetParam();
  const auto bytes = raw_file(p.header, p.data_bytes);
  try {
    decode_safetensors(bytes, "f");
    FAIL() << "accepted " << p.name;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(p.message_part), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    BadFiles, SafetensorsRejects,
    ::testing::Values(
        BadFile{"not_json", "{oops", 0, "not valid JSON"},
        BadFile{"not_object", "[1,2]", 0, "not a JSON object"},
        BadFile{"offsets_past_end", R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", 8,
                "lie outside the 8 data bytes"},
        BadFile{"offsets_disagree_with_shape", R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,12]}})",
                12, "needs 16"},
        BadFile{"begin_after_end", R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[8,4]}})", 8, "lie outside"},
        BadFile{"overlap", R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}})",
                6, "overlaps or leaves a gap"},
        BadFile{"gap", R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[2,4]}})", 4, "overlaps or leaves a gap"},
        BadFile{"trailing", R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})", 5, "3 trailing bytes"},
        BadFile{"unknown_dtype", R"({"a":{"dtype":"Q7","shape":[2],"data_offsets":[0,2]}})", 2, "unknown dtype 'Q7'"},
        BadFile{"negative_dim", R"({"a":{"dtype":"U8","shape":[-2],"data_offsets":[0,2]}})", 2, "negative dimension"},
        BadFile{"float_offset", R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0.5,2]}})", 2, "non-negative integers"},
        BadFile{"huge_shape", R"({"a":{"dtype":"U8","shape":[4294967296,4294967296],"data_offsets":[0,2]}})", 2,
                "too large"},
        BadFile{"metadata_not_string", R"({"__metadata__":{"seed":7}})", 0, "metadata 'seed' is not a string"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(Safetensors, TruncatedFilesAreRejected) {
  const auto bytes = encode_safetensors(sample_file());
  for (std::size_t keep : {std::size_t{0}, std::size_t{7}, std::size_t{8}, std::size_t{20}, bytes.size() - 1}) {
    const std::span<const std::byte> cut(bytes.data(), keep);
    EXPECT_THROW(decode_safetensors(cut, "cut"), Error) << "kept " << keep << " bytes";
  }
}

TEST(Safetensors, HeaderLengthLargerThanTheFileIsATruncation) {
  auto bytes = raw_file("{}", 0);
  const std::uint64_t lie = 1000;
  std::memcpy(bytes.data(), &lie, 8);
  try {
    decode_safetensors(bytes, "f");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "f: truncated file: header says 1000 bytes but only 2 follow");
  }
}

}  // namespace
}  // namespace overlap
