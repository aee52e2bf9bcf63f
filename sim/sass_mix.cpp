#include "sim/sass_mix.hpp"

#include <string>

#include "core/error.hpp"

namespace overlap::sim {

SassCounts& SassCounts::operator+=(const SassCounts& o) {
  issue += o.issue, mufu += o.mufu, hgmma += o.hgmma, hgmma_flops += o.hgmma_flops, hmma += o.hmma;
  hmma_flops += o.hmma_flops, lds_bytes += o.lds_bytes, sts_bytes += o.sts_bytes, fp32 += o.fp32;
  alu += o.alu, uniform += o.uniform, sync += o.sync, tma += o.tma, control += o.control, other += o.other;
  cycles += o.cycles, cycles_loaded += o.cycles_loaded;
  return *this;
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
