#pragma once
// File names the tool chooses for what it writes, in one place so tests and scripts agree.
#include <cstdint>
#include <fmt/format.h>
#include <string>

namespace overlap::app {

// "gla_B2_T63_H2_K64_V64_h01_hT1_default_s7.safetensors"
inline std::string vector_file_name(const std::string& workload, const std::string& shape,
                                    const std::string& distribution, std::uint64_t seed) {
  std::string s;
  for (char c : shape) s += c == ',' ? '_' : c == '=' ? '\0' : c;
  std::erase(s, '\0');
  return fmt::format("{}_{}_{}_s{}.safetensors", workload, s, distribution, seed);
}

}  // namespace overlap::app
