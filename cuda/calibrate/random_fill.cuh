#pragma once
// Inputs of the library-GEMM microbenchmarks: uniform in [-0.5, 0.5) from a hash of the index
// (no zeros to make the tensor cores' work easy, no NaN codes), converted to the element type.
#include <cstddef>

namespace overlap::gpu {

template <typename T>
__global__ void fill_random(T* x, std::size_t n, unsigned seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    x[i] = T((static_cast<float>(h & 0xffff) / 65536.0f) - 0.5f);
  }
}

}  // namespace overlap::gpu
