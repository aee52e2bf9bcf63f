// The scan kernels after a library GEMM: semi_fused's scan + gate (writes y), three_kernel's
// scan (writes h in fp32) and its elementwise gate kernel. The projection arrives in HBM as
// bf16 rows (u | a_pre | z); each scan CTA loads its tile's chunk whole with 16-byte loads
// (every load independent: no dependent chain through global memory), forms (a, b, silu z) in
// shared memory, and runs scan_tile.
#include <cuda_runtime.h>

#include "linrnn/linrnn_launch.hpp"
#include "linrnn/linrnn_scan_tile.cuh"
#include "linrnn/linrnn_tiling.hpp"

namespace overlap::cuda::linrnn_launch {
namespace {

using namespace linrnn_kernel;

constexpr linrnn::ScanTiling kTiling = linrnn::scan_tiling();
constexpr int kChunk = kTiling.chunk_t;
static_assert(kTiling.channels_per_cta == kChannels && kTiling.threads == kScanThreads &&
                  kTiling.segments == kSegments,
              "scan kernel and linrnn_tiling.hpp disagree");

struct ScanSmemLayout {
  static constexpr int kArray = kChunk * kRowPitch * 4;
  static constexpr int kBytes = 3 * kArray + (2 * kSegments + 1) * kChannels * 4 + 16;
};

__device__ __forceinline__ ScanSmem carve(unsigned char* smem, int chunk_t) {
  float* f = reinterpret_cast<float*>(smem);
  const int array = chunk_t * kRowPitch;
  return {f, f + array, f + 2 * array, f + 3 * array, f + 3 * array + kSegments * kChannels,
          f + 3 * array + 2 * kSegments * kChannels};
}

__device__ __forceinline__ void unpack8(const uint4& v, float (&f)[8]) {
  const std::uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 p = ptx::unpack_bf16(w[i]);
    f[2 * i] = p.x;
    f[2 * i + 1] = p.y;
  }
}

template <bool WithGate>
// Three CTAs per SM (80 registers, 3 x 55 KB of shared memory): while one CTA waits on its
// look-back, the others' chunk loads are in flight.
__global__ void __launch_bounds__(kScanThreads, 3) scan_kernel(const bf16* __restrict__ proj, Lookback lb, ScanOut out,
                                                            int B, int channel_blocks, int num_chunks) {
  extern __shared__ __align__(16) unsigned char smem[];
  const ScanSmem s = carve(smem, kChunk);
  unsigned* slot = reinterpret_cast<unsigned*>(smem + ScanSmemLayout::kBytes - 16);
  const Tile tile = next_tile(lb, B, channel_blocks, slot);  // sass:scan.tile {}
  const int dv = out.dv;
  const long long ld = 3LL * dv;
  // Load: (timestep, group of 8 channels) units, 16 bytes of each of u, a_pre (and z). Every
  // load of the thread is issued before any math, so its units' DRAM round trips overlap.
  // sass:scan.fetch {
  constexpr int kUnits = kChunk * (kChannels / 8) / kScanThreads;
  static_assert(kUnits * kScanThreads == kChunk * (kChannels / 8), "units split evenly over the threads");
  constexpr int kInputs = WithGate ? 3 : 2;
  uint4 raw[kUnits][kInputs];
  bool in[kUnits];
#pragma unroll
  for (int j = 0; j < kUnits; ++j) {
    const int unit = threadIdx.x + j * kScanThreads;
    const int r = unit / (kChannels / 8), g8 = unit % (kChannels / 8);
    const int t = tile.chunk * kChunk + r, ch = tile.cb * kChannels + g8 * 8;
    in[j] = t < out.T && ch < dv;
    if (in[j]) {
      const bf16* row = proj + (static_cast<long long>(tile.b) * out.T + t) * ld + ch;
#pragma unroll
      for (int k = 0; k < kInputs; ++k) raw[j][k] = __ldg(reinterpret_cast<const uint4*>(row + k * dv));
    }
  }
  // } sass:scan.fetch
  // (a, b, g) per element: one exponential and one approximate reciprocal for the gate, one
  // tanh for the SiLU (gate_fast, silu_fast: the math chunk_fused's scan does).
  // sass:scan.gate {
#pragma unroll
  for (int j = 0; j < kUnits; ++j) {
    const int unit = threadIdx.x + j * kScanThreads;
    const int r = unit / (kChannels / 8), g8 = unit % (kChannels / 8);
    float a[8], b[8], g[8];
    if (in[j]) {
      float u[8], ap[8], z[8];
      unpack8(raw[j][0], u);
      unpack8(raw[j][1], ap);
      if constexpr (WithGate) unpack8(raw[j][2], z);
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const Gate gt = gate_fast(ap[i]);
        a[i] = gt.a;
        b[i] = gt.one_minus_a * u[i];
        g[i] = WithGate ? silu_fast(z[i]) : 0.0f;
      }
    } else {
#pragma unroll
      for (int i = 0; i < 8; ++i) a[i] = 1.0f, b[i] = 0.0f, g[i] = 0.0f;  // identity past T
    }
    float* pa = s.a + r * kRowPitch + g8 * 8;
    float* pb = s.b + r * kRowPitch + g8 * 8;
    reinterpret_cast<float4*>(pa)[0] = make_float4(a[0], a[1], a[2], a[3]);
    reinterpret_cast<float4*>(pa)[1] = make_float4(a[4], a[5], a[6], a[7]);
    reinterpret_cast<float4*>(pb)[0] = make_float4(b[0], b[1], b[2], b[3]);
    reinterpret_cast<float4*>(pb)[1] = make_float4(b[4], b[5], b[6], b[7]);
    if (WithGate) {
      float* pg = s.g + r * kRowPitch + g8 * 8;
      reinterpret_cast<float4*>(pg)[0] = make_float4(g[0], g[1], g[2], g[3]);
      reinterpret_cast<float4*>(pg)[1] = make_float4(g[4], g[5], g[6], g[7]);
    }
  }
  __syncthreads();
  // } sass:scan.gate
  scan_tile<kChunk>(s, lb, tile, B * channel_blocks, num_chunks, out);
  finish_tile(lb, tile, num_chunks * B * channel_blocks);  // sass:scan.finish {}
}

