#pragma once
// The dualgemm kernel family for sm_90a: C = silu(A B1^T) * (A B2^T), fp16 out, fp32
// accumulation, bf16 or fp8 e4m3 operands (fp8 with per-row scales applied in the epilogue).
// One template, parameterized by a Tiling of dualgemm_tiling.hpp:
//
//   ring      `Stages` stages of {A tile, B1 tile, B2 tile}, each KAtoms x 128 bytes of K per
//             row (128 bytes: 64 bf16 / 128 fp8, one swizzle atom), loaded by TMA, one box per
//             operand and stage, with the 128-byte swizzle that wgmma reads;
//             full[s] completes on the TMA's bytes, empty[s] when both consumer warpgroups'
//             wgmmas have read the stage.
//   consumers two warpgroups. A 128-row tile is split by rows (each 64 x BN), a 64-row tile
//             by columns (each 64 x BN/2). A stage holds each warpgroup's B1 rows followed by
//             its B2 rows, so one 64 x 2WN wgmma per k-step computes both products (A is read
//             from shared memory once for the two, and the wider wgmma keeps the tensor pipe
//             busier than two narrow ones). Per stage each issues 4 k-steps an atom, keeping one
//             stage's wgmma group in flight (none with one stage).
//   producer  warp-specialized (WS): a third warpgroup (40 registers a thread after setmaxnreg,
//             the consumers get 232), one thread of which (of each of its first `Producers`
//             warps, taking the k-blocks in turn) issues the loads for every tile of
//             a persistent CTA, running up to `Stages` stages ahead, through tile boundaries,
//             so the next tile's loads overlap this tile's epilogue. Not WS: thread 0 of the consumers
//             issues each refill after the stage is released, between its own wgmmas, one
//             output tile per CTA.
//   cluster   (WS only) CM x CN CTAs: the CM CTAs of a column share its B tiles, the CN CTAs
//             of a row its A tiles. Each CTA loads 1/CM of B1 and B2 and 1/CN of A per stage
//             and multicasts its slice to the CTAs that share it; a stage's full barrier in
//             every CTA counts all the bytes, and a consumer warpgroup releases a stage to
//             every producer that writes into it (its row and its column), so each producer's
//             empty barrier counts 2 x (CM + CN - 1) arrivals.
//   edges     (LeanEdges) the producer thread initialises the barriers and issues the ring's
//             first fill before the CTA-wide barrier; the TMA store's last wait is for its
//             reads of shared memory only.
//   epilogue  scales (fp8; loaded before the k-loop with EarlyScales, else after it),
//             silu(x1) * x2 in fp32, fp16. Direct: each thread stores its
//             fragment's pairs. TMA store: each warpgroup writes its 64-row part to shared
//             memory (swizzled; 48-column parts unswizzled), one thread stores it by TMA,
//             asynchronously; the buffer is reused only after that store has read it.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <utility>

#include <cute/arch/mma_sm90_gmma.hpp>

#include "common/sm90_ptx.cuh"
#include "dualgemm/dualgemm_tiling.hpp"

