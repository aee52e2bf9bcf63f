// Instantiates the gla backward's kernels for K, V in {64, 128} and launches them.
#include <cuda_runtime.h>

#include "common/device_sms.hpp"
#include "gla/gla_backward_launch.hpp"
#include "gla/gla_chunk_grad_ws_kernel.cuh"
#include "gla/gla_state_walk_kernel.cuh"

namespace overlap::cuda::gla_backward_launch {
namespace {

namespace kern = gla_backward_kernel;

kern::Params params_of(const Problem& p) {
  kern::Params kp{};
  kp.q = static_cast<const kern::bf16*>(p.q);
  kp.k = static_cast<const kern::bf16*>(p.k);
  kp.v = static_cast<const kern::bf16*>(p.v);
  kp.g = p.g;
  kp.do_ = static_cast<const kern::bf16*>(p.do_);
  kp.h0 = p.h0;
  kp.dhT = p.dhT;
  kp.states = static_cast<kern::bf16*>(p.states);
  kp.dstates = static_cast<kern::bf16*>(p.dstates);
  kp.dq = static_cast<kern::bf16*>(p.dq);
  kp.dk = static_cast<kern::bf16*>(p.dk);
  kp.dv = static_cast<kern::bf16*>(p.dv);
  kp.dg = p.dg;
  kp.dh0 = p.dh0;
  kp.T = p.T;
  kp.H = p.H;
  kp.V = p.V;
  kp.num_chunks = (p.T + kern::kChunk - 1) / kern::kChunk;
  kp.scale = p.scale;
  kp.varlen = p.varlen;
  return kp;
}

template <class Kernel>
cudaError_t launch(Kernel kernel, dim3 grid, int threads, int smem, const kern::Params& kp, cudaStream_t stream) {
  if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
      e != cudaSuccess)
    return e;
  kernel<<<grid, threads, smem, stream>>>(kp);
  return cudaGetLastError();
}

// Batch rows, or packed sequences.
unsigned sequences(const Problem& p) { return static_cast<unsigned>(p.varlen.cu_seqlens ? p.varlen.num_seqs : p.B); }

template <int K, kern::Walk W>
cudaError_t walk(const Problem& p, cudaStream_t s) {
  const auto kernel = p.V == 64 ? kern::gla_state_walk_kernel<K, 64, W> : kern::gla_state_walk_kernel<K, 128, W>;
  const int smem = p.V == 64 ? kern::WalkLayout<64>::kBytes : kern::WalkLayout<128>::kBytes;
  return launch(kernel, dim3(K / kern::kWalkRows, p.H, sequences(p)), kern::kWalkThreads, smem, params_of(p), s);
}

template <int K, int V>
cudaError_t chunk_grads_kv(const Problem& p, cudaStream_t s) {
  const kern::Params kp = params_of(p);
  const dim3 grid = p.varlen.cu_seqlens ? dim3(static_cast<unsigned>(p.max_chunks) * p.H) : dim3(kp.num_chunks, p.H, p.B);
  return launch(kern::gla_chunk_grad_kernel<K, V>, grid, kern::kChunkGradThreads, kern::ChunkGradLayout<K, V>::kBytes,
                kp, s);
}

// Persistent: one CTA an SM, or one a chunk where there are fewer.
template <int K, int V>
cudaError_t chunk_grads_ws_kv(const Problem& p, cudaStream_t s) {
  const kern::Params kp = params_of(p);
  const long long total = p.varlen.cu_seqlens ? (long long)p.max_chunks * p.H : (long long)kp.num_chunks * p.H * p.B;
  int sms = 0;
  if (cudaError_t e = current_device_sms(&sms); e != cudaSuccess) return e;
  const dim3 grid(static_cast<unsigned>(total < sms ? total : sms));
  const auto kernel = kern::gla_chunk_grad_ws_kernel<K, V>;
  if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           kern::ChunkGradWsLayout<K, V>::kBytes);
      e != cudaSuccess)
    return e;
  kernel<<<grid, kern::kChunkGradWsThreads, kern::ChunkGradWsLayout<K, V>::kBytes, s>>>(kp, total);
  return cudaGetLastError();
}

}  // namespace

int states(const Problem& p, CUstream_st* stream) {
  using kern::Walk;
  return p.K == 64 ? walk<64, Walk::States>(p, stream) : walk<128, Walk::States>(p, stream);
}

int state_grads(const Problem& p, CUstream_st* stream) {
  using kern::Walk;
  return p.K == 64 ? walk<64, Walk::StateGrads>(p, stream) : walk<128, Walk::StateGrads>(p, stream);
}

int chunk_grads(const Problem& p, CUstream_st* stream) {
  if (p.K == 64) return p.V == 64 ? chunk_grads_kv<64, 64>(p, stream) : chunk_grads_kv<64, 128>(p, stream);
  return p.V == 64 ? chunk_grads_kv<128, 64>(p, stream) : chunk_grads_kv<128, 128>(p, stream);
}

int chunk_grads_ws(const Problem& p, CUstream_st* stream) {
  if (p.K == 64) return p.V == 64 ? chunk_grads_ws_kv<64, 64>(p, stream) : chunk_grads_ws_kv<64, 128>(p, stream);
  return p.V == 64 ? chunk_grads_ws_kv<128, 64>(p, stream) : chunk_grads_ws_kv<128, 128>(p, stream);
}

}  // namespace overlap::cuda::gla_backward_launch