// y = h * silu(z), 8 channels per thread (16-byte loads and stores).
__global__ void __launch_bounds__(256) gate_kernel(const float* __restrict__ h, const bf16* __restrict__ proj,
                                                   bf16* __restrict__ y, long long rows, int dv) {
  const long long groups = rows * (dv / 8);
  for (long long i = blockIdx.x * 256LL + threadIdx.x; i < groups; i += 256LL * gridDim.x) {
    const long long row = i / (dv / 8);
    const int ch = static_cast<int>(i % (dv / 8)) * 8;
    const float4 h0 = __ldg(reinterpret_cast<const float4*>(h + row * dv + ch));
    const float4 h1 = __ldg(reinterpret_cast<const float4*>(h + row * dv + ch) + 1);
    float z[8];
    unpack8(__ldg(reinterpret_cast<const uint4*>(proj + row * 3 * dv + 2 * dv + ch)), z);
    const float hv[8] = {h0.x, h0.y, h0.z, h0.w, h1.x, h1.y, h1.z, h1.w};
    std::uint32_t o[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) o[k] = ptx::pack_bf16(hv[2 * k] * silu(z[2 * k]), hv[2 * k + 1] * silu(z[2 * k + 1]));
    *reinterpret_cast<uint4*>(y + row * dv + ch) = make_uint4(o[0], o[1], o[2], o[3]);
  }
}

int channel_blocks_of(const Problem& p) { return (p.dv + kChannels - 1) / kChannels; }
int chunks_of(const Problem& p) { return (p.T + kChunk - 1) / kChunk; }

template <bool WithGate>
cudaError_t launch_scan(const Problem& p, const void* proj, float* h, void* lookback, cudaStream_t stream) {
  const int cbs = channel_blocks_of(p), chunks = chunks_of(p);
  const std::size_t tiles = static_cast<std::size_t>(chunks) * p.B * cbs;
  auto kernel = scan_kernel<WithGate>;
  constexpr int smem = ScanSmemLayout::kBytes;
  if (cudaError_t e = allow_tile_smem(kernel, smem); e != cudaSuccess) return e;
  ScanOut out{};
  out.y = WithGate ? static_cast<bf16*>(p.y) : nullptr;
  out.h = WithGate ? nullptr : h;
  out.h0 = p.h0;
  out.hT = p.hT;
  out.T = p.T;
  out.dv = p.dv;
  kernel<<<static_cast<unsigned>(tiles), kScanThreads, smem, stream>>>(static_cast<const bf16*>(proj),
                                                                       lookback_view(lookback, tiles), out, p.B, cbs,
                                                                       chunks);
  return cudaGetLastError();
}

}  // namespace

std::size_t scan_lookback_bytes(const Problem& p) {
  return lookback_layout(static_cast<std::size_t>(chunks_of(p)) * p.B * channel_blocks_of(p)).bytes;
}

int scan_gate(const Problem& p, const void* proj, void* lookback, CUstream_st* stream) {
  return launch_scan<true>(p, proj, nullptr, lookback, stream);
}

int scan_only(const Problem& p, const void* proj, float* h, void* lookback, CUstream_st* stream) {
  return launch_scan<false>(p, proj, h, lookback, stream);
}

int gate_only(const Problem& p, const void* proj, const float* h, CUstream_st* stream) {
  const long long rows = static_cast<long long>(p.B) * p.T;
  const long long groups = rows * (p.dv / 8);
  const long long blocks = (groups + 255) / 256;
  gate_kernel<<<static_cast<unsigned>(blocks < 132LL * 16 ? blocks : 132LL * 16), 256, 0, stream>>>(
      h, static_cast<const bf16*>(proj), static_cast<bf16*>(p.y), rows, p.dv);
  return cudaGetLastError();
}

}  // namespace overlap::cuda::linrnn_launch