namespace overlap::cuda::dualgemm_sm90 {

using namespace overlap::cuda::sm90;
namespace gmma = cute::SM90::GMMA;

// A trace build (cuda/calibrate/dualgemm_trace.cu defines OVERLAP_DUALGEMM_TRACE 1 before it
// includes this): every CTA stamps the SM clock, in shared memory, when each of its first
// kTraceLoads loads is issued, when consumer warpgroup 0 starts to wait for its stage and when it
// sees it landed; the grid's first and last CTA copy their stamps, and the kernel's start and end
// (clock and global timer), to trace_buffer at the end. Shared memory, because a global store
// before an mbarrier arrive (a release) would hold the arrive until the store is performed.
// Every other build compiles the stamps to nothing: the kernels' SASS is the same.
#ifndef OVERLAP_DUALGEMM_TRACE
#define OVERLAP_DUALGEMM_TRACE 0
#endif
// Epilogue: index 2 t when tile t's k-loop is done (its last wgmma waited for), 2 t + 1 when its
// C is written or its store issued.
enum class Stamp { Issue = 0, Wait = 1, Landed = 2, Epilogue = 3 };
constexpr int kTraceLoads = 256, kTraceKinds = 4, kTraceCtas = 2;
// Per traced CTA in trace_buffer: kTraceKinds x kTraceLoads clock stamps (32 bits, as unsigned
// in a long long), then the start and end clock64 and global timer.
constexpr int kTraceWords = kTraceKinds * kTraceLoads + 4;
#if OVERLAP_DUALGEMM_TRACE
__device__ long long* trace_buffer = nullptr;  // [kTraceCtas][kTraceWords]
__device__ __forceinline__ unsigned* trace_stamps() {
  __shared__ unsigned stamps[kTraceKinds * kTraceLoads];
  return stamps;
}
__device__ __forceinline__ long long* trace_edges() {
  __shared__ long long edges[4];
  return edges;
}
__device__ __forceinline__ long long global_ns() {
  unsigned long long ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return static_cast<long long>(ns);
}
#endif
__device__ __forceinline__ void trace_stamp([[maybe_unused]] Stamp kind, [[maybe_unused]] int index) {
#if OVERLAP_DUALGEMM_TRACE
  if (index >= 0 && index < kTraceLoads) trace_stamps()[int(kind) * kTraceLoads + index] = unsigned(clock());
#endif
}
// Thread 0 at the kernel's start (edge 0) and end (edge 1); at the end, the first and last CTA
// write their trace out.
__device__ __forceinline__ void trace_edge([[maybe_unused]] int edge) {
#if OVERLAP_DUALGEMM_TRACE
  long long* edges = trace_edges();
  edges[edge] = clock64();
  edges[2 + edge] = global_ns();
  const int cta = blockIdx.x == 0 ? 0 : blockIdx.x == gridDim.x - 1 ? 1 : -1;
  if (edge == 0 || cta < 0 || trace_buffer == nullptr) return;
  long long* out = trace_buffer + cta * kTraceWords;
  const unsigned* stamps = trace_stamps();
  for (int i = 0; i < kTraceKinds * kTraceLoads; ++i) out[i] = stamps[i];
  for (int i = 0; i < 4; ++i) out[kTraceKinds * kTraceLoads + i] = edges[i];
#endif
}

// The wgmma atom for a warpgroup's 64 x N product of K-major operands in shared memory.
template <bool Fp8, int N>
struct Atom;
template <>
struct Atom<false, 256> : gmma::MMA_64x256x16_F32BF16BF16_SS<gmma::Major::K, gmma::Major::K> {};
template <>
struct Atom<false, 192> : gmma::MMA_64x192x16_F32BF16BF16_SS<gmma::Major::K, gmma::Major::K> {};
template <>
struct Atom<false, 128> : gmma::MMA_64x128x16_F32BF16BF16_SS<gmma::Major::K, gmma::Major::K> {};
template <>
struct Atom<false, 96> : gmma::MMA_64x96x16_F32BF16BF16_SS<gmma::Major::K, gmma::Major::K> {};
template <>
struct Atom<false, 64> : gmma::MMA_64x64x16_F32BF16BF16_SS<gmma::Major::K, gmma::Major::K> {};
template <>
struct Atom<false, 32> : gmma::MMA_64x32x16_F32BF16BF16_SS<gmma::Major::K, gmma::Major::K> {};
template <>
struct Atom<true, 256> : gmma::MMA_64x256x32_F32E4M3E4M3_SS_TN<> {};
template <>
struct Atom<true, 192> : gmma::MMA_64x192x32_F32E4M3E4M3_SS_TN<> {};
template <>
struct Atom<true, 128> : gmma::MMA_64x128x32_F32E4M3E4M3_SS_TN<> {};
template <>
struct Atom<true, 96> : gmma::MMA_64x96x32_F32E4M3E4M3_SS_TN<> {};
template <>
struct Atom<true, 64> : gmma::MMA_64x64x32_F32E4M3E4M3_SS_TN<> {};
template <>
struct Atom<true, 32> : gmma::MMA_64x32x32_F32E4M3E4M3_SS_TN<> {};

template <class A, int R, std::size_t... I>
__device__ __forceinline__ void mma_unpacked(std::uint64_t a, std::uint64_t b, float (&d)[R], gmma::ScaleOut s,
                                             std::index_sequence<I...>) {
  A::fma(a, b, d[I]..., s);
}
template <bool Fp8, int N>
__device__ __forceinline__ void mma(std::uint64_t a, std::uint64_t b, float (&d)[N / 2], bool accumulate) {
  mma_unpacked<Atom<Fp8, N>>(a, b, d, accumulate ? gmma::ScaleOut::One : gmma::ScaleOut::Zero,
                             std::make_index_sequence<N / 2>{});
}

struct Params {
  CUtensorMap a_map, b1_map, b2_map;  // {K, rows, L, 1}, box {128 bytes of K, a CTA's slice of the tile's rows}
  CUtensorMap c_map;                  // TMA store: {N, M, L, 1}, box {sub-tile cols, 64, 1, 1}
  __half* c;                          // [L, M, N]
  const float* a_scale;               // fp8: [L, M]; bf16: null
  const float* b1_scale;              // fp8: [L, N]
  const float* b2_scale;
  int M, N, K, L;
  int tiles_m, tiles_n;
};

template <bool Fp8, int BM, int BN, int Stages, bool WS, bool TmaStore, int CM, int CN, bool Eager, bool Pairs,
          int PrefetchK, int KAtoms, int Producers, bool EarlyScales, bool LeanEdges>
struct Kernel {
  static constexpr dualgemm::Tiling kTiling{"", "", BM, BN, Stages, WS, TmaStore, CM, CN, Eager, Pairs, PrefetchK, KAtoms,
                                            Producers, EarlyScales, LeanEdges};
  static constexpr int kCluster = CM * CN;
  static constexpr int kASlice = BM / CN, kBSlice = BN / CM;  // rows each CTA loads (and multicasts)
  static constexpr int kThreads = kTiling.threads();
  static constexpr int kConsumerThreads = 256;
  static constexpr int kWN = kTiling.warpgroup_n();         // a warpgroup's columns
  static constexpr int kAcc = kWN / 2;                       // fp32 registers per product
  // B rows per TMA box: a CTA's slice of the tile (clusters, 128-row tiles) or, for a 64-row
  // tile, one warpgroup's columns, so that each warpgroup's B1 and B2 rows lie side by side.
  static constexpr int kBBox = BM == 128 ? kBSlice : kWN;
  static constexpr int kKBytes = 128;                        // K bytes per row and swizzle atom
  static constexpr int kBK = KAtoms * (Fp8 ? 128 : 64);      // K elements per stage
  static constexpr int kKSteps = 4 * KAtoms;                 // wgmma k-steps per stage, 32 bytes each
  static constexpr int kABytes = KAtoms * BM * kKBytes, kBBytes = KAtoms * BN * kKBytes;
  static constexpr int kStageBytes = kABytes + 2 * kBBytes;
  // TMA-store staging: per warpgroup 64 rows x kWN columns, in sub-tiles of at most 64 columns
  // (128 bytes: the widest swizzled box row). 48 columns (96-byte rows) match no swizzle and
  // are staged unswizzled (two-way bank conflicts on the fragment writes).
  static constexpr int kSubCols = kWN < 64 ? kWN : 64;
  static constexpr bool kSubSwizzled = kSubCols == 32 || kSubCols == 64;  // 64- or 128-byte rows
  static constexpr int kSubBytes = 64 * kSubCols * 2;
  static constexpr int kCBytes = TmaStore ? BM * BN * 2 : 0;
  static constexpr int kBarrierBytes = 2 * Stages * 8;
  // 1 KiB of slack to align the ring to the 128-byte swizzle's 1024-byte atom.
  static constexpr int kSmemBytes = 1024 + Stages * kStageBytes + kCBytes + kBarrierBytes;
  static_assert(kKSteps * 32 == KAtoms * kKBytes);
  static_assert(KAtoms == 1 || (KAtoms == 2 && WS && BM == 128 && kCluster == 1 && PrefetchK == 0),
                "two-atom stages: warp-specialized 128-row tiles, no cluster, no prefetch");
  static_assert(kWN == 32 || kWN == 48 || kWN == 64 || kWN == 96 || kWN == 128);
  static_assert(!TmaStore || kWN % kSubCols == 0, "the TMA store's sub-tiles cover a warpgroup's columns");
  static_assert(!TmaStore || kSubCols == 32 || kSubCols == 48 || kSubCols == 64,
                "the TMA store's staging rows are 64 or 128 bytes (the swizzles it writes them in), or 96 unswizzled");
  static_assert(kCluster == 1 || WS, "clusters need the persistent producer warpgroup");
  static_assert(kASlice % 8 == 0 && kBSlice % 8 == 0, "multicast slices are whole 8-row swizzle atoms");
  static_assert(BM % CN == 0 && BN % CM == 0, "the slices cover the tiles");
  static_assert(kCluster <= 8, "a portable cluster (and a 16-bit multicast mask)");
  static_assert(BM == 128 || kCluster == 1, "64-row tiles lay B out per warpgroup, without multicast slices");
  static_assert(!Eager || (WS && Stages > 1), "an eager release needs the producer warpgroup and a group in flight");
  static_assert(!Pairs || (WS && Stages > 1), "paired loads need the producer warpgroup and two stages");
  static_assert(Producers == 1 || (WS && !Pairs && Producers >= 2 && Producers <= 4 && Stages >= Producers),
                "several producers: warps of the producer warpgroup, one k-block each in turn");
  static_assert(PrefetchK == 0 || (WS && CM * CN == 1 && BM == 128),
                "L2 prefetch: warp-specialized 128-row tiles, no cluster");
  static_assert(!LeanEdges || (WS && CM * CN == 1 && Producers == 1 && !Pairs && PrefetchK == 0),
                "lean edges: one producer thread of a warp-specialized kernel without a cluster fills the ring");
};

// Byte offset within a box whose rows are `RowBytes` (64 or 128) long, swizzled as TMA's
// 64/128-byte modes lay it out: the 16-byte chunk index XOR bits 7 and up of the linear
// offset, modulo the chunks in a row (CuTe's Swizzle<2,4,3> / Swizzle<3,4,3>).
template <int RowBytes>
__device__ __forceinline__ int swizzled(int row, int byte_in_row) {
  const int chunk = (byte_in_row >> 4) ^ (((row * RowBytes) >> 7) & (RowBytes / 16 - 1));
  return row * RowBytes + (chunk << 4) + (byte_in_row & 15);
}

// silu(x1) x2 with one SFU operation an element, where exp and a reciprocal took two (the
// epilogue's SFU time, ~0.45 us of a 128 x 48 tile's 0.7: tools/device/experiment.sh
// dualgemm_trace): sigmoid(x) = (1 + tanh(x / 2)) / 2 by tanh.approx, whose error of 2^-11
// relative to tanh is absolute in the sigmoid, so silu's relative error grows in the negative
// tail (1e-4 at x = -6), where the output is small.
__device__ __forceinline__ float silu_times(float x1, float x2) {
  float t;
  asm("tanh.approx.f32 %0, %1;" : "=f"(t) : "f"(0.5f * x1));
  return x1 * fmaf(0.5f, t, 0.5f) * x2;
}

template <bool Fp8, int BM, int BN, int Stages, bool WS, bool TmaStore, int CM, int CN, bool Eager, bool Pairs,
          int PrefetchK, int KAtoms, int Producers, bool EarlyScales, bool LeanEdges>
__global__ void __launch_bounds__(
    Kernel<Fp8, BM, BN, Stages, WS, TmaStore, CM, CN, Eager, Pairs, PrefetchK, KAtoms, Producers, EarlyScales, LeanEdges>::kThreads, 1)
    dualgemm_kernel(const __grid_constant__ Params p) {
  using Kn = Kernel<Fp8, BM, BN, Stages, WS, TmaStore, CM, CN, Eager, Pairs, PrefetchK, KAtoms, Producers, EarlyScales, LeanEdges>;
  constexpr int kWN = Kn::kWN, kAcc = Kn::kAcc;
  constexpr bool kClustered = Kn::kCluster > 1;
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = aligned_smem(smem_raw);
  unsigned char* ring = smem;
  unsigned char* c_stage = smem + Stages * Kn::kStageBytes;
  auto* full = reinterpret_cast<std::uint64_t*>(c_stage + Kn::kCBytes);
  std::uint64_t* empty = full + Stages;

  const int tid = threadIdx.x;
  if (tid == 0) trace_edge(0);
  const int k_blocks = p.K / Kn::kBK;
  // This CTA's place in its cluster: (cm, cn), rank cm + CM * cn.
  const unsigned rank = kClustered ? cluster_ctarank() : 0;
  const int cm = int(rank) % CM, cn = int(rank) / CM;
  // Tiles are handed out per cluster: cluster tile (mc, nc, l) covers row tiles mc*CM .. +CM-1
  // and column tiles nc*CN .. +CN-1 (rows or columns past the problem load zeros, store nothing).
  const int ctiles_m = (p.tiles_m + CM - 1) / CM, ctiles_n = (p.tiles_n + CN - 1) / CN;
  const int cluster_tiles = p.L * ctiles_m * ctiles_n;
  const int cluster_id = int(blockIdx.x) / Kn::kCluster, clusters = int(gridDim.x) / Kn::kCluster;
  // Cluster tile ct: m fastest, so the CTAs resident at once share each B tile (the large
  // operand at the small M this kernel is for) while it is in L2.
  auto tile_coords = [&](int ct, int& m0, int& n0, int& l) {
    m0 = ((ct % ctiles_m) * CM + cm) * BM;
    n0 = ((ct / ctiles_m % ctiles_n) * CN + cn) * BN;
    l = ct / (ctiles_m * ctiles_n);
  };
  // Load number `it` of this CTA (k-block kb of its tile) into its stage: its slices of the
  // shared tiles, multicast to the CTAs that share them.
  auto issue_load = [&](int it, int m0, int n0, int l, int kb) {
    trace_stamp(Stamp::Issue, it);
    const int s = it % Stages;
    unsigned char* st = ring + s * Kn::kStageBytes;
    mbar_arrive_expect_tx(&full[s], Kn::kStageBytes);
    const int k0 = kb * Kn::kBK;
    if constexpr (KAtoms > 1) {
      // A as [atom][BM rows][128 B]; B1 and B2 each as [row group][atom][8 rows][128 B], so that
      // an atom's B1 rows then B2 rows are 8-row groups a constant 128 x KAtoms x 8 bytes apart,
      // as one 64 x 2WN wgmma reads them (make the maps: dualgemm_launch.cuh).
      tma_load_4d(st, &p.a_map, &full[s], 0, m0, KAtoms * kb, l);
      tma_load_5d(st + Kn::kABytes, &p.b1_map, &full[s], 0, 0, KAtoms * kb, n0 / 8, l);
      tma_load_5d(st + Kn::kABytes + Kn::kBBytes, &p.b2_map, &full[s], 0, 0, KAtoms * kb, n0 / 8, l);
      return;
    }
    if constexpr (CN == 1) {
      tma_load_4d(st, &p.a_map, &full[s], k0, m0, l, 0);
    } else {
      std::uint16_t row = 0;  // the CTAs (cm, *)
      for (int j = 0; j < CN; ++j) row |= std::uint16_t(1u << (cm + CM * j));
      tma_load_4d_multicast(st + cn * Kn::kASlice * Kn::kKBytes, &p.a_map, &full[s], k0, m0 + cn * Kn::kASlice, l,
                            0, row);
    }
    // B of a stage: per warpgroup's columns (kWN rows), its B1 rows then its B2 rows.
    unsigned char* b = st + Kn::kABytes;
    if constexpr (BM == 64) {
#pragma unroll
      for (int g = 0; g < 2; ++g) {
        tma_load_4d(b + 2 * g * kWN * Kn::kKBytes, &p.b1_map, &full[s], k0, n0 + g * kWN, l, 0);
        tma_load_4d(b + (2 * g + 1) * kWN * Kn::kKBytes, &p.b2_map, &full[s], k0, n0 + g * kWN, l, 0);
      }
    } else if constexpr (CM == 1) {
      tma_load_4d(b, &p.b1_map, &full[s], k0, n0, l, 0);
      tma_load_4d(b + Kn::kBBytes, &p.b2_map, &full[s], k0, n0, l, 0);
      if constexpr (PrefetchK > 0) {
        // The B boxes PrefetchK k-blocks on; at the tile's first k-block, all of those past the
        // ring's first fill (which loads k-blocks 0 .. Stages - 1 at once).
        for (int j = kb == 0 ? Stages : PrefetchK; j <= PrefetchK; ++j) {
          if ((kb + j) * Kn::kBK >= p.K) break;
          tma_prefetch_l2_4d(&p.b1_map, (kb + j) * Kn::kBK, n0, l, 0);
          tma_prefetch_l2_4d(&p.b2_map, (kb + j) * Kn::kBK, n0, l, 0);
        }
      }
    } else {
      unsigned char* b1 = b;
      unsigned char* b2 = b + Kn::kBBytes;
      std::uint16_t column = 0;  // the CTAs (*, cn)
      for (int i = 0; i < CM; ++i) column |= std::uint16_t(1u << (i + CM * cn));
      const int off = cm * Kn::kBSlice;
      tma_load_4d_multicast(b1 + off * Kn::kKBytes, &p.b1_map, &full[s], k0, n0 + off, l, 0, column);
      tma_load_4d_multicast(b2 + off * Kn::kKBytes, &p.b2_map, &full[s], k0, n0 + off, l, 0, column);
    }
  };
  // A consumer warpgroup is done with stage s: tell every producer that writes into it.
  auto release = [&](int s) {
    if constexpr (kClustered) {
      for (int j = 0; j < CN; ++j) mbar_arrive_cluster(&empty[s], unsigned(cm + CM * j));
      for (int i = 0; i < CM; ++i)
        if (i != cm) mbar_arrive_cluster(&empty[s], unsigned(i + CM * cn));
    } else {
      mbar_arrive(&empty[s]);
    }
  };

  auto init_barriers = [&] {
    for (int s = 0; s < Stages; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], 2 * (CM + CN - 1));  // each consumer warpgroup of every CTA written to
    }
    mbar_init_fence();
  };
  // Lean edges: the producer thread initialises the ring and fills it before the CTA-wide
  // barrier, so the first loads leave as early as they can; the loop below goes on from there.
  const int prefilled = LeanEdges && cluster_id < cluster_tiles ? (k_blocks < Stages ? k_blocks : Stages) : 0;
  if (LeanEdges ? tid == Kn::kConsumerThreads : tid == 0) init_barriers();
  if (LeanEdges && tid == Kn::kConsumerThreads) {
    int m0, n0, l;
    tile_coords(cluster_id, m0, n0, l);
    for (int kb = 0; kb < prefilled; ++kb) issue_load(kb, m0, n0, l, kb);
  }
  if (tid == Kn::kConsumerThreads - 1) {  // not the thread that initialises the barriers
    tma_prefetch_map(&p.a_map);
    tma_prefetch_map(&p.b1_map);
    tma_prefetch_map(&p.b2_map);
    if constexpr (TmaStore) tma_prefetch_map(&p.c_map);
  }
  // Peers multicast into this CTA's ring and arrive on its barriers: all initialised first.
  if constexpr (kClustered) cluster_sync();
  else __syncthreads();

  if (WS && tid >= Kn::kConsumerThreads) {
    // ---- producer warpgroup ----
    setmaxnreg_dec<dualgemm::Tiling::kProducerRegs>();
    // Lane 0 of producer warp w issues loads w, w + Producers, w + 2 Producers, ... of the CTA.
    const int ptid = tid - Kn::kConsumerThreads, pw = ptid / 32;
    if (ptid % 32 == 0 && pw < Producers) {
      int first = 0;  // the CTA's load number of the tile's k-block 0
      for (int ct = cluster_id; ct < cluster_tiles; ct += clusters) {
        int m0, n0, l;
        tile_coords(ct, m0, n0, l);
        const int start = first == 0 ? prefilled : 0;  // lean edges: the first fill is out
        for (int kb = Producers == 1 ? start : ((pw - first) % Producers + Producers) % Producers; kb < k_blocks;
             kb += Producers) {
          const int it = first + kb;
          // Paired: the next stage must be free too (stages free in order), so that k-blocks kb
          // and kb + 1 are loaded back to back.
          if (Pairs && kb % 2 == 0 && kb + 1 < k_blocks)
            mbar_wait(&empty[(it + 1) % Stages], (((it + 1) / Stages) & 1) ^ 1);
          mbar_wait(&empty[it % Stages], ((it / Stages) & 1) ^ 1);
          issue_load(it, m0, n0, l, kb);
        }
        first += k_blocks;
      }
    }
  } else {
    // ---- consumer warpgroups ----
    if constexpr (WS) setmaxnreg_inc<Kn::kTiling.max_regs_per_thread()>();
    const int wg = tid / 128, t128 = tid % 128;
    const int warp = t128 / 32, lane = t128 % 32;
    // This warpgroup's part of the tile.
    const int wg_row = BM == 128 ? 64 * wg : 0;
    const int wg_col = BM == 128 ? 0 : kWN * wg;
    // Which k-block's stage is released after each wgmma wait: with one stage in flight, the
    // previous one; with a single stage, this one.
    constexpr int kInFlight = Stages > 1 ? 1 : 0;
    // Fragment of a 64 x N wgmma accumulator: register 4j + 2h + e holds row
    // 16*warp + lane/4 + 8h, column 8j + 2*(lane%4) + e.
    const int row0 = 16 * warp + lane / 4;
    const int col0 = 2 * (lane % 4);
    // This thread's scales (fp8; 1 for bf16): its two rows' of A, its columns' of B1 and B2.
    // All are loaded before the first store: the compiler cannot move a load past a store to C
    // (it might alias), so loading each column pair's just before its stores exposed a global
    // load's latency per pair (Nsight Compute: FMULs waiting on them held 13% of the stall
    // samples at 128x128 fp8).
    struct Scales {
      float a[2], b1[kWN / 4], b2[kWN / 4];
    };
    // A tile inside the problem (every tile but the last row or column of a ragged one) loads
    // its scales without per-element bounds, the columns' as pairs (n is even, N too; the scale
    // vectors 8-byte aligned, as any allocation is): a few
    // loads off one base pointer, not one indexed and predicated load per element, which held
    // the consumers ~0.5 us before their first k-block (tools/device/experiment.sh dualgemm_trace).
    auto load_row_scales = [&](Scales& sc, int m0, int l) {
      const int m = m0 + wg_row + row0;
      const float* a_scale = p.a_scale + std::size_t(l) * p.M;
      const bool inside = m0 + wg_row + 64 <= p.M;
#pragma unroll
      for (int h = 0; h < 2; ++h)
        sc.a[h] = !Fp8 ? 1.0f : inside || m + 8 * h < p.M ? a_scale[m + 8 * h] : 0.0f;
    };
    auto load_column_scales = [&](Scales& sc, int n0, int l) {
      if constexpr (!Fp8) {
#pragma unroll
        for (int i = 0; i < kWN / 4; ++i) sc.b1[i] = sc.b2[i] = 1.0f;
        return;
      }
      const int n = n0 + wg_col + col0;  // this thread's first column; pair j is n + 8 j, n + 8 j + 1
      const std::size_t row = std::size_t(l) * p.N;
      const bool pairs_aligned = ((reinterpret_cast<std::uintptr_t>(p.b1_scale) | reinterpret_cast<std::uintptr_t>(p.b2_scale)) & 7) == 0;
      if (pairs_aligned && n0 + wg_col + kWN <= p.N) {
        const float2* b1 = reinterpret_cast<const float2*>(p.b1_scale + row + n);
        const float2* b2 = reinterpret_cast<const float2*>(p.b2_scale + row + n);
#pragma unroll
        for (int j = 0; j < kWN / 8; ++j) {
          const float2 v1 = b1[4 * j], v2 = b2[4 * j];  // 8 columns on: 4 float2
          sc.b1[2 * j] = v1.x;
          sc.b1[2 * j + 1] = v1.y;
          sc.b2[2 * j] = v2.x;
          sc.b2[2 * j + 1] = v2.y;
        }
        return;
      }
#pragma unroll
      for (int i = 0; i < kWN / 4; ++i) {
        const int c = n + 8 * (i / 2) + i % 2;
        const bool in = c < p.N;
        sc.b1[i] = in ? p.b1_scale[row + c] : 0.0f;
        sc.b2[i] = in ? p.b2_scale[row + c] : 0.0f;
      }
    };
    int it = 0;
    for (int ct = cluster_id; ct < cluster_tiles; ct += WS ? clusters : cluster_tiles) {
      int m0, n0, l;
      tile_coords(ct, m0, n0, l);
      if (!WS && tid == 0)
        for (int j = 0; j < Stages && j < k_blocks; ++j) issue_load(it + j, m0, n0, l, j);
      Scales sc;  // EarlyScales: loaded here, in flight through the k-loop
      if constexpr (EarlyScales) {
        load_row_scales(sc, m0, l);
        load_column_scales(sc, n0, l);
      }

      // Both products: columns [0, kWN) of acc are A B1^T, [kWN, 2 kWN) A B2^T, so register i of
      // the first is register i + kAcc of the second. Overwritten by the first k-step (scale-d 0).
      float acc[2 * kAcc] = {};
      bool freed = false;  // eager: the previous k-block's stage is already free
      for (int kb = 0; kb < k_blocks; ++kb) {
        const int cur = it + kb, s = cur % Stages;
        if constexpr (Eager) {
          // The warpgroup agrees (one barrier) whether any thread still sees this stage loading;
          // wgmma_wait must be reached by all of its threads or none.
          freed = kb > 0 && named_sync_or(1 + wg, 128, !mbar_test(&full[s], (cur / Stages) & 1));
          if (freed) {
            wgmma_wait<0>();
            fence_regs(acc);
            if (t128 == 0) release((cur - 1) % Stages);
          }
        }
        if (tid == 0) trace_stamp(Stamp::Wait, cur);
        mbar_wait(&full[s], (cur / Stages) & 1);
        if (tid == 0) trace_stamp(Stamp::Landed, cur);
        const unsigned char* st = ring + s * Kn::kStageBytes;
        wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < Kn::kKSteps; ++ks) {
          // Atom ks / 4 of the stage; 32 bytes along K per step within it: +2 in the
          // descriptor's 16-byte address units.
          const int atom = ks / 4, step = ks % 4;
          const std::uint64_t da = sw128_desc(st + (atom * BM + wg_row) * Kn::kKBytes);
          const std::uint64_t db =
              KAtoms == 1 ? sw128_desc(st + Kn::kABytes + 2 * wg_col * Kn::kKBytes)
                          : sw128_desc(st + Kn::kABytes + atom * 8 * Kn::kKBytes, 16, KAtoms * 8 * Kn::kKBytes);
          const bool accumulate = kb > 0 || ks > 0;
          mma<Fp8, 2 * kWN>(da + 2 * step, db + 2 * step, acc, accumulate);
        }
        wgmma_commit();
        wgmma_wait<kInFlight>();
        fence_regs(acc);
        const int done = kb - kInFlight;  // this k-block's stage is free again
        if (done >= 0 && !freed) {
          const int r = it + done;
          if (t128 == 0) release(r % Stages);
          if (!WS && tid == 0 && done + Stages < k_blocks) {
            mbar_wait(&empty[r % Stages], (r / Stages) & 1);
            issue_load(r + Stages, m0, n0, l, done + Stages);
          }
        }
      }
      wgmma_wait<0>();
      fence_regs(acc);
      if (tid == 0) trace_stamp(Stamp::Epilogue, 2 * (it / k_blocks));
      if (kInFlight && k_blocks > 0) {
        const int r = it + k_blocks - 1;
        if (t128 == 0) release(r % Stages);
      }
      it += k_blocks;

      // ---- epilogue ----
      if constexpr (!EarlyScales) load_row_scales(sc, m0, l);
      unsigned char* c_wg = c_stage + wg * 64 * kWN * 2;
      if constexpr (TmaStore) {
        // The previous tile's store must have read this warpgroup's buffer.
        if (t128 == 0) bulk_wait_read_all();
        named_sync(1 + wg, 128);
      }
      if constexpr (!EarlyScales) load_column_scales(sc, n0, l);
      const float* sa = sc.a;
      const float* s1 = sc.b1;
      const float* s2 = sc.b2;
#pragma unroll
      for (int j = 0; j < kWN / 8; ++j) {
        const int col = 8 * j + col0;  // within the warpgroup's part
        const int n = n0 + wg_col + col;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int i = 4 * j + 2 * h;
          const float* x1 = acc + i;  // A B1^T at this fragment position
          const float* x2 = acc + kAcc + i;
          const float* c1 = s1 + 2 * j;  // columns n, n + 1
          const float* c2 = s2 + 2 * j;
          const __half2 v = __floats2half2_rn(silu_times(x1[0] * sa[h] * c1[0], x2[0] * sa[h] * c2[0]),
                                              silu_times(x1[1] * sa[h] * c1[1], x2[1] * sa[h] * c2[1]));
          const int row = row0 + 8 * h;  // within the warpgroup's part
          if constexpr (TmaStore) {
            const int sub = col / Kn::kSubCols, c_in = col % Kn::kSubCols;
            const int at = Kn::kSubSwizzled ? swizzled<Kn::kSubCols * 2>(row, c_in * 2) : row * Kn::kSubCols * 2 + c_in * 2;
            *reinterpret_cast<__half2*>(c_wg + sub * Kn::kSubBytes + at) = v;
          } else {
            const int m = m0 + wg_row + row;
            if (m < p.M && n < p.N)  // N is even (can_implement), so n + 1 < N as well
              *reinterpret_cast<__half2*>(p.c + (std::size_t(l) * p.M + m) * p.N + n) = v;
          }
        }
      }
      if constexpr (TmaStore) {
        fence_proxy_async();  // the generic-proxy writes above, before the TMA unit reads them
        named_sync(1 + wg, 128);
        if (t128 == 0) {
#pragma unroll
          for (int sub = 0; sub < kWN / Kn::kSubCols; ++sub)
            tma_store_4d(&p.c_map, c_wg + sub * Kn::kSubBytes, n0 + wg_col + sub * Kn::kSubCols, m0 + wg_row, l, 0);
          bulk_commit();
        }
      }
      if (tid == 0) trace_stamp(Stamp::Epilogue, 2 * (it / k_blocks) - 1);
    }
    if constexpr (TmaStore) {
      // Lean edges: only until the store has read shared memory (CUTLASS's order); the grid's
      // completion covers its writes to C.
      if (t128 == 0) {
        if constexpr (LeanEdges) bulk_wait_read_all();
        else bulk_wait_all();
      }
    }
  }
  // No CTA leaves while a peer may still arrive on its barriers or multicast into it.
  if constexpr (kClustered) cluster_sync();
  if (tid == 0) trace_edge(1);
}

}  // namespace overlap::cuda::dualgemm_sm90
