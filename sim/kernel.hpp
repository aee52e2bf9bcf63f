#pragma once
// The model's description of one kernel launch: what every CTA does, as roles (warps with one
// job) issuing steps to the SM's units and synchronising on barriers indexed by tile. Built
// in C++ by the variant models (sim/models/) and from JSON by schedule files; simulated by
// sim/engine.cpp. Nothing here knows about a particular workload.
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/profile.hpp"

namespace overlap::sim {

// Per-SM units. HBM/L2 are not SM units: their share per SM is folded into copy rates.
// Smem: the SM's shared-memory pipe (LDS/STS/ldmatrix bytes), shared by all its warps.
enum class Unit : std::uint8_t { Copy, Tensor, Fma, Sfu, Smem };
inline constexpr int kUnitCount = 5;
std::string_view unit_name(Unit u);

enum class Precision : std::uint8_t { Bf16, Fp8, Fp4 };
enum class TensorPath : std::uint8_t {
  Warpgroup,  // wgmma (Hopper) / tcgen05 (Blackwell): the full tensor peak
  WarpMma,    // mma.sync: mma_sync_fraction of the peak
};

enum class StepKind : std::uint8_t {
  Run,     // do `amount` on `unit`; the role waits until it is done
  Issue,   // start `amount` on `unit` and go on; on completion arrive on `barrier`
  Wait,    // block until barrier[index] has all its arrivals
  Arrive,  // one arrival on barrier[index]
  Delay,   // block for `amount` ns without occupying a unit (a dependent-latency chain)
};

// How a store writes global memory, where the profile has measured that way's rate
// (cuda/calibrate/store_drain.cu): a thread's pairs of an mma accumulator fragment, whole lines,
// or bulk copies (TMA) from shared memory. Any: charged as any other copy.
enum class StoreShape { Any, Fragment, Lines, Bulk };

// One step of a role. Amount units: Copy bytes, Tensor flops, Fma/Sfu lane operations
// (one per thread-instruction), Smem bytes moved between shared memory and registers, Delay
// nanoseconds.
struct Step {
  StepKind kind = StepKind::Run;
  Unit unit = Unit::Fma;
  double amount = 0;
  int barrier = -1;  // Wait/Arrive target; Issue: barrier to arrive on when done (-1: none)
  // Tile index this step refers to: body: iteration + offset; prologue: offset; epilogue:
  // tiles + offset. Indexed steps outside [0, tiles) are skipped (a Wait below 0 passes).
  int offset = 0;
  int every = 1, phase = 0;  // body only: run when (iteration + offset) % every == phase
  // Run only for tile indices in [from, to) (any segment): a CTA whose early tiles take a
  // different path (a state-only prefix) lists both paths' steps in one body.
  int from = INT_MIN, to = INT_MAX;
  // Copy only:
  double hbm_fraction = 1;  // share of the bytes that miss L2 (the rest hit in L2)
  // Share of the bytes this SM draws from L2's bandwidth: 1/n for a tile that one TMA multicast
  // delivers to the n CTAs of a cluster (L2 reads it once; every SM's port still receives it).
  double l2_fraction = 1;
  bool store = false;       // global writes (no load latency to wait for)
  StoreShape store_shape = StoreShape::Any;
  // An L2 prefetch (TMA's prefetch.tensor): the bytes come from HBM into L2 only; they take this
  // SM's share of HBM bandwidth and, for a walk, its TMA, but no latency anyone waits for.
  bool l2_prefetch = false;
  // A GEMM operand tile walked along K (128 bytes of each row per k-block, the rows K bytes
  // apart): its misses stream at the profile's tma_hbm_walk_bandwidth_GBps where measured, the
  // rate calibrate's walk of that pattern reaches, rather than a contiguous stream's.
  bool k_walk = false;
  CopyEngine engine = CopyEngine::Tma;  // the instruction path the kernel uses for this copy
  // Tensor only:
  Precision precision = Precision::Bf16;
  TensorPath path = TensorPath::Warpgroup;
  int mma_n = 0;  // the N of its wgmma instructions (0: not known): what the walk beside it costs
  std::string label;  // shown in traces
};

struct Role {
  std::string name;
  int warps = 4;  // a role with fewer than 4 warps reaches only warps/4 of an SM's FMA/SFU/tensor pipes
  // Tiles visited: blocks of `run_length` consecutive tiles, starting with block `first_block`
  // and advancing `block_stride` blocks (pingpong consumers alternate with stride 2).
  int first_block = 0, block_stride = 1, run_length = 1;
  std::vector<Step> prologue, body, epilogue;
};

struct BarrierSpec {
  std::string name;
  int arrivals = 1;  // arrivals that complete one index
};

struct KernelSpec {
  std::string name;
  std::int64_t ctas = 1;
  int threads_per_cta = 128;
  std::int64_t regs_per_cta = 0;  // allocated registers (see regs_for_warps)
  std::int64_t smem_bytes = 0;
  int cluster_size = 1;
  int tiles = 1;  // main-loop iterations per CTA
  // The kernel's HBM bytes over all its CTAs where the simulated CTA is not typical of them (a
  // walk split into segments of different lengths); < 0: the simulated CTA's times the CTAs.
  double hbm_bytes = -1;
  // What starting it costs where that is not a kernel launch's (a copy-engine transfer: its
  // measured fixed part, wherever it sits in the stream); < 0: the profile's launch costs.
  double launch_us = -1;
  std::vector<Role> roles;
  std::vector<BarrierSpec> barriers;
};

// Registers the hardware allocates to `warps` warps compiled for `regs_per_thread` (granule of
// 256 registers per warp, CUDA occupancy calculator).
std::int64_t regs_for_warps(int warps, int regs_per_thread);

// Step constructors keep the models short and readable.
Step run(Unit unit, double amount, std::string label);
Step issue(Unit unit, double amount, int barrier, int offset, std::string label);
// `s` (a copy or work) started without waiting, arriving on barrier[tile + offset] when done.
Step issued(Step s, int barrier, int offset);
Step wait(int barrier, int offset, std::string label = "wait");
Step arrive(int barrier, int offset);
Step delay(double ns, std::string label);
Step load(double bytes, double hbm_fraction, CopyEngine engine, std::string label);   // Run copy
Step store(double bytes, CopyEngine engine, std::string label);                       // Run copy, write
Step mma(double flops, Precision p, TensorPath path, std::string label);              // Run tensor

}  // namespace overlap::sim
