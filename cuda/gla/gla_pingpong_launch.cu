// Tensor maps and launches of the pingpong gla kernels (gla_pingpong_kernel.cuh,
// gla_pingpong_fused.cuh); the TMA descriptors come from common/tensor_map.hpp.
#include <algorithm>

#include <cuda.h>
#include <cuda_runtime.h>

#include "common/device_sms.hpp"
#include "common/tensor_map.hpp"
#include "gla/gla_launch.hpp"
#include "gla/gla_pingpong_fused.cuh"
#include "gla/gla_pingpong_kernel.cuh"

namespace overlap::cuda::gla_launch {
namespace {

namespace pp = gla_pingpong;
using pp::Pass;

// [B,T,H,D] tensor of `elem`-byte elements as {D, T, H, B}, box {box_d, 64, 1, 1}.
cudaError_t make_bthd_map(CUtensorMap* map, CUtensorMapDataType type, int elem, const void* base, int B, int T,
                          int H, int D, int box_d, CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B) {
  const cuuint64_t dims[4] = {cuuint64_t(D), cuuint64_t(T), cuuint64_t(H), cuuint64_t(B)};
  const cuuint64_t strides[3] = {cuuint64_t(H) * D * elem, cuuint64_t(D) * elem, cuuint64_t(T) * H * D * elem};
  const cuuint32_t box[4] = {cuuint32_t(box_d), cuuint32_t(pp::kChunk), 1, 1};
  return make_tensor_map_4d(map, type, base, dims, strides, box, swizzle);
}

// bf16 states [B,H,NT,K,V] as {V, K, NT, B*H}, box {64, K, 1, 1}, 128-byte swizzle (the
// layout of a state tile the wgmma kernels keep in shared memory). A variable-length batch's
// (gla_varlen.hpp) as B = H = 1 and NT its rows of K x V: sequence i's S_n is row
// chunk_begin[i] H + h chunks_i + n.
cudaError_t make_states_map(CUtensorMap* map, void* states, int B, int H, long long chunks, int K, int V) {
  const cuuint64_t dims[4] = {cuuint64_t(V), cuuint64_t(K), cuuint64_t(chunks), cuuint64_t(B) * H};
  const cuuint64_t strides[3] = {cuuint64_t(V) * 2, cuuint64_t(K) * V * 2, cuuint64_t(chunks) * K * V * 2};
  const cuuint32_t box[4] = {64, cuuint32_t(K), 1, 1};
  return make_tensor_map_4d(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, states, dims, strides, box);
}

// Work units per CTA: the caller's choice (1 or 2), or by the unit count and this GPU's SMs
// (gla::pingpong_units_per_cta, the tiling's rule).
cudaError_t units_per_cta(int units, int forced, int* out) {
  if (forced == 1 || forced == 2) {
    *out = forced;
    return cudaSuccess;
  }
  int sms = 0;
  if (cudaError_t e = current_device_sms(&sms); e != cudaSuccess) return e;
  *out = gla::pingpong_units_per_cta(units, sms);
  return cudaSuccess;
}

// Tensor maps and scalars of the kernel parameters (units_per_cta is the caller's).
template <int K, Pass P>
cudaError_t fill_params(pp::Params& kp, const Problem& p, int chunks_per_cta) {
  const CUtensorMapDataType bf = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, f32 = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  cudaError_t e = cudaSuccess;
  if (e == cudaSuccess) e = make_bthd_map(&kp.q_map, bf, 2, p.q, p.B, p.T, p.H, K, 64);
  if (e == cudaSuccess) e = make_bthd_map(&kp.k_map, bf, 2, p.k, p.B, p.T, p.H, K, 64);
  if (e == cudaSuccess) e = make_bthd_map(&kp.v_map, bf, 2, p.v, p.B, p.T, p.H, p.V, 64);
  if (e == cudaSuccess) e = make_bthd_map(&kp.g_map, f32, 4, p.g, p.B, p.T, p.H, K, 32);
  kp.num_chunks = (p.T + pp::kChunk - 1) / pp::kChunk;
  if (e == cudaSuccess) e = make_states_map(&kp.s_map, p.states, p.B, p.H, kp.num_chunks, K, p.V);
  kp.h0 = P == Pass::Outputs ? nullptr : p.h0;
  kp.hT = P == Pass::Outputs ? nullptr : p.hT;
  kp.o = static_cast<pp::bf16*>(p.o);
  kp.states = static_cast<pp::bf16*>(p.states);
  kp.B = p.B;
  kp.T = p.T;
  kp.H = p.H;
  kp.V = p.V;
  kp.chunks_per_cta = chunks_per_cta;
  kp.scale = p.scale;
  const long long slices = (long long)p.B * p.H * (p.V / pp::kBlockV);
  const long long groups = P == Pass::Outputs ? (kp.num_chunks + chunks_per_cta - 1) / chunks_per_cta : 1;
  kp.units = static_cast<int>(slices * groups);
  return e;
}

// The fused carry: one CTA per (b, h, v-block), four warpgroups with one job each
// (gla_pingpong_fused.cuh).
namespace pf = gla_pingpong_fused;

// segments: CTAs per (b, h, v-block) along T (0: gla::PingpongFusedSegments::count_for); a
// variable-length batch walks each sequence in one CTA (per head and v-block).
template <int K, int BV>
cudaError_t launch_fused(const Problem& p, int sms, cudaStream_t stream) {
  constexpr int S = gla::PingpongFusedLayout::max_stages(K, BV);
  using L = pf::Layout<K, BV, S>;
  constexpr int smem = L::kBytes;
  static_assert(smem <= gla::PingpongFusedLayout::kSmemLimit, "shared memory over the sm_90 limit");
  const bool varlen = p.varlen.cu_seqlens != nullptr;
  auto kernel = varlen ? (p.states ? pf::gla_pingpong_fused_varlen_kernel<K, BV, S, true>
                                   : pf::gla_pingpong_fused_varlen_kernel<K, BV, S, false>)
                       : (p.states ? pf::gla_pingpong_fused_kernel<K, BV, S, true>
                                   : pf::gla_pingpong_fused_kernel<K, BV, S, false>);
  if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem); e != cudaSuccess)
    return e;
  const CUtensorMapDataType bf = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, f32 = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  pf::Params kp{};
  cudaError_t e = make_bthd_map(&kp.q_map, bf, 2, p.q, p.B, p.T, p.H, K, 64);
  if (e == cudaSuccess) e = make_bthd_map(&kp.k_map, bf, 2, p.k, p.B, p.T, p.H, K, 64);
  if (e == cudaSuccess) e = make_bthd_map(&kp.v_map, bf, 2, p.v, p.B, p.T, p.H, p.V, 64);
  if (e == cudaSuccess) e = make_bthd_map(&kp.g_map, f32, 4, p.g, p.B, p.T, p.H, K, K, CU_TENSOR_MAP_SWIZZLE_NONE);
  if (e == cudaSuccess) e = make_bthd_map(&kp.o_map, bf, 2, p.o, p.B, p.T, p.H, p.V, 64);
  kp.num_chunks = (p.T + pf::kChunk - 1) / pf::kChunk;
  const long long varlen_rows = (long long)p.H * gla_varlen::max_chunks(p.T, p.varlen.num_seqs);
  if (e == cudaSuccess && p.states)
    e = varlen ? make_states_map(&kp.states_map, p.states, 1, 1, varlen_rows, K, p.V)
               : make_states_map(&kp.states_map, p.states, p.B, p.H, kp.num_chunks, K, p.V);
  if (e != cudaSuccess) return e;
  kp.h0 = p.h0;
  kp.hT = p.hT;
  kp.H = p.H;
  kp.V = p.V;
  kp.v_blocks = p.V / BV;
  kp.scale = p.scale;
  kp.varlen = p.varlen;
  kp.o = static_cast<pf::bf16*>(p.o);
  using Segments = gla::PingpongFusedSegments;
  const long long walks = (long long)(varlen ? p.varlen.num_seqs : p.B) * p.H * kp.v_blocks;
  const int count = varlen ? 1
                    : p.segments > 0 ? std::min(p.segments, kp.num_chunks)
                                     : Segments::count_for(walks, sms, kp.num_chunks);
  const Segments split = Segments::split(kp.num_chunks, count);
  kp.segments = split.count;
  for (int i = 0; i <= Segments::kMax; ++i) kp.bounds[i] = split.bounds[i];
  kernel<<<dim3(static_cast<unsigned>(walks * split.count)), pf::kThreads, smem, stream>>>(kp);
  return cudaGetLastError();
}

