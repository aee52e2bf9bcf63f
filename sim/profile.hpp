#pragma once
// Hardware profiles: one JSON file per GPU in profiles/, compiled into the tool so built-in
// names work anywhere. Every field is named with its unit and carries the source of its
// number. A profile may derive from another ("base") and override fields; an unknown field,
// a wrong unit or a missing field is an overlap::Error naming it.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace overlap::sim {

// How tiles get from global memory into shared memory on this GPU.
enum class CopyEngine { Tma, CpAsync, LdSt };
std::string_view copy_engine_name(CopyEngine e);

struct HardwareProfile {
  std::string name;
  std::string description;
  double compute_capability = 0;  // 75, 80, 90, 100
  double sm_count = 0;
  double clock_MHz = 0;
  double regs_per_sm = 0;
  double smem_per_sm_KiB = 0;
  double smem_per_cta_KiB = 0;
  double max_threads_per_sm = 0;
  double max_ctas_per_sm = 0;
  double hbm_bandwidth_GBps = 0;  // attainable, reads + writes together
  double hbm_capacity_GB = 0;
  double l2_size_MiB = 0;
  double l2_bandwidth_GBps = 0;
  double sm_port_bytes_per_clk = 0;  // L2 -> one SM
  double dram_latency_cycles = 0;
  double l2_latency_cycles = 0;
  double tensor_bf16_TFLOPs = 0;  // dense; 16-bit inputs, fp32 accumulation
  double tensor_fp8_TFLOPs = 0;   // 0: not supported
  double tensor_fp4_TFLOPs = 0;   // 0: not supported
  // Every SM streaming wgmma alone (cuda/calibrate/tensor_stream.cu): the rate a GEMM's
  // mainloop gets. The rates above are whole library GEMMs (waves, fills and epilogues in them,
  // which the model charges itself); where these are measured, tensor steps run at them.
  double tensor_bf16_stream_TFLOPs = 0;  // 0: not measured
  double tensor_fp8_stream_TFLOPs = 0;
  double mma_sync_fraction = 0;   // share of the tensor peak reachable with warp-level mma.sync
  double fma_lanes_per_clk = 0;   // FP32 lanes per SM
  double sfu_lanes_per_clk = 0;   // exp2/rcp lanes per SM
  double smem_bytes_per_clk = 0;  // shared-memory (LDS/STS/ldmatrix) bandwidth per SM
  double fma_latency_cycles = 0;  // dependent FFMA chain, per step
  double mufu_latency_cycles = 0; // dependent MUFU.EX2 chain, per step
  double lds_latency_cycles = 0;  // dependent shared-memory load (pointer chase), per step
  double lds_latency_beside_wgmma_cycles = 0;  // the same while wgmma streams shared-memory operands
  double shfl_latency_cycles = 0; // dependent warp shuffle, per step
  double mma_sync_latency_cycles = 0;  // dependent mma.sync m16n8k16 (accumulator chain), per step (0: not measured)
  double sync_latency_cycles = 0; // a CTA barrier / mbarrier round trip
  double bar_sync_latency_cycles = 0;   // a named barrier every warp reaches at once (0: not measured)
  double fence_proxy_async_cycles = 0;  // fence.proxy.async after a shared store (0: not measured / none)
  double launch_overhead_us = 0;
  // Empty kernels timed as `overlap validate` times a workload (queued behind the L2 flush,
  // device events): the first kernel, and each further one back to back (0: not measured).
  // The first is measured to check launch_overhead_us, which the model charges a workload's
  // first kernel; each further kernel queued behind another is charged queued_kernel_gap_us.
  double queued_launch_us = 0;
  double queued_kernel_gap_us = 0;
  // cudaMemcpy2DAsync device to device (a copy engine, not a kernel): read + written bytes per
  // second, and the fixed time of a copy beyond that (0: not measured; charged as a copy kernel).
  double memcpy2d_GBps = 0;
  double memcpy2d_fixed_us = 0;
  // TMA tile loads streamed by every SM through a ring of stages (cuda/calibrate/tma_stream.cu);
  // 0 where not measured (or no TMA): the model then charges TMA loads by l2_bandwidth_GBps,
  // hbm_bandwidth_GBps and the load latencies above.
  double tma_l2_bandwidth_GBps = 0;   // best delivered rate from an L2-resident tensor
  double tma_l2_latency_ns = 0;       // one 32 KiB load, one in flight per SM, every SM loading
  double tma_hbm_bandwidth_GBps = 0;  // the same from a tensor larger than L2 (read bytes)
  double tma_hbm_latency_ns = 0;
  // A launch's first TMA load: from the start of a kernel that loads one box an SM (from a tensor
  // L2 does not hold) to its data in shared memory, beyond an empty kernel's time (descriptor,
  // translation and DRAM all cold). No load of a workload's first kernel's first wave lands
  // earlier than this after the kernel starts.
  double tma_first_load_ns = 0;
  // The same from HBM where each load reads a GEMM operand's tile as a k-loop does: 128 rows of
  // 128 bytes, the rows a K-byte row apart (cuda/calibrate/tma_stream.cu's walk), best over ring
  // depths. The GEMM model's operand misses stream at this rate (Step::k_walk); 0: not
  // measured, hbm_bandwidth_GBps instead.
  double tma_hbm_walk_bandwidth_GBps = 0;
  // One SM's rate for such walk loads from L2, three tensors' loads a stage (a dual GEMM's;
  // cuda/calibrate/tma_stream.cu's operand walk; the built-in profiles hold its one-producer
  // form's figures, docs/validation/README.md says why). 0:
  // not measured, the walk loads are charged as other TMA loads. One tensor's loads are not
  // charged a rate of their own: the per-tensor limit calibrate once reported was its producer
  // thread's issue loop (cuda/calibrate/walk_geometry.cu's trace set).
  double tma_walk_sm_GBps = 0;
  // The same with 2-4 CTAs on each SM walking at once (a small-tile GEMM's occupancy): less than
  // one CTA's deeper ring reaches (0: not measured, tma_walk_sm_GBps).
  double tma_walk_sm_multi_GBps = 0;
  // Issue to landed of one walk stage (a 16 KiB box of each of three tensors) from HBM, one
  // stage in flight per SM, 8 SMs loading (DRAM far from busy). The model's walk loads that miss
  // L2 wait this less the stage's transfer at tma_walk_sm_GBps. 0: not measured, the DRAM
  // latency instead.
  double tma_hbm_walk_latency_ns = 0;
  double tma_hbm_walk_latency_2_ns = 0;  // the same with two stages in flight per SM
  double tma_hbm_walk_latency_3_ns = 0;  // with three
  // The share of tma_walk_sm_GBps the walk keeps while two warpgroups of the SM stream wgmma
  // m64nNk16 with both operands in shared memory (their operand reads beside the TMA's
  // writes). 0: not measured, taken as 1.
  double tma_walk_beside_wgmma_fraction = 0;
  // The other side of the same measurement: the share of its own rate the wgmma stream keeps
  // while the SM's TMA walks operand tiles into shared memory. 0: not measured, taken as 1.
  double tensor_beside_walk_fraction = 0;
  // The same for wgmmas of N >= 256 (the 128x128 dual GEMM's 64 x 256), which calibrate measures
  // apart: their k-block draws fewer walk bytes a clock. 0: not measured, the above.
  double tensor_beside_walk_wide_fraction = 0;
  // The SM clock while every SM streams wgmma, each launch after an L2 flush as overlap validate
  // times (cuda/calibrate/tensor_clock.cu): what turns a consumer's cycle counts into time beside
  // the tensor rates. 0: not measured, clock_MHz.
  double tensor_clock_MHz = 0;
  // The clock while at most half the SMs stream wgmma (the others idle) over the clock while
  // every SM does, both from the same runs, each launch after an L2 flush: fewer busy SMs draw
  // less power and hold a higher clock. The engine scales a launch's tensor rates by it, linearly
  // from half the SMs busy (all of it) to every SM (none). 0: not measured, no change.
  double tensor_clock_half_sms_ratio = 0;
  // A GEMM consumer whose ring depth is not a power of two takes the stage and phase by a
  // division between one wgmma wait and the next wgmma (cuda/calibrate/consumer_chain.cu): the
  // SM clocks this adds to each k-block. 0: not measured, not charged.
  double ring_division_cycles = 0;
  // What an L2 prefetch of a walk box (cp.async.bulk.prefetch.tensor) takes from the SM's TMA,
  // as the rate at which its bytes would pass: prefetches queue with the loads though no byte
  // reaches the SM. 0: not measured, free.
  double tma_walk_prefetch_GBps = 0;
  // Extra cycles a first pass over code costs per KiB of SASS, code in device memory (L2
  // flushed), every SM fetching (cuda/calibrate/icache.cu); 0: not measured, not charged.
  double cold_code_cycles_per_KiB = 0;
  // A scheduler's issue rate over code it cycles through (both roles' per-chunk code), by size:
  // up to icache_near_KiB at the pipes' rate; up to icache_far_KiB at fetch_far_issue_per_clk;
  // beyond at fetch_l2_issue_per_clk (instructions a cycle; all 0: not measured, no cap).
  double icache_near_KiB = 0;
  double icache_far_KiB = 0;
  double fetch_far_issue_per_clk = 0;
  double fetch_l2_issue_per_clk = 0;
  // Clusters of 2 / 4 CTAs resident at once, one CTA per SM (cuda/calibrate/cluster_slots.cu):
  // a cluster lives in one GPC, so fewer than sm_count / size may fit. 0: not measured, the
  // model assumes sm_count / size.
  double max_clusters_of_2 = 0;
  double max_clusters_of_4 = 0;
  // Every SM writing an L2-resident output tile, bytes per SM clock over all SMs
  // (cuda/calibrate/store_drain.cu): by 4-byte stores of an mma accumulator fragment (a warp
  // instruction writes half of each 32-byte sector it touches), by 16-byte stores of whole
  // lines, and by bulk copies (TMA) from shared memory. 0: not measured, an output store is
  // charged as any other copy.
  double fragment_store_bytes_per_clk = 0;
  double line_store_bytes_per_clk = 0;
  double bulk_store_bytes_per_clk = 0;
  CopyEngine copy_engine = CopyEngine::LdSt;
  std::map<std::string, std::string> sources;  // field name -> where the number comes from

