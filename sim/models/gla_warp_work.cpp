// Phase costs of the mma.sync gla kernels (gla_warp_work.hpp).
#include "sim/models/gla_warp_work.hpp"

#include <algorithm>
#include <string>

namespace overlap::sim::gla_work {

void add_phase(std::vector<Step>& to, const std::vector<WarpWork>& warps, bool balanced, TensorPath path,
               const char* what) {
  double sub[kSubPartitions][3] = {};  // sfu lanes, alu lanes, mma flops per sub-partition
  double smem = 0, sfu_total = 0, alu_total = 0, mma_total = 0;
  for (std::size_t w = 0; w < warps.size(); ++w) {
    const WarpWork& x = warps[w];
    const double sfu = 32 * (2 * x.exp_pairs + x.mufu), alu = 32 * x.alu, flops = x.mma * kMmaFlops;
    auto& p = sub[w % kSubPartitions];
    p[0] += sfu, p[1] += alu, p[2] += flops;
    sfu_total += sfu, alu_total += alu, mma_total += flops, smem += x.smem;
  }
  double busiest[3] = {};
  for (auto& p : sub)
    for (int i = 0; i < 3; ++i) busiest[i] = std::max(busiest[i], p[i]);
  const double sfu = balanced ? sfu_total : kSubPartitions * busiest[0];
  const double alu = balanced ? alu_total : kSubPartitions * busiest[1];
  const double flops = balanced ? mma_total : kSubPartitions * busiest[2];
  const std::string w(what);
  if (smem > 0) to.push_back(run(Unit::Smem, smem, w + ": shared memory"));
  if (sfu > 0) to.push_back(run(Unit::Sfu, sfu, w + ": exp2"));
  if (alu > 0) to.push_back(run(Unit::Fma, alu, w + ": fp32"));
  if (flops > 0) to.push_back(mma(flops, Precision::Bf16, path, w + ": mma"));
}

}  // namespace overlap::sim::gla_work
