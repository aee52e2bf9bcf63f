#pragma once
// The instruction mix of a compiled kernel, per marked source region, as tools/sass_mix.py counts
// it from the SASS (static counts per warp; per chunk for regions inside a chunk loop). Variant
// models charge these counts instead of hand counts, and a CPU test recompiles the kernel and
// fails when the committed table and the fresh counts drift apart, so a kernel change cannot
// leave its model behind.
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/kernel.hpp"

namespace overlap::sim {

// Field order = tools/sass_mix.py CLASSES.
struct SassCounts {
  double issue = 0;        // every instruction but NOP (issue slots)
  double mufu = 0;         // special-function unit (MUFU.EX2, ...)
  double hgmma = 0;        // wgmma instructions
  double hgmma_flops = 0;  // their flops, from each instruction's shape
  double hmma = 0;         // mma.sync instructions
  double hmma_flops = 0;
  double lds_bytes = 0;    // shared-memory bytes loaded per warp (LDS, LDSM)
  double sts_bytes = 0;    // stored per warp (STS, STSM)
  double fp32 = 0;         // FADD, FMUL, FFMA, ...
  double alu = 0;          // integer, conversion, select, move
  double uniform = 0;      // uniform-datapath instructions
  double sync = 0;         // barriers, mbarrier operations, fences, warpgroup arrive / wait
  double tma = 0;          // bulk tensor copies
  double control = 0;      // branches
  double other = 0;        // other memory and special-register reads
  // One warp's in-order issue time through the region with the profile's instruction latencies
  // (tools/sass_timing.py): the time a latency-bound warp needs even with the SM to itself.
  double cycles = 0;
  // The same with shared-memory loads as slow as while wgmma streams shared-memory operands on
  // the SM (the profile's lds_latency_beside_wgmma_cycles).
  double cycles_loaded = 0;

  SassCounts& operator+=(const SassCounts& o);
  // Every field times `n`: a loop body's counts over n passes.
  SassCounts times(double n) const;
};

struct SassRegionMix {
  std::string_view function;  // mangled kernel name
  std::string_view region;    // marked source region, or "(other)"
  SassCounts counts;
};

// Sum over `regions` of the function whose mangled name contains `function_part`; an
// overlap::Error names the function or region that the table lacks.
SassCounts sass_counts(std::span<const SassRegionMix> table, std::string_view function_part,
                       std::initializer_list<std::string_view> regions);

// Whether the table has `region` for the function whose mangled name contains `function_part`
// (a region compiled only at some template arguments).
bool has_sass_region(std::span<const SassRegionMix> table, std::string_view function_part, std::string_view region);

// A chain of c0 = counts.cycles whose shared loads take c1 - c0 more (c1 = cycles_loaded) while
// other warps' wgmmas stream their operands (lds_latency_beside_wgmma_cycles, measured), for the
// wgmmas' share f of the chain's time: f = tensor cycles / chain time, and where the chain sets
// the pace: c = c0 + (tensor / c) (c1 - c0), solved for c.
double loaded_chain(const SassCounts& counts, double tensor_cycles);

// The barriers (indexed by tile, offset 0) on which a pass's pipe work arrives.
struct PipeBarriers {
  int sfu, smem, issue;
};

// One pass of `warps` warps through compiled code of mix `c`: its exp2 (SFU), shared-memory bytes
// and issue slots (the FMA pipe, a lane per thread-instruction) started together, beside one
// warp's in-order chain of `chain_ns`; the steps end when the chain and every pipe are done.
std::vector<Step> sass_pass(const SassCounts& c, double warps, double chain_ns, PipeBarriers b,
                            const std::string& what, const std::string& chain_label);

// A phase of mma.sync code: sass_pass of the busiest scheduler's in-order chain (`chain_ns`),
// with the warps' mma.sync flops on the tensor pipe beside it. Appends the phase's four barriers
// (exp2, shared memory, issue slots, mma) to `barriers`, whose first entry is barrier
// `first_index` in the kernel's numbering (a TileLoop's own barriers start at kTileLoopBarriers).
std::vector<Step> sass_mma_phase(const SassCounts& c, double warps, double chain_ns, const std::string& what,
                                 std::vector<BarrierSpec>& barriers, int first_index = 0);

}  // namespace overlap::sim