  bool has_wgmma() const { return compute_capability >= 90; }  // also TMA, clusters, setmaxnreg
  bool has_clusters() const { return compute_capability >= 90; }
  double cycle_ns() const { return 1e3 / clock_MHz; }
  double tensor_cycle_ns() const { return 1e3 / (tensor_clock_MHz > 0 ? tensor_clock_MHz : clock_MHz); }
  // Whether a working set of `bytes` read more than once stays in L2 between its reads: where it
  // fits in half of L2 (the other half holds what streams through beside it).
  bool stays_in_l2(double bytes) const { return bytes <= 0.5 * l2_size_MiB * 1024 * 1024; }
  // The share of a later kernel's reads of an intermediate that miss L2, where `bytes` were
  // written since it (the intermediate included): none where they stay in L2, all otherwise.
  double l2_miss_fraction(double bytes) const { return stays_in_l2(bytes) ? 0.0 : 1.0; }
  // A __syncthreads / bar.sync every warp reaches at once: measured where the profile has it,
  // else the mbarrier hand-off (sync_latency_cycles).
  double cta_barrier_cycles() const { return bar_sync_latency_cycles > 0 ? bar_sync_latency_cycles : sync_latency_cycles; }
  // Resident clusters of `size` CTAs taking a whole SM each (size 1: every SM).
  int cluster_slots(int size) const;
  // The rates tensor steps run at: the wgmma stream where measured, else the library GEMM's.
  double bf16_step_TFLOPs() const { return tensor_bf16_stream_TFLOPs > 0 ? tensor_bf16_stream_TFLOPs : tensor_bf16_TFLOPs; }
  double fp8_step_TFLOPs() const { return tensor_fp8_stream_TFLOPs > 0 ? tensor_fp8_stream_TFLOPs : tensor_fp8_TFLOPs; }
  // How much faster the tensor steps run in a launch that holds `busy_sms` SMs than with every
  // SM busy (tensor_clock_half_sms_ratio; 1 where not measured).
  double tensor_clock_boost(double busy_sms) const;
  // Dense bf16 tensor-core FLOPs one SM completes per clock at that rate.
  double bf16_flops_per_sm_clk() const { return bf16_step_TFLOPs() * 1e6 / (sm_count * clock_MHz); }
  nlohmann::json to_json() const;
};

struct ProfileField {
  std::string_view name;
  std::string_view unit;  // as a user may write it in "unit": e.g. "GB/s"
  std::string_view description;
  double HardwareProfile::*member;
};
const std::vector<ProfileField>& profile_fields();  // every numeric field, in file order

std::vector<std::string> builtin_profile_names();  // T4, A100, H100, H200, B200
// A built-in name (case-sensitive) or a path to a JSON file.
HardwareProfile load_profile(std::string_view name_or_path);
// Parses profile JSON text; `origin` names it in errors. Exposed for tests.
HardwareProfile parse_profile(std::string_view json_text, std::string_view origin);

}  // namespace overlap::sim
