#include "sim/sass_mix.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"

namespace overlap::sim {

namespace {

// Every field, so that adding and scaling cannot fall out of step with the struct.
constexpr double SassCounts::*kFields[] = {
    &SassCounts::issue,     &SassCounts::mufu,   &SassCounts::hgmma, &SassCounts::hgmma_flops, &SassCounts::hmma,
    &SassCounts::hmma_flops, &SassCounts::lds_bytes, &SassCounts::sts_bytes, &SassCounts::fp32, &SassCounts::alu,
    &SassCounts::uniform,   &SassCounts::sync,   &SassCounts::tma,   &SassCounts::control,     &SassCounts::other,
    &SassCounts::cycles,    &SassCounts::cycles_loaded};
static_assert(sizeof(kFields) / sizeof(kFields[0]) * sizeof(double) == sizeof(SassCounts),
              "kFields must list every field of SassCounts");

}  // namespace

SassCounts& SassCounts::operator+=(const SassCounts& o) {
  for (auto f : kFields) this->*f += o.*f;
  return *this;
}

SassCounts SassCounts::times(double n) const {
  SassCounts r = *this;
  for (auto f : kFields) r.*f *= n;
  return r;
}

bool has_sass_region(std::span<const SassRegionMix> table, std::string_view function_part, std::string_view region) {
  return std::any_of(table.begin(), table.end(), [&](const SassRegionMix& row) {
    return row.region == region && row.function.find(function_part) != std::string_view::npos;
  });
}

double loaded_chain(const SassCounts& counts, double tensor_cycles) {
  const double c0 = counts.cycles, slowdown = std::max(0.0, counts.cycles_loaded - counts.cycles);
  return 0.5 * (c0 + std::sqrt(c0 * c0 + 4.0 * tensor_cycles * slowdown));
}

std::vector<Step> sass_pass(const SassCounts& c, double warps, double chain_ns, PipeBarriers b,
                            const std::string& what, const std::string& chain_label) {
  const double lanes = 32 * warps;
  return {issue(Unit::Sfu, c.mufu * lanes, b.sfu, 0, what + ": exp2"),
          issue(Unit::Smem, (c.lds_bytes + c.sts_bytes) * warps, b.smem, 0, what + ": shared memory"),
          issue(Unit::Fma, c.issue * lanes, b.issue, 0, what + ": issue slots"),
          delay(chain_ns, chain_label),
          wait(b.sfu, 0, "exp2 done"),
          wait(b.smem, 0, "shared memory done"),
          wait(b.issue, 0, "issued")};
}

std::vector<Step> sass_mma_phase(const SassCounts& c, double warps, double chain_ns, const std::string& what,
                                 std::vector<BarrierSpec>& barriers, int first_index) {
  const int b = first_index + int(barriers.size());
  for (const char* unit : {"exp2", "smem", "issue", "mma"}) barriers.push_back({fmt::format("{}: {}", what, unit), 1});
  std::vector<Step> steps =
      sass_pass(c, warps, chain_ns, {b, b + 1, b + 2}, what, what + ": the busiest scheduler's in-order chain (SASS)");
  if (c.hmma_flops > 0) {
    steps.insert(steps.begin() + 3,
                 issued(mma(c.hmma_flops * warps, Precision::Bf16, TensorPath::WarpMma, what + ": mma.sync"), b + 3, 0));
    steps.push_back(wait(b + 3, 0, "mma.sync done"));
  }
  return steps;
}

SassCounts sass_counts(std::span<const SassRegionMix> table, std::string_view function_part,
                       std::initializer_list<std::string_view> regions) {
  SassCounts sum;
  bool function_found = false;
  for (std::string_view region : regions) {
    bool found = false;
    for (const SassRegionMix& row : table) {
      if (row.function.find(function_part) == std::string_view::npos) continue;
      function_found = true;
      if (row.region != region) continue;
      sum += row.counts;
      found = true;
    }
    OVERLAP_REQUIRE(function_found, "sass mix: no kernel matching '{}' in the table (regenerate it)", function_part);
    OVERLAP_REQUIRE(found, "sass mix: kernel '{}' has no region '{}' in the table (regenerate it)", function_part,
                    region);
  }
  return sum;
}

}  // namespace overlap::sim