// The materialized carry's two kernels (paired form, gla_pingpong_kernel.cuh).
template <int K, Pass P>
cudaError_t launch(const Problem& p, int chunks_per_cta, cudaStream_t stream) {
  using L = pp::Layout<K, P>;
  constexpr gla::Tiling tiling = pp::tiling_of(K, P);
  static_assert(tiling.chunk == pp::kChunk && tiling.block_v == pp::kBlockV && tiling.threads() == pp::kThreads &&
                    tiling.consumer_warpgroups == pp::kConsumers && tiling.max_regs_per_thread == pp::kConsumerRegs,
                "kernel and gla_tiling.hpp disagree");
  static_assert(tiling.smem_bytes(K, pp::kBlockV) == L::kBytes, "shared-memory layout and gla_tiling.hpp disagree");
  constexpr int smem = L::kBytes;
  auto kernel = pp::gla_pingpong_kernel<K, P>;
  if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem); e != cudaSuccess)
    return e;
  pp::Params kp{};
  cudaError_t e = fill_params<K, P>(kp, p, chunks_per_cta);
  if (e != cudaSuccess) return e;
  if (e = units_per_cta(kp.units, p.units_per_cta, &kp.units_per_cta); e != cudaSuccess) return e;
  const dim3 grid(static_cast<unsigned>((kp.units + kp.units_per_cta - 1) / kp.units_per_cta));
  kernel<<<grid, pp::kThreads, smem, stream>>>(kp);
  return cudaGetLastError();
}

}  // namespace

int pingpong_fused(const Problem& p, CUstream_st* stream) {
  int sms = 0;
  if (cudaError_t e = current_device_sms(&sms); e != cudaSuccess) return e;
  const long long heads = (long long)(p.varlen.cu_seqlens ? p.varlen.num_seqs : p.B) * p.H;
  const int bv = p.block_v ? p.block_v : gla::pingpong_fused_block_v(p.V, heads, sms);
  if (p.K == 64) return bv == 128 ? launch_fused<64, 128>(p, sms, stream) : launch_fused<64, 64>(p, sms, stream);
  return bv == 128 ? launch_fused<128, 128>(p, sms, stream) : launch_fused<128, 64>(p, sms, stream);
}

int pingpong_materialized(const Problem& p, int chunks_per_cta, CUstream_st* stream) {
  cudaError_t e = p.K == 64 ? launch<64, Pass::States>(p, 0, stream) : launch<128, Pass::States>(p, 0, stream);
  if (e != cudaSuccess) return e;
  return p.K == 64 ? launch<64, Pass::Outputs>(p, chunks_per_cta, stream)
                   : launch<128, Pass::Outputs>(p, chunks_per_cta, stream);
}

}  // namespace overlap::cuda::gla_launch
