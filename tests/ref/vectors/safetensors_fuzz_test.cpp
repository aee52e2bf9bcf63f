// A seeded mutation fuzzer for the vector reader: flips, overwrites, inserts, deletes and
// truncates bytes of valid files (header and data) and demands that every mutant either
// decodes or throws overlap::Error — never crashes, hangs or reads out of bounds. CI also runs
// this binary under AddressSanitizer + UBSan (the `asan` preset).
#include <gtest/gtest.h>

#include "core/random.hpp"
#include "vectors/safetensors.hpp"

namespace overlap {
namespace {

std::vector<std::byte> seed_file(int variant) {
  TensorFile f;
  f.metadata = {{"format", "overlap-test-vectors"}, {"shape", "B=1,T=3"}};
  std::vector<double> v(12 + variant);
  fill_normal<double>(v, variant, "v");
  f.tensors.emplace("q", Tensor::from_f64(v, DType::BF16, {static_cast<std::int64_t>(v.size())}));
  f.tensors.emplace("o", Tensor::from_f64(v, DType::F32, {1, static_cast<std::int64_t>(v.size())}));
  return encode_safetensors(f);
}

std::vector<std::byte> mutate(std::vector<std::byte> bytes, const CounterRng& rng, std::uint64_t& draw) {
  const int edits = 1 + static_cast<int>(rng.bits(draw++) % 4);
  // Interesting bytes: JSON structure and digits make mutants that still parse.
  static constexpr char kInteresting[] = "{}[]\":,0123456789-.eE ";
  for (int e = 0; e < edits && !bytes.empty(); ++e) {
    const std::size_t pos = rng.bits(draw++) % bytes.size();
    switch (rng.bits(draw++) % 6) {
      case 0: bytes[pos] ^= static_cast<std::byte>(1u << (rng.bits(draw++) % 8)); break;
      case 1: bytes[pos] = static_cast<std::byte>(rng.bits(draw++) & 0xff); break;
      case 2: bytes[pos] = static_cast<std::byte>(kInteresting[rng.bits(draw++) % (sizeof(kInteresting) - 1)]); break;
      case 3: bytes.insert(bytes.begin() + pos, static_cast<std::byte>(kInteresting[rng.bits(draw++) % 8])); break;
      case 4: bytes.erase(bytes.begin() + pos); break;
      case 5: bytes.resize(pos); break;
    }
  }
  return bytes;
}

TEST(SafetensorsFuzz, MutantsDecodeOrThrowOverlapErrorOnly) {
  constexpr int kMutants = 20000;
  const CounterRng rng(2024, stream_id("fuzz"));
  std::uint64_t draw = 0;
  int decoded = 0, rejected = 0;
  for (int i = 0; i < kMutants; ++i) {
    const auto bytes = mutate(seed_file(i % 3), rng, draw);
    try {
      const TensorFile f = decode_safetensors(bytes, "mutant");
      // Whatever decodes must re-encode and decode to the same tensors.
      const TensorFile g = decode_safetensors(encode_safetensors(f), "re-encoded");
      ASSERT_EQ(f.tensors.size(), g.tensors.size());
      ++decoded;
    } catch (const Error&) {
      ++rejected;
    }
  }
  // Both outcomes must occur, or the mutator is not exercising the reader.
  EXPECT_GT(decoded, 100);
  EXPECT_GT(rejected, 1000);
}

}  // namespace
}  // namespace overlap
