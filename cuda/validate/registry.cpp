#include "validate/gpu_variant.hpp"

namespace overlap::gpu {

const std::vector<GpuVariant>& gpu_variants() {
  static const std::vector<GpuVariant> all = [] {
    std::vector<GpuVariant> v;
    for (auto list : {gla_gpu_variants, gla_backward_gpu_variants, linrnn_gpu_variants, projchain_gpu_variants,
                      dualgemm_gpu_variants}) {
      auto part = list();
      v.insert(v.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
    }
    return v;
  }();
  return all;
}

}  // namespace overlap::gpu
