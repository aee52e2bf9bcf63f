#pragma once
// Host side of TMA: tiled tensor maps encoded with cuTensorMapEncodeTiled, reached through the
// runtime's driver entry point (no link against libcuda). Kernels of every workload use 4-d maps
// (a unit dimension where the tensor has fewer), so one device wrapper per direction serves all
// of them (sm90_ptx.cuh); a 5-d map views a tensor's rows in groups of 8 (dualgemm's two-atom
// boxes).
#include <cuda.h>
#include <cuda_runtime_api.h>

namespace overlap::cuda {

// dims innermost first; strides in bytes of dims 1..3; box in elements. cudaErrorNotSupported
// when the driver has no cuTensorMapEncodeTiled, cudaErrorInvalidValue when it refuses the map.
cudaError_t make_tensor_map_4d(CUtensorMap* map, CUtensorMapDataType type, const void* base,
                               const cuuint64_t (&dims)[4], const cuuint64_t (&strides)[3],
                               const cuuint32_t (&box)[4],
                               CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B);
cudaError_t make_tensor_map_5d(CUtensorMap* map, CUtensorMapDataType type, const void* base,
                               const cuuint64_t (&dims)[5], const cuuint64_t (&strides)[4],
                               const cuuint32_t (&box)[5],
                               CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B);

}  // namespace overlap::cuda
