#pragma once
// The JSON text of every file in profiles/, embedded at build time (generated .cpp).
#include <string_view>
#include <utility>
#include <vector>

namespace overlap::sim {
// (name, json text) in the order T4, A100, H100, H200, B200.
const std::vector<std::pair<std::string_view, std::string_view>>& builtin_profile_texts();
}  // namespace overlap::sim
