#pragma once
// Size formulas of schedule files: "C*K*2", "ceil_div(T, C) * H", "min(V, 64)". Numbers,
// variables, + - * / ( ), and the functions ceil_div, min, max, ceil, floor.
#include <map>
#include <string>
#include <string_view>

namespace overlap::sim {

// Throws overlap::Error naming the formula and, for an unknown variable, the known ones.
double eval_formula(std::string_view formula, const std::map<std::string, double>& variables);

}  // namespace overlap::sim
