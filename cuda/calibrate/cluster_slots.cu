#include "calibrate/cluster_slots.hpp"

#include <cuda_runtime.h>

#include <fmt/format.h>

#include "runtime/cuda_check.hpp"

namespace overlap::gpu {
namespace {

__global__ void whole_sm_cta() {}

}  // namespace

std::vector<MeasuredField> measure_cluster_slots(int compute_capability) {
  if (compute_capability < 90) return {};
  int device = 0, smem_optin = 0;
  OVERLAP_CUDA_CHECK(cudaGetDevice(&device));
  OVERLAP_CUDA_CHECK(cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  // More than half an SM's shared memory: one CTA per SM, as the warp-specialized GEMMs run.
  const int smem = smem_optin;
  OVERLAP_CUDA_CHECK(cudaFuncSetAttribute(whole_sm_cta, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  std::vector<MeasuredField> out;
  for (const int size : {2, 4}) {
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(unsigned(size));
    config.blockDim = dim3(384);
    config.dynamicSmemBytes = std::size_t(smem);
    cudaLaunchAttribute cluster{};
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = unsigned(size);
    cluster.val.clusterDim.y = cluster.val.clusterDim.z = 1;
    config.attrs = &cluster;
    config.numAttrs = 1;
    int fit = 0;
    OVERLAP_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&fit, whole_sm_cta, &config));
    out.push_back({fmt::format("max_clusters_of_{}", size), double(fit),
                   fmt::format("measured by overlap calibrate (cuda/calibrate/cluster_slots.cu): "
                               "cudaOccupancyMaxActiveClusters for clusters of {} CTAs of 384 threads, each with "
                               "{} bytes of dynamic shared memory (one CTA per SM)",
                               size, smem)});
  }
  return out;
}

}  // namespace overlap::gpu
