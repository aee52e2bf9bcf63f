#include "sim/occupancy.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace overlap::sim {

std::string why_kernel_does_not_fit(const HardwareProfile& hw, const KernelSpec& k) {
  const double smem_KiB = double(k.smem_bytes) / 1024.0;
  if (smem_KiB > hw.smem_per_cta_KiB)
    return fmt::format("kernel '{}' needs {:.1f} KiB of shared memory per CTA; {} allows {} KiB", k.name, smem_KiB,
                       hw.name, hw.smem_per_cta_KiB);
  if (double(k.regs_per_cta) > hw.regs_per_sm)
    return fmt::format("kernel '{}' needs {} registers per CTA; {} has {} per SM", k.name, k.regs_per_cta, hw.name,
                       hw.regs_per_sm);
  if (k.threads_per_cta > hw.max_threads_per_sm || k.threads_per_cta > 1024)
    return fmt::format("kernel '{}' needs {} threads per CTA; {} allows {}", k.name, k.threads_per_cta, hw.name,
                       std::min(1024.0, hw.max_threads_per_sm));
  if (k.cluster_size > 1 && !hw.has_clusters())
    return fmt::format("kernel '{}' uses thread-block clusters (sm_90+); {} is sm_{}", k.name, hw.name,
                       int(hw.compute_capability));
  return {};
}

std::int64_t resident_ctas(const HardwareProfile& hw, int ctas_per_sm, int cluster_size) {
  const int size = std::max(1, cluster_size);
  std::int64_t slots = std::int64_t(hw.sm_count) * ctas_per_sm / size * size;
  if (size > 1 && ctas_per_sm == 1) slots = std::min(slots, std::int64_t(hw.cluster_slots(size)) * size);
  return std::max<std::int64_t>(slots, 1);
}

Occupancy occupancy(const HardwareProfile& hw, const KernelSpec& k) {
  const std::string why = why_kernel_does_not_fit(hw, k);
  OVERLAP_REQUIRE(why.empty(), "{}", why);
  Occupancy o{int(hw.max_ctas_per_sm), "CTA slots"};
  const auto limit = [&](double fits, const char* what) {
    if (int(fits) < o.ctas_per_sm) o = {int(fits), what};
  };
  if (k.regs_per_cta > 0) limit(hw.regs_per_sm / double(k.regs_per_cta), "registers");
  // Each CTA also reserves 1 KiB of shared memory for the runtime (sm_80+).
  const double reserve = hw.compute_capability >= 80 ? 1024.0 : 0.0;
  if (k.smem_bytes > 0) limit(hw.smem_per_sm_KiB * 1024.0 / (double(k.smem_bytes) + reserve), "shared memory");
  limit(hw.max_threads_per_sm / double(k.threads_per_cta), "threads");
  OVERLAP_REQUIRE(o.ctas_per_sm >= 1, "kernel '{}': no CTA fits on an SM of {} ({})", k.name, hw.name, o.limiter);
  return o;
}

}  // namespace overlap::sim
