// gla_backward (the gradients of gla, issue 18): the `materialized` variant, our three passes
// (cuda/gla/gla_backward_common.cuh):
//   1. the forward's state pass, pipelined (gla_pipelined_states_kernel): every S_n in bf16;
//   2. state grads (gla_state_grad_kernel.cuh): per (b, h, 64 V columns), chunks walked
//      backwards, dS carried in registers, dS_n and R_n written;
//   3. chunk grads (gla_chunk_grad_kernel.cuh): one CTA per (b, h, chunk) forms dq, dk, dv, dg.
// Work per chunk is counted per warp from the kernels' source (gla_warp_work.hpp), as the
// forward's mma.sync kernels are; shared-memory traffic in 128-byte wavefronts where lanes hit
// few rows (a 16-bit load that touches two rows costs a wavefront, not 64 bytes).
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "sim/gemm_model.hpp"
#include "sim/models/gla_model.hpp"
#include "sim/models/gla_warp_work.hpp"
#include "sim/occupancy.hpp"
#include "sim/tile_loop.hpp"
#include "sim/variants.hpp"

namespace overlap::sim {
namespace {

using namespace gla_work;

constexpr int kChunk = 64, kSub = 16, kStateBlockV = 64;
constexpr double kWavefront = 128;  // bytes of one shared-memory wavefront

// Registers per thread of the compiled kernels (ptxas -v, sm_90a, CUDA 13.0), by (K, V) and K.
int chunk_grad_regs(std::int64_t K, std::int64_t V) {
  if (K == 128) return V == 128 ? 255 : 241;
  return V == 128 ? 220 : 148;
}
int state_grad_regs(std::int64_t K) { return K == 128 ? 174 : 128; }

GlaKernelShape dims(const ShapeArgs& s) {
  return {shape_size(s, "gla_backward", "B"), shape_size(s, "gla_backward", "T"), shape_size(s, "gla_backward", "H"),
          shape_size(s, "gla_backward", "K"), shape_size(s, "gla_backward", "V"), shape_value(s, "h0", 0) != 0,
          shape_value(s, "hT", 0) != 0};
}

CopyEngine engine_on(const HardwareProfile& hw) {
  return hw.copy_engine == CopyEngine::Tma ? CopyEngine::CpAsync : hw.copy_engine;
}

// One backward chunk in pass 2 for a CTA of 4 warps owning K/4 rows of dS each (K/64 m-tiles)
// and 64 V columns: {work on the chunk's own data, the dS update carried from the last chunk}.
std::pair<std::vector<Step>, std::vector<Step>> state_grad_phases(const HardwareProfile& hw, double K) {
  const int warps = 4;
  const double C = kChunk, mt = K / 64, nv = kStateBlockV / 16.0;
  std::vector<Step> compute, carried;
  {  // cumsum of the gates in place: C x K fp32 read and written, one add each.
    std::vector<WarpWork> w(warps);
    for (auto& x : w) x.smem = 2.0 * C * K * 4 / warps, x.alu = 2.0 * C * K / 32 / warps;
    add_phase(compute, w, true, TensorPath::WarpMma, "gate cumsum");
  }
  {  // dS_n out (bf16 pairs) and R_n: per thread mt x 8 x 2 pairs of S_n (LDS.32) and 2 FMA;
     // then s q 2^b: C*K/2 pairs without anchor, each stored (STS.32).
    std::vector<WarpWork> w(warps);
    for (auto& x : w) {
      x.smem += mt * 8 * 2 * kLds32Bytes;
      x.alu += mt * 8 * 2 * 4 + mt * 2 * 2;  // pack, unpack, 2 FMA; 2 shuffles a row half
      x.pair(C * K / 2 / 32 / warps, false);
      x.smem += C * K / 2 / 32 / warps * kLds32Bytes;
    }
    add_phase(compute, w, true, TensorPath::WarpMma, "dS_n out, s q 2^b");
  }
  {  // dS <- 2^{b_last} dS + (s q 2^b)^T do: per 16 rows of t and m-tile one ldmatrix of q 2^b,
     // nv of do, 2 nv mma.
    std::vector<WarpWork> w(warps);
    for (auto& x : w) {
      x.mufu += 2 * mt;
      x.alu += mt * nv * 2 * 4;
      x.smem += C / 16 * mt * (1 + nv) * kLdsm4Bytes;
      x.mma += C / 16 * mt * 2 * nv;
    }
    add_phase(carried, w, true, TensorPath::WarpMma, "dS update");
  }
  carried.push_back(delay(3 * hw.sync_latency_cycles * hw.cycle_ns(), "CTA barriers"));
  return {compute, carried};
}

KernelSpec state_grad_kernel(const HardwareProfile& hw, const GlaKernelShape& d) {
  const double C = kChunk, K = double(d.K), bv = kStateBlockV, v_blocks = double(d.V / kStateBlockV);
  const CopyEngine engine = engine_on(hw);
  KernelSpec k;
  k.name = "gla_backward_state_grads";
  k.ctas = d.B * d.H * (d.V / kStateBlockV);
  k.threads_per_cta = 128;
  k.regs_per_cta = regs_for_warps(4, state_grad_regs(d.K));
  // Two stages of q, do, g, S_n, the decayed queries and the scan totals (gla_state_grad_kernel.cuh).
  const double stage = C * (K + 8) * 2 + C * (bv + 8) * 2 + C * (K + 4) * 4 + K * (bv + 8) * 2;
  k.smem_bytes = std::int64_t(2 * stage + C * (K + 8) * 2 + 128 * 4);
  TileLoop loop;
  loop.tiles = int((d.T + kChunk - 1) / kChunk);
  // q and g of a head are read by its V/64 CTAs, which run concurrently: one HBM read.
  loop.loads = {load(C * K * 2, 1.0 / v_blocks, engine, "load q"), load(C * bv * 2, 1.0, engine, "load do"),
                load(C * K * 4, 1.0 / v_blocks, engine, "load g"), load(K * bv * 2, 1.0, engine, "load S_n")};
  std::tie(loop.compute, loop.carried) = state_grad_phases(hw, K);
  loop.stores = {store(K * bv * 2, engine, "store dS_n"), store(K * 4, engine, "store R_n")};
  loop.async_stores = true;  // written from registers, not waited for
  if (d.hT) loop.prologue.push_back(load(K * bv * 4, 1.0, engine, "load dhT"));
  if (d.h0) loop.epilogue.push_back(store(K * bv * 4, engine, "store dh0"));
  LoopSchedule s;
  s.stages = 2;
  s.compute_warps = 4;
  build_tile_loop(k, loop, s);
  return k;
}

// Phases both paths of pass 3 share: the gate cumsum first; the dg sums and dv's A^T do last.
void cumsum_phase(std::vector<Step>& steps, double K) {
  std::vector<WarpWork> w(8);
  for (auto& x : w) x.smem = 2.0 * kChunk * K * 4 / 8, x.alu = 2.0 * kChunk * K / 32 / 8;
  add_phase(steps, w, true, TensorPath::WarpMma, "gate cumsum");
}
void dg_phase(std::vector<Step>& steps, double K) {
  // q dq - k dk through shared memory (written, then read-modify-written), the suffix sums down
  // each column, dg out.
  std::vector<WarpWork> w(8);
  for (auto& x : w) {
    x.smem += kChunk * K * (4 + 8 + 4 + 2 + 2) / 8;
    x.alu += 4 * kChunk * K / 32 / 8;
  }
  add_phase(steps, w, true, TensorPath::WarpMma, "dg");
}
// dv for 16 rows x V/2 columns (warp i): A^T do over the key sub-chunks at or below the diagonal.
void dv_from_A(WarpWork& x, int i, double V) {
  const double below = 4 - i % 4;
  x.smem += below * (1 + V / 32) * kLdsm4Bytes;
  x.mma += below * V / 16;
  x.alu += V / 16 * 4;
}

// The phases of pass 3's single-anchor path (gla_chunk_grad_single_anchor.cuh), the path every
// chunk takes unless a channel decays by more than 2^-96 over it. The shape says nothing of the
// gates, so the model times this path, which the usual gates take; chunks of gates strong
// enough for the anchored path (gla_chunk_grad_anchored.cuh) run slower than predicted.
std::vector<Step> single_anchor_chunk_phases(const HardwareProfile& hw, double K, double V) {
  const int warps = 8;
  const double C = kChunk, kc = K / 16, vc = V / 16, elems = K / 8 * 4;
  std::vector<Step> steps;
  cumsum_phase(steps, K);
  {  // q <- q 2^b, k <- k 2^-b in place and kF = k 2^{b_last - b}: per lane C K / 512 steps of
     // 6 MUFU, ~10 FP32, 2 LDS.64 + 2 LDS.32 + 3 STS.32; then b <- 2^b (2 MUFU, LDS.64 + STS.64).
    std::vector<WarpWork> w(warps);
    for (auto& x : w) {
      const double steps_per_lane = C * K / 2 / (32 * warps);
      x.mufu += 8 * steps_per_lane;
      x.alu += 12 * steps_per_lane;
      x.smem += steps_per_lane * (4 * 256 + 5 * kLds32Bytes);
    }
    add_phase(steps, w, true, TensorPath::WarpMma, "decay q, k");
  }
  {  // Phase A. Warps 0-3: dA = s do v^T up to the diagonal; warps 4-7: A = s q~ k~^T up to the
     // diagonal.
    std::vector<WarpWork> w(warps);
    for (int o = 0; o < 4; ++o) {
      WarpWork& x = w[o];
      x.smem += vc * (1 + (o + 1)) * kLdsm4Bytes + (16 + 8) * kLds32Bytes;
      x.mma += vc * 2 * (o + 1);
      x.alu += 16 * 5;
      WarpWork& y = w[4 + o];
      y.smem += kc * (1 + (o + 1)) * kLdsm4Bytes + 16 * kLds32Bytes;
      y.mma += kc * 2 * (o + 1);
      y.alu += 16 * 4;
    }
    add_phase(steps, w, false, TensorPath::WarpMma, "dA, A");
  }
  {  // Phase B. Warps 0-3 dq, 4-7 dk: the inter-chunk GEMM (vc x (1 + kc) ldmatrix, vc K/8 mma),
     // the intra-chunk GEMM over the (o + 1) or (4 - o) 16-row blocks up to the diagonal, the
     // store with the self pair and E (2 LDS, 4 FP32 an element; dk divides: MUFU.RCP). dk also
     // sums k~ dk^inter per column (2 LDS, 2 FMA, 3 shuffles per column pair).
    std::vector<WarpWork> w(warps);
    for (int o = 0; o < 4; ++o)
      for (int role = 0; role < 2; ++role) {
        WarpWork& x = w[role * 4 + o];
        const double blocks = role == 0 ? o + 1 : 4 - o;
        x.smem += vc * (1 + kc) * kLdsm4Bytes + blocks * (1 + kc) * kLdsm4Bytes;
        x.mma += (vc + blocks) * K / 8;
        x.alu += elems * (role == 0 ? 1 : 0) + elems * 4;
        x.smem += elems * 2 * kLds32Bytes / 2;
        // dk: the division (MUFU.RCP), E_last on the inter-chunk part, the column sums.
        if (role == 1) x.mufu += elems, x.alu += elems + K / 4 * 7, x.smem += K / 4 * 3 * kLds32Bytes;
      }
    add_phase(steps, w, false, TensorPath::WarpMma, "dq, dk");
  }
  dg_phase(steps, K);
  {  // Phase D: A^T do, then kF dS_n through ldmatrix (kc x (1 + V/32), kc V/16 mma).
    std::vector<WarpWork> w(warps);
    for (int i = 0; i < warps; ++i) {
      dv_from_A(w[i], i, V);
      w[i].smem += kc * (1 + V / 32) * kLdsm4Bytes;
      w[i].mma += kc * V / 16;
    }
    add_phase(steps, w, false, TensorPath::WarpMma, "dv");
  }
  steps.push_back(delay(7 * hw.sync_latency_cycles * hw.cycle_ns(), "CTA barriers"));
  return steps;
}

KernelSpec chunk_grad_kernel(const HardwareProfile& hw, const GlaKernelShape& d) {
  const double C = kChunk, K = double(d.K), V = double(d.V);
  const CopyEngine engine = engine_on(hw);
  KernelSpec k;
  k.name = "gla_backward_chunk_grads";
  k.ctas = d.B * d.H * ((d.T + kChunk - 1) / kChunk);
  k.threads_per_cta = 256;
  k.regs_per_cta = regs_for_warps(8, chunk_grad_regs(d.K, d.V));
  // ChunkGradLayout: q, k, do, 2^b, dS_n, A, then S_n, v, dA, dA's diagonal blocks (reused for
  // q dq - k dk), scan totals, column sums, kF.
  k.smem_bytes = std::int64_t(2 * C * (K + 8) * 2 + C * (V + 8) * 2 + C * (K + 4) * 4 + K * (V + 8) * 2 +
                              C * (C + 8) * 2 + K * (V + 8) * 2 + C * (V + 8) * 2 + C * (C + 8) * 2 +
                              4 * kSub * kSub * 4 + 256 * 4 + 4 * K * 4 + C * (K + 8) * 2);
  TileLoop loop;
  loop.tiles = 1;
  loop.loads = {load(C * K * 2, 1.0, engine, "load q"),       load(C * K * 2, 1.0, engine, "load k"),
                load(C * K * 4, 1.0, engine, "load g"),       load(C * V * 2, 1.0, engine, "load do"),
                load(C * V * 2, 1.0, engine, "load v"),       load(K * V * 2, 1.0, engine, "load S_n"),
                load(K * V * 2, 1.0, engine, "load dS_n"),    load(K * 4 * (V / kStateBlockV), 1.0, engine, "load R_n")};
  loop.compute = single_anchor_chunk_phases(hw, K, V);
  loop.stores = {store(C * K * 2, engine, "store dq"), store(C * K * 2, engine, "store dk"),
                 store(C * V * 2, engine, "store dv"), store(C * K * 4, engine, "store dg")};
  LoopSchedule s;
  s.stages = 1;
  s.compute_warps = 8;
  build_tile_loop(k, loop, s);
  return k;
}

std::string cannot_run(const HardwareProfile& hw, const ShapeArgs& shape) {
  const GlaKernelShape d = dims(shape);
  if ((d.K != 64 && d.K != 128) || (d.V != 64 && d.V != 128))
    return fmt::format("gla_backward materialized needs K and V in {{64, 128}} (K={}, V={})", d.K, d.V);
  for (const KernelSpec& k : {gla_pipelined_states_kernel(hw, d), state_grad_kernel(hw, d), chunk_grad_kernel(hw, d)}) {
    const std::string why = why_kernel_does_not_fit(hw, k);
    if (!why.empty()) return why;
  }
  return {};
}

}  // namespace

std::vector<VariantModel> gla_backward_variant_models() {
  VariantModel m;
  m.workload = "gla_backward";
  m.name = "materialized";
  m.description =
      "states recomputed and written by the forward's state pass, dS_n by a backward walk, then one CTA per chunk "
      "forms dq, dk, dv, dg (mma.sync)";
  m.cannot_run = [](const HardwareProfile& hw, const ShapeArgs& shape) { return cannot_run(hw, shape); };
  m.build = [](const HardwareProfile& hw, const ShapeArgs& shape) {
    const GlaKernelShape d = dims(shape);
    // The state pass keeps no hT for the backward (R_n replaces it, gla_backward_common.cuh).
    GlaKernelShape states = d;
    states.hT = false;
    return std::vector<KernelSpec>{gla_pipelined_states_kernel(hw, states), state_grad_kernel(hw, d),
                                   chunk_grad_kernel(hw, d)};
  };
  return {m};
}

}  // namespace overlap::sim
