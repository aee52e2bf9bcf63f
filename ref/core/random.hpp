#pragma once
// Deterministic, platform-independent random numbers for test vectors. Counter-based: element
// i of stream s under seed k is a pure function of (k, s, i), so tensors can be filled in
// parallel and the result never depends on thread count or standard library.
#include <cmath>
#include <cstdint>
#include <span>
#include <string_view>

namespace overlap {

constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Stream id from a tensor name (FNV-1a), so "q" and "k" draw independent numbers.
constexpr std::uint64_t stream_id(std::string_view name) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return h;
}

class CounterRng {
 public:
  CounterRng(std::uint64_t seed, std::uint64_t stream)
      : key_(splitmix64(seed ^ splitmix64(stream))) {}

  std::uint64_t bits(std::uint64_t i) const { return splitmix64(key_ + splitmix64(i)); }
  // Uniform in (0, 1): 53 random bits, never exactly 0 or 1.
  double uniform(std::uint64_t i) const {
    return (static_cast<double>(bits(i) >> 11) + 0.5) * 0x1p-53;
  }
  // Standard normal by Box-Muller from two uniforms of element i.
  double normal(std::uint64_t i) const {
    const double u1 = uniform(2 * i), u2 = uniform(2 * i + 1);
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  std::uint64_t key_;
};

// Fills out[i] = scale * N(0,1) for stream `name` under `seed`.
template <class T>
void fill_normal(std::span<T> out, std::uint64_t seed, std::string_view name, double scale = 1.0) {
  const CounterRng rng(seed, stream_id(name));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<T>(scale * rng.normal(i));
}

template <class T>
void fill_uniform(std::span<T> out, std::uint64_t seed, std::string_view name, double lo, double hi) {
  const CounterRng rng(seed, stream_id(name));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<T>(lo + (hi - lo) * rng.uniform(i));
}

}  // namespace overlap
