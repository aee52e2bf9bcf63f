#include "common/tensor_map.hpp"

#include <cudaTypedefs.h>

namespace overlap::cuda {
namespace {

PFN_cuTensorMapEncodeTiled_v12000 encode_fn() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      f = nullptr;
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
  }();
  return fn;
}

cudaError_t encode(CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank, const void* base,
                   const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box,
                   CUtensorMapSwizzle swizzle) {
  auto encode = encode_fn();
  if (!encode) return cudaErrorNotSupported;
  const cuuint32_t elem_strides[5] = {1, 1, 1, 1, 1};
  const CUresult r = encode(map, type, rank, const_cast<void*>(base), dims, strides, box, elem_strides,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

}  // namespace

cudaError_t make_tensor_map_4d(CUtensorMap* map, CUtensorMapDataType type, const void* base,
                               const cuuint64_t (&dims)[4], const cuuint64_t (&strides)[3],
                               const cuuint32_t (&box)[4], CUtensorMapSwizzle swizzle) {
  return encode(map, type, 4, base, dims, strides, box, swizzle);
}

cudaError_t make_tensor_map_5d(CUtensorMap* map, CUtensorMapDataType type, const void* base,
                               const cuuint64_t (&dims)[5], const cuuint64_t (&strides)[4],
                               const cuuint32_t (&box)[5], CUtensorMapSwizzle swizzle) {
  return encode(map, type, 5, base, dims, strides, box, swizzle);
}

}  // namespace overlap::cuda
