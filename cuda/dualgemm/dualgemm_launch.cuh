#pragma once
// Tensor maps and launch of one dualgemm kernel instantiation; included by the per-format
// launch files, which instantiate launch_variant<Fp8> over every index of kTilings.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <utility>

#include "common/tensor_map.hpp"
#include "dualgemm/dualgemm_kernel.cuh"
#include "dualgemm/dualgemm_launch.hpp"

namespace overlap::cuda::dualgemm_launch {

// The operands' element type as TMA sees it (fp8 e4m3 codes as bytes).
inline CUtensorMapDataType operand_type(bool fp8) {
  return fp8 ? CU_TENSOR_MAP_DATA_TYPE_UINT8 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
}

// [L, rows, K] operand of `elem`-byte elements as {K, rows, L, 1}, box {128 bytes of K, box_rows}.
inline cudaError_t operand_map(CUtensorMap* map, bool fp8, const void* base, long long L, long long rows,
                               long long K, int box_rows) {
  const int elem = fp8 ? 1 : 2;
  const cuuint64_t dims[4] = {cuuint64_t(K), cuuint64_t(rows), cuuint64_t(L), 1};
  const cuuint64_t strides[3] = {cuuint64_t(K) * elem, cuuint64_t(rows) * K * elem, cuuint64_t(L) * rows * K * elem};
  const cuuint32_t box[4] = {cuuint32_t(128 / elem), cuuint32_t(box_rows), 1, 1};
  return make_tensor_map_4d(map, operand_type(fp8), base, dims, strides, box);
}

// Boxes of `atoms` 128-byte atoms of K (a two-atom stage, dualgemm_kernel.cuh's issue_load).
// A: [L, M, K] as {128 bytes, M, K / 128 bytes, L}, box {128 bytes, box_rows, atoms, 1}: lands
// as [atom][row][128 B].
inline cudaError_t atoms_a_map(CUtensorMap* map, bool fp8, const void* base, long long L, long long M, long long K,
                               int box_rows, int atoms) {
  const int elem = fp8 ? 1 : 2;
  const cuuint64_t dims[4] = {cuuint64_t(128 / elem), cuuint64_t(M), cuuint64_t(K * elem / 128), cuuint64_t(L)};
  const cuuint64_t strides[3] = {cuuint64_t(K) * elem, 128, cuuint64_t(M) * K * elem};
  const cuuint32_t box[4] = {cuuint32_t(128 / elem), cuuint32_t(box_rows), cuuint32_t(atoms), 1};
  return make_tensor_map_4d(map, operand_type(fp8), base, dims, strides, box);
}
// B: [L, N, K] (N a multiple of 8) as {128 bytes, 8 rows, K / 128 bytes, N / 8, L}, box
// {128 bytes, 8, atoms, box_rows / 8, 1}: lands as [row group][atom][8 rows][128 B].
inline cudaError_t atoms_b_map(CUtensorMap* map, bool fp8, const void* base, long long L, long long N, long long K,
                               int box_rows, int atoms) {
  const int elem = fp8 ? 1 : 2;
  const cuuint64_t dims[5] = {cuuint64_t(128 / elem), 8, cuuint64_t(K * elem / 128), cuuint64_t(N / 8), cuuint64_t(L)};
  const cuuint64_t strides[4] = {cuuint64_t(K) * elem, 128, 8 * cuuint64_t(K) * elem, cuuint64_t(N) * K * elem};
  const cuuint32_t box[5] = {cuuint32_t(128 / elem), 8, cuuint32_t(atoms), cuuint32_t(box_rows / 8), 1};
  return make_tensor_map_5d(map, operand_type(fp8), base, dims, strides, box);
}

template <bool Fp8, int BM, int BN, int Stages, bool WS, bool TmaStore, int CM, int CN, bool Eager, bool Pairs, int PrefetchK,
          int KAtoms, int Producers, bool EarlyScales, bool LeanEdges>
cudaError_t launch_kernel(const DualGemmDeviceArgs& a, const DualGemmSizes& s, cudaStream_t stream) {
  using Kn = dualgemm_sm90::Kernel<Fp8, BM, BN, Stages, WS, TmaStore, CM, CN, Eager, Pairs, PrefetchK, KAtoms, Producers, EarlyScales, LeanEdges>;
  static_assert(Kn::kSmemBytes <= 227 * 1024, "shared memory over the sm_90 per-block limit");
  dualgemm_sm90::Params p{};
  cudaError_t e = cudaSuccess;
  if constexpr (KAtoms > 1) {
    e = atoms_a_map(&p.a_map, Fp8, a.a, s.L, s.M, s.K, BM, KAtoms);
    if (e == cudaSuccess) e = atoms_b_map(&p.b1_map, Fp8, a.b1, s.L, s.N, s.K, BN, KAtoms);
    if (e == cudaSuccess) e = atoms_b_map(&p.b2_map, Fp8, a.b2, s.L, s.N, s.K, BN, KAtoms);
  } else {
    // Each CTA loads its slice of the tiles its cluster shares (the whole tile without a
    // cluster; a 64-row tile's B per warpgroup).
    e = operand_map(&p.a_map, Fp8, a.a, s.L, s.M, s.K, Kn::kASlice);
    if (e == cudaSuccess) e = operand_map(&p.b1_map, Fp8, a.b1, s.L, s.N, s.K, Kn::kBBox);
    if (e == cudaSuccess) e = operand_map(&p.b2_map, Fp8, a.b2, s.L, s.N, s.K, Kn::kBBox);
  }
  if (e == cudaSuccess && TmaStore) {
    const cuuint64_t dims[4] = {cuuint64_t(s.N), cuuint64_t(s.M), cuuint64_t(s.L), 1};
    const cuuint64_t strides[3] = {cuuint64_t(s.N) * 2, cuuint64_t(s.M) * s.N * 2, cuuint64_t(s.L) * s.M * s.N * 2};
    const cuuint32_t box[4] = {cuuint32_t(Kn::kSubCols), 64, 1, 1};
    e = make_tensor_map_4d(&p.c_map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, a.c, dims, strides, box,
                           !Kn::kSubSwizzled    ? CU_TENSOR_MAP_SWIZZLE_NONE  // as the kernel stages it
                           : Kn::kSubCols == 64 ? CU_TENSOR_MAP_SWIZZLE_128B
                                                : CU_TENSOR_MAP_SWIZZLE_64B);
  }
  if (e != cudaSuccess) return e;
  p.c = static_cast<__half*>(a.c);
  p.a_scale = a.a_scale;
  p.b1_scale = a.b1_scale;
  p.b2_scale = a.b2_scale;
  p.M = int(s.M);
  p.N = int(s.N);
  p.K = int(s.K);
  p.L = int(s.L);
  p.tiles_m = int((s.M + BM - 1) / BM);
  p.tiles_n = int((s.N + BN - 1) / BN);
  const long long cluster_tiles =
      (long long)p.L * ((p.tiles_m + CM - 1) / CM) * ((p.tiles_n + CN - 1) / CN);

  auto kernel =
      dualgemm_sm90::dualgemm_kernel<Fp8, BM, BN, Stages, WS, TmaStore, CM, CN, Eager, Pairs, PrefetchK, KAtoms, Producers, EarlyScales, LeanEdges>;
  if ((e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Kn::kSmemBytes)) != cudaSuccess)
    return e;
  cudaLaunchConfig_t config{};
  config.blockDim = dim3(Kn::kThreads);
  config.dynamicSmemBytes = Kn::kSmemBytes;
  config.stream = stream;
  cudaLaunchAttribute cluster{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = Kn::kCluster;
  cluster.val.clusterDim.y = cluster.val.clusterDim.z = 1;
  config.attrs = &cluster;
  config.numAttrs = Kn::kCluster > 1 ? 1 : 0;  // without a cluster, an ordinary launch
  long long clusters = cluster_tiles;
  if (WS) {  // persistent: as many clusters as fit at once (one CTA per SM), each walking tiles id, + count, ...
    int device = 0;
    if ((e = cudaGetDevice(&device)) != cudaSuccess) return e;
    // Asked once per device and instantiation (the occupancy query is not free on every call).
    static std::atomic<int> fit_by_device[64] = {};
    int fit = device < 64 ? fit_by_device[device].load(std::memory_order_relaxed) : 0;
    if (fit == 0) {
      if (Kn::kCluster > 1) {
        config.gridDim = dim3(unsigned(Kn::kCluster));
        if ((e = cudaOccupancyMaxActiveClusters(&fit, kernel, &config)) != cudaSuccess) return e;
      } else if ((e = cudaDeviceGetAttribute(&fit, cudaDevAttrMultiProcessorCount, device)) != cudaSuccess) {
        return e;
      }
      if (fit < 1) return cudaErrorInvalidConfiguration;
      if (device < 64) fit_by_device[device].store(fit, std::memory_order_relaxed);
    }
    clusters = std::min<long long>(cluster_tiles, fit);
  }
  config.gridDim = dim3(unsigned(clusters * Kn::kCluster));
  return cudaLaunchKernelEx(&config, kernel, p);
}

template <bool Fp8, std::size_t I>
cudaError_t launch_index(const DualGemmDeviceArgs& a, const DualGemmSizes& s, cudaStream_t stream) {
  constexpr dualgemm::Tiling t = dualgemm::kTilings[I];
  return launch_kernel<Fp8, t.tile_m, t.tile_n, t.stages, t.warp_specialized, t.tma_store, t.cluster_m, t.cluster_n,
                       t.eager_release, t.paired_loads, t.prefetch_k, t.k_atoms, t.producers, t.early_scales, t.lean_edges>(a, s, stream);
}

template <bool Fp8, std::size_t... I>
cudaError_t launch_variant(std::size_t index, const DualGemmDeviceArgs& a, const DualGemmSizes& s,
                           cudaStream_t stream, std::index_sequence<I...>) {
  cudaError_t e = cudaErrorInvalidValue;
  ((index == I ? (e = launch_index<Fp8, I>(a, s, stream), true) : false) || ...);
  return e;
}

template <bool Fp8>
cudaError_t launch_variant(std::size_t index, const DualGemmDeviceArgs& a, const DualGemmSizes& s,
                           cudaStream_t stream) {
  return launch_variant<Fp8>(index, a, s, stream, std::make_index_sequence<dualgemm::kTilings.size()>{});
}

}  // namespace overlap::cuda::dualgemm_launch
