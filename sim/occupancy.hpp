#pragma once
// How many CTAs of a kernel fit on one SM at once (registers, shared memory, threads, CTA
// slots), and which resource limits it: the CUDA occupancy rules.
#include <cstdint>
#include <string>

#include "sim/kernel.hpp"
#include "sim/profile.hpp"

namespace overlap::sim {

struct Occupancy {
  int ctas_per_sm = 0;
  std::string limiter;  // "registers", "shared memory", "threads", "CTA slots"
};

// Throws overlap::Error naming the resource when not even one CTA fits.
Occupancy occupancy(const HardwareProfile& hw, const KernelSpec& kernel);

// CTAs of a kernel resident on the whole GPU at once with `ctas_per_sm` per SM, in whole
// clusters. A cluster lives in one GPC: with one CTA per SM no more clusters fit than the
// profile's measured cluster slots (an H100 holds 30 clusters of 4, 120 CTAs, not 132).
std::int64_t resident_ctas(const HardwareProfile& hw, int ctas_per_sm, int cluster_size);

// Empty when the kernel fits; otherwise why not (used by can_implement).
std::string why_kernel_does_not_fit(const HardwareProfile& hw, const KernelSpec& kernel);

}  // namespace overlap::sim
