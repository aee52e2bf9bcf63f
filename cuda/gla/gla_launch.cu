// Instantiates the chunked gla kernel for each (K, stages, pass) and launches it.
#include <cuda_runtime.h>

#include "gla/gla_chunk_kernel.cuh"
#include "gla/gla_launch.hpp"

namespace overlap::cuda::gla_launch {
namespace {

using gla_kernel::Pass;

template <int K, int Stages>
constexpr gla::Tiling tiling_of(Pass pass) {
  return gla::tiling_for(Stages == 1 ? gla::Schedule::Sequential : gla::Schedule::Pipelined,
                         pass == Pass::Fused ? gla::StateCarry::Fused : gla::StateCarry::Materialized, K,
                         gla_kernel::kBlockV);
}

template <int K, int Stages, Pass P>
cudaError_t launch(const Problem& p, int chunks_per_cta, cudaStream_t stream) {
  constexpr gla::Tiling tiling = tiling_of<K, Stages>(P);
  static_assert(tiling.chunk == gla_kernel::kChunk && tiling.block_v == gla_kernel::kBlockV &&
                    tiling.stages == Stages && tiling.threads() == gla_kernel::kThreads,
                "kernel and gla_tiling.hpp disagree");
  static_assert(tiling.smem_bytes(K, gla_kernel::kBlockV) == gla_kernel::Layout<K, Stages>::kBytes,
                "shared-memory layout and gla_tiling.hpp disagree");
  constexpr int smem = gla_kernel::Layout<K, Stages>::kBytes;
  auto kernel = gla_kernel::gla_chunk_kernel<K, Stages, P>;
  if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
      e != cudaSuccess)
    return e;
  gla_kernel::Params kp{};
  kp.q = static_cast<const gla_kernel::bf16*>(p.q);
  kp.k = static_cast<const gla_kernel::bf16*>(p.k);
  kp.v = static_cast<const gla_kernel::bf16*>(p.v);
  kp.g = p.g;
  kp.h0 = P == Pass::Outputs ? nullptr : p.h0;
  kp.hT = P == Pass::Outputs ? nullptr : p.hT;
  kp.o = static_cast<gla_kernel::bf16*>(p.o);
  kp.states = static_cast<gla_kernel::bf16*>(p.states);
  kp.T = p.T;
  kp.H = p.H;
  kp.V = p.V;
  kp.num_chunks = (p.T + gla_kernel::kChunk - 1) / gla_kernel::kChunk;
  kp.chunks_per_cta = chunks_per_cta;
  kp.scale = p.scale;
  const int v_blocks = p.V / gla_kernel::kBlockV;
  const int groups = P == Pass::Outputs ? (kp.num_chunks + chunks_per_cta - 1) / chunks_per_cta : 1;
  const dim3 grid(v_blocks * groups, p.H, p.B);
  kernel<<<grid, gla_kernel::kThreads, smem, stream>>>(kp);
  return cudaGetLastError();
}

template <int Stages>
cudaError_t fused_k(const Problem& p, cudaStream_t s) {
  return p.K == 64 ? launch<64, Stages, Pass::Fused>(p, 0, s) : launch<128, Stages, Pass::Fused>(p, 0, s);
}

template <int Stages>
cudaError_t materialized_k(const Problem& p, int cpc, cudaStream_t s) {
  cudaError_t e = p.K == 64 ? launch<64, Stages, Pass::States>(p, 0, s) : launch<128, Stages, Pass::States>(p, 0, s);
  if (e != cudaSuccess) return e;
  return p.K == 64 ? launch<64, Stages, Pass::Outputs>(p, cpc, s) : launch<128, Stages, Pass::Outputs>(p, cpc, s);
}

}  // namespace

int fused(const Problem& p, int stages, CUstream_st* stream) {
  return stages == 1 ? fused_k<1>(p, stream) : fused_k<2>(p, stream);
}

int materialized(const Problem& p, int stages, int chunks_per_cta, CUstream_st* stream) {
  return stages == 1 ? materialized_k<1>(p, chunks_per_cta, stream)
                     : materialized_k<2>(p, chunks_per_cta, stream);
}

}  // namespace overlap::cuda::gla_launch
