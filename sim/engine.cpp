#include "sim/engine.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <queue>

#include "core/error.hpp"

namespace overlap::sim {
namespace {

constexpr double kEps = 1e-9;
constexpr double kWalkStageBytes = 3 * 16384;  // calibrate's operand walk: a stage of three 16 KiB boxes

// Per-SM rates in "units of work per ns at full unit capacity".
struct Rates {
  double copy_ns_per_byte_hbm;   // for bytes that miss L2
  double walk_ns_per_byte_hbm;   // for the misses of a GEMM operand's k-walk (Step::k_walk)
  double copy_ns_per_byte_l2;    // for bytes read from L2 (this SM's share of its bandwidth)
  double copy_ns_per_byte_port;  // for every byte (all enter the SM through its L2 -> SM port)
  double dram_latency_ns, l2_latency_ns;
  // TMA tile loads from L2, where the profile has the TMA-stream microbenchmark (tma_stream.cu):
  // the rate it delivered with every SM streaming (the TMA engine's path, over twice the
  // L1-bypassing loads' l2_bandwidth_GBps on an H100), and the latency of an L2-hit load under
  // that load (one 32 KiB load in flight per SM, less its transfer at the SM's share). Without
  // it, TMA loads are charged as the others. Misses are charged hbm_bandwidth_GBps either way:
  // the microbenchmark's TMA read stream (3145 GB/s on the H100) is within 4% of the copy's.
  double tma_ns_per_byte_l2, tma_l2_latency_ns;
  // A GEMM operand's walk loads (Step::k_walk) where the profile has the operand-walk
  // microbenchmark: all of an SM's walk loads share walk_sm_ns_per_byte (0: not measured,
  // charged as other loads). No tensor's loads have a rate of their own: the per-tensor limit
  // calibrate once reported was its producer thread's issue loop (walk_geometry.cu's trace).
  double walk_sm_ns_per_byte;
  double walk_beside_wgmma;  // share of walk_sm kept while the tensor unit streams wgmma
  double tensor_beside_walk;  // share of the tensor unit's rate kept while a walk load crosses the port
  double tensor_beside_walk_wide;  // the same for wgmmas of N >= 256
  double walk_prefetch_ns_per_byte;  // an L2 prefetch of a walk box on the SM's TMA (0: free)
  // A walk load's latency when it misses L2, by the stages in flight on the SM (1, 2, 3 or
  // more; linear between): calibrate's walk from HBM at that many stages in flight, issue to
  // landed of a stage, less the stage's transfer at the SM's walk rate (the DRAM pointer chase
  // where not measured).
  double walk_dram_latency_ns[3];
  double walk_dram_latency(double stages_in_flight) const {
    const double st = std::clamp(stages_in_flight, 1.0, 3.0);
    const int below = std::min(int(st), 2);
    return walk_dram_latency_ns[below - 1] + (st - below) * (walk_dram_latency_ns[below] - walk_dram_latency_ns[below - 1]);
  }
  // A store of each StoreShape where the profile measured its rate: this SM's share of every
  // SM storing that way (0: not measured, charged as other copies).
  double store_ns_per_byte[int(StoreShape::Bulk) + 1];
  double tensor_flops_per_ns[3];
  double mma_sync_fraction;
  double fma_per_ns, sfu_per_ns, smem_bytes_per_ns;
  double lsu_weight;  // FMA-lane-equivalents of one load/store lane operation

  Rates(const HardwareProfile& hw, double active_sms, int ctas_on_sm, double launch_sms) {
    const double clk_GHz = hw.clock_MHz * 1e-3;
    const double hbm_share = hw.hbm_bandwidth_GBps / active_sms;  // GB/s == bytes/ns
    copy_ns_per_byte_hbm = 1.0 / hbm_share;
    walk_ns_per_byte_hbm = hw.tma_hbm_walk_bandwidth_GBps > 0 ? active_sms / hw.tma_hbm_walk_bandwidth_GBps
                                                              : copy_ns_per_byte_hbm;
    copy_ns_per_byte_l2 = active_sms / hw.l2_bandwidth_GBps;
    copy_ns_per_byte_port = 1.0 / (hw.sm_port_bytes_per_clk * clk_GHz);
    dram_latency_ns = hw.dram_latency_cycles / clk_GHz;
    l2_latency_ns = hw.l2_latency_cycles / clk_GHz;
    tma_ns_per_byte_l2 = hw.tma_l2_bandwidth_GBps > 0 ? active_sms / hw.tma_l2_bandwidth_GBps : copy_ns_per_byte_l2;
    // Several CTAs walking on one SM at tma_walk_sm_multi_GBps where measured (the built-in
    // profiles' figure is from calibrate's one-producer walk); the walk's latencies below are one
    // CTA's.
    const double walk_sm_one = hw.tma_walk_sm_GBps > 0 ? 1.0 / hw.tma_walk_sm_GBps : 0;
    walk_sm_ns_per_byte =
        ctas_on_sm > 1 && hw.tma_walk_sm_multi_GBps > 0 ? 1.0 / hw.tma_walk_sm_multi_GBps : walk_sm_one;
    walk_beside_wgmma = hw.tma_walk_beside_wgmma_fraction > 0 ? hw.tma_walk_beside_wgmma_fraction : 1.0;
    tensor_beside_walk = hw.tensor_beside_walk_fraction > 0 ? std::min(1.0, hw.tensor_beside_walk_fraction) : 1.0;
    tensor_beside_walk_wide =
        hw.tensor_beside_walk_wide_fraction > 0 ? std::min(1.0, hw.tensor_beside_walk_wide_fraction) : tensor_beside_walk;
    walk_prefetch_ns_per_byte = hw.tma_walk_prefetch_GBps > 0 ? 1.0 / hw.tma_walk_prefetch_GBps : 0;
    const double measured[3] = {hw.tma_hbm_walk_latency_ns, hw.tma_hbm_walk_latency_2_ns, hw.tma_hbm_walk_latency_3_ns};
    for (int d = 0; d < 3; ++d)
      walk_dram_latency_ns[d] = measured[d] > 0 && walk_sm_one > 0
                                    ? std::max(dram_latency_ns, measured[d] - kWalkStageBytes * walk_sm_one)
                                    : d > 0 ? walk_dram_latency_ns[d - 1] : dram_latency_ns;
    constexpr double kTmaStreamBoxBytes = 32768;  // the microbenchmark's load
    tma_l2_latency_ns =
        hw.tma_l2_latency_ns > 0 && hw.tma_l2_bandwidth_GBps > 0
            ? std::max(l2_latency_ns, hw.tma_l2_latency_ns - kTmaStreamBoxBytes * hw.sm_count / hw.tma_l2_bandwidth_GBps)
            : l2_latency_ns;
    const auto store_share = [&](double bytes_per_clk) {
      return bytes_per_clk > 0 ? active_sms / (bytes_per_clk * clk_GHz) : 0;
    };
    store_ns_per_byte[int(StoreShape::Any)] = 0;
    store_ns_per_byte[int(StoreShape::Fragment)] = store_share(hw.fragment_store_bytes_per_clk);
    store_ns_per_byte[int(StoreShape::Lines)] = store_share(hw.line_store_bytes_per_clk);
    store_ns_per_byte[int(StoreShape::Bulk)] = store_share(hw.bulk_store_bytes_per_clk);
    const double per_sm = 1e3 / hw.sm_count;  // TFLOP/s -> flop/ns per SM
    tensor_flops_per_ns[int(Precision::Bf16)] = hw.bf16_step_TFLOPs() * per_sm;
    tensor_flops_per_ns[int(Precision::Fp8)] = hw.fp8_step_TFLOPs() * per_sm;
    tensor_flops_per_ns[int(Precision::Fp4)] = hw.tensor_fp4_TFLOPs * per_sm;
    // A launch on fewer SMs holds a higher clock (tensor_clock.cu by SM count).
    const double boost = hw.tensor_clock_boost(launch_sms > 0 ? launch_sms : hw.sm_count);
    for (double& rate : tensor_flops_per_ns) rate *= boost;
    mma_sync_fraction = hw.has_wgmma() ? hw.mma_sync_fraction : 1.0;
    fma_per_ns = hw.fma_lanes_per_clk * clk_GHz;
    sfu_per_ns = hw.sfu_lanes_per_clk * clk_GHz;
    smem_bytes_per_ns = hw.smem_bytes_per_clk * clk_GHz;
    lsu_weight = hw.fma_lanes_per_clk / 32.0;  // 32 load/store lanes per SM on Volta..Blackwell
  }
};

enum class Status : std::uint8_t { Ready, BlockedOp, BlockedWait, BlockedDelay, Done };

struct RoleState {
  int cta = 0, role = 0;
  int segment = 0;  // 0 prologue, 1 body, 2 epilogue, 3 done
  int it = 0, block = 0, in_run = 0;
  std::size_t step = 0;
  bool issue_cost_paid = false;  // non-TMA copies first spend issue slots on the role's warps
  Status status = Status::Ready;
  int wait_barrier = -1, wait_index = 0;
  double blocked_since = 0;
};

struct Op {
  int role = -1;  // blocking role, or -1 for an async op
  int cta = 0, barrier = -1, index = 0;
  Unit unit = Unit::Copy;
  double remaining = 0;  // ns of work at full unit capacity (a copy: its HBM part)
  // A copy's part on the SM's side (its L2 share and its port): served beside the HBM part, by
  // a second first-come-first-served server, so one load's misses stream from DRAM while an
  // earlier load's hits cross the port. The op is done when both parts are.
  double port_remaining = 0, port_rate = 0;
  double cap = 1;        // most of the unit this op can use
  double rate = 0;
  double latency_ns = 0;  // after the transfer (loads)
  double not_before_ns = 0;   // a cold start's load lands no earlier than this
  int* walk_in_flight = nullptr;  // its tensor's loads in flight on this SM (this one included)
  double walk_bytes = 0;          // a walk load's bytes, in the SM's walk bytes in flight until it lands
  double port_share = 0;      // of a walk load's transfer, the part its SM's walk rate sets
  bool is_load = false;
  double start_ns = 0;
  std::uint64_t order = 0;  // issue order: the copy path serves requests first come, first served
  const Step* step = nullptr;
};

struct Timed {
  double time;
  std::uint64_t seq;
  int role;  // role to wake (Delay or blocking op) or -1
  int cta, barrier, index;
  bool load_done;
  int* walk_in_flight = nullptr;  // a walk load's tensor's count of loads in flight, to decrement
  double walk_bytes = 0;          // and its bytes, to take off the SM's
  bool operator>(const Timed& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

class SmSimulation {
 public:
  SmSimulation(const HardwareProfile& hw, const KernelSpec& k, int ctas, double active_sms,
               std::vector<TraceEvent>* trace, bool cold_start, double launch_sms)
      : hw_(hw), k_(k), rates_(hw, active_sms, ctas, launch_sms), trace_(trace),
        cold_first_load_ns_(cold_start ? hw.tma_first_load_ns : 0) {
    OVERLAP_REQUIRE(k.tiles >= 0, "kernel '{}': tiles must not be negative", k.name);
    counts_.assign(std::size_t(ctas) * k.barriers.size(), std::vector<int>(std::size_t(std::max(k.tiles, 1)), 0));
    waiters_.assign(std::size_t(ctas) * k.barriers.size(), {});
    for (int c = 0; c < ctas; ++c)
      for (int r = 0; r < int(k.roles.size()); ++r) {
        RoleState s;
        s.cta = c;
        s.role = r;
        s.block = k.roles[r].first_block;
        roles_.push_back(s);
        ready_.push_back(int(roles_.size()) - 1);
      }
  }

  SmResult run() {
    while (true) {
      while (!ready_.empty()) {
        const int r = ready_.back();
        ready_.pop_back();
        advance(r);
      }
      if (ops_.empty() && timed_.empty()) break;
      step_time();
    }
    for (const auto& r : roles_)
      if (r.status != Status::Done) {
        const auto& role = k_.roles[r.role];
        if (r.status == Status::BlockedWait)
          fail("kernel '{}' deadlocks: role '{}' of CTA {} waits forever on barrier '{}'[{}]", k_.name,
               role.name, r.cta, k_.barriers[r.wait_barrier].name, r.wait_index);
        fail("kernel '{}' deadlocks: role '{}' never finishes", k_.name, role.name);
      }
    result_.time_ns = now_;
    return result_;
  }

 private:
  const std::vector<Step>& segment_steps(const RoleState& s) const {
    const Role& role = k_.roles[s.role];
    return s.segment == 0 ? role.prologue : s.segment == 1 ? role.body : role.epilogue;
  }

  // Moves a role to the next segment / iteration when its current step list is exhausted.
  // Returns false when the role has finished.
  bool next_position(RoleState& s) {
    const Role& role = k_.roles[s.role];
    while (true) {
      if (s.segment == 0) {
        if (s.step < role.prologue.size()) return true;
        s.segment = 1;
        s.step = 0;
        s.it = s.block * role.run_length;
        if (s.it >= k_.tiles || role.body.empty()) s.segment = 2;
        continue;
      }
      if (s.segment == 1) {
        if (s.step < role.body.size()) return true;
        s.step = 0;
        if (++s.in_run == role.run_length) {
          s.in_run = 0;
          s.block += role.block_stride;
        }
        s.it = s.block * role.run_length + s.in_run;
        if (s.it >= k_.tiles) s.segment = 2;
        continue;
      }
      if (s.segment == 2) {
        if (s.step < role.epilogue.size()) return true;
        s.segment = 3;
      }
      return false;
    }
  }

  int step_index(const RoleState& s, const Step& st) const {
    if (s.segment == 0) return st.offset;
    if (s.segment == 1) return s.it + st.offset;
    return k_.tiles + st.offset;
  }

  std::vector<int>& counts(int cta, int barrier) { return counts_[std::size_t(cta) * k_.barriers.size() + barrier]; }

  bool barrier_done(int cta, int barrier, int index) {
    if (index < 0) return true;
    return counts(cta, barrier)[index] >= k_.barriers[barrier].arrivals;
  }

  void do_arrive(int cta, int barrier, int index) {
    if (index < 0 || index >= k_.tiles) return;
    OVERLAP_REQUIRE(barrier >= 0 && barrier < int(k_.barriers.size()), "kernel '{}': step names barrier {} of {}",
                    k_.name, barrier, k_.barriers.size());
    if (++counts(cta, barrier)[index] < k_.barriers[barrier].arrivals) return;
    auto& w = waiters_[std::size_t(cta) * k_.barriers.size() + barrier];
    for (std::size_t i = 0; i < w.size();) {
      RoleState& s = roles_[w[i]];
      if (barrier_done(cta, barrier, s.wait_index)) {
        record_role(s, "wait " + k_.barriers[barrier].name, s.blocked_since, now_);
        s.status = Status::Ready;
        s.step++;
        ready_.push_back(w[i]);
        w[i] = w.back();
        w.pop_back();
      } else {
        ++i;
      }
    }
  }

  // Work in ns at full unit capacity, and the op's cap, for one Run/Issue step.
  void cost(const Step& st, int warps, Op& op, bool count) {
    SmResult& totals = count ? result_ : discard_;
    const double warp_share = std::min(1.0, warps / 4.0);
    switch (st.unit) {
      case Unit::Copy: {
        const double f = std::clamp(st.hbm_fraction, 0.0, 1.0);
        const double l2 = std::clamp(st.l2_fraction, 0.0, 1.0);
        const bool tma_load = st.engine == CopyEngine::Tma && !st.store;
        const bool walk = tma_load && st.k_walk;
        const double hbm_ns_per_byte = walk ? rates_.walk_ns_per_byte_hbm : rates_.copy_ns_per_byte_hbm;
        const double port_ns_per_byte = walk && rates_.walk_sm_ns_per_byte > 0 ? rates_.walk_sm_ns_per_byte
                                                                                 : rates_.copy_ns_per_byte_port;
        const double hbm_ns = st.amount * f * hbm_ns_per_byte;
        const double store_ns_per_byte = st.store ? rates_.store_ns_per_byte[int(st.store_shape)] : 0;
        const double sm_ns =
            st.amount * std::max({l2 * (tma_load ? rates_.tma_ns_per_byte_l2 : rates_.copy_ns_per_byte_l2),
                                  port_ns_per_byte, store_ns_per_byte});
        if (st.l2_prefetch) {
          op.remaining = hbm_ns;
          if (walk) op.port_remaining = st.amount * rates_.walk_prefetch_ns_per_byte;  // TMA time, no bytes in
        } else if (walk && rates_.walk_sm_ns_per_byte > 0) {
          // Measured apart (calibrate's walk from HBM and from L2): each on its own server.
          op.remaining = hbm_ns;
          op.port_remaining = sm_ns;
          op.port_share = port_ns_per_byte * st.amount / sm_ns;
        } else {
          op.remaining = std::max(hbm_ns, sm_ns);
        }
        double stages_in_flight = 1;
        if (walk && !st.l2_prefetch && rates_.walk_sm_ns_per_byte > 0) {
          // How deep the SM's walk is, in calibrate's stages, sets the latency of a miss. Its
          // stage is one 16 KiB box of each of three tensors (48 KiB), so depth is both a count
          // of a tensor's loads and bytes: the kernels' boxes are 6 to 32 KiB, and the larger
          // reading is charged (this tensor's loads in flight, or the SM's walk bytes in flight
          // over the stage's), of any of the SM's CTAs, this load included.
          int& in_flight = walk_in_flight_[st.label];
          ++in_flight;
          op.walk_in_flight = &in_flight;
          op.walk_bytes = st.amount;
          walk_bytes_in_flight_ += st.amount;
          stages_in_flight = std::max(double(in_flight), walk_bytes_in_flight_ / kWalkStageBytes);
        }
        op.cap = 1;
        op.is_load = !st.store;
        // Of the CTAs sharing a tile through L2 one fetches it from DRAM and waits the DRAM
        // latency; the wave ends with the slowest, so any miss costs the DRAM latency.
        op.latency_ns = st.store || st.l2_prefetch ? 0
                        : f > 0  ? (walk ? rates_.walk_dram_latency(stages_in_flight) : rates_.dram_latency_ns)
                                 : (tma_load ? rates_.tma_l2_latency_ns : rates_.l2_latency_ns);
        const double hbm = st.amount * f;
        if (!st.l2_prefetch) (st.store ? totals.store_bytes : totals.load_bytes) += st.amount;
        totals.hbm_bytes += hbm;
        break;
      }
      case Unit::Tensor: {
        double rate = rates_.tensor_flops_per_ns[int(st.precision)];
        OVERLAP_REQUIRE(rate > 0, "kernel '{}': {} has no tensor-core rate for this precision", k_.name, hw_.name);
        if (st.path == TensorPath::WarpMma || !hw_.has_wgmma()) rate *= rates_.mma_sync_fraction;
        op.remaining = st.amount / rate;
        op.cap = warp_share;
        totals.tensor_flops += st.amount;
        break;
      }
      case Unit::Fma:
        op.remaining = st.amount / rates_.fma_per_ns;
        op.cap = warp_share;
        totals.fma_ops += st.amount;
        break;
      case Unit::Sfu:
        op.remaining = st.amount / rates_.sfu_per_ns;
        op.cap = warp_share;
        totals.sfu_ops += st.amount;
        break;
      case Unit::Smem:
        // One pipe per SM: any number of warps can saturate it.
        op.remaining = st.amount / rates_.smem_bytes_per_ns;
        op.cap = 1;
        totals.smem_bytes += st.amount;
        break;
    }
  }

  void start_op(int r, const Step& st, bool blocking, int barrier, int index) {
    RoleState& s = roles_[r];
    Op op;
    op.role = blocking ? r : -1;
    op.cta = s.cta;
    op.barrier = barrier;
    op.index = index;
    op.unit = st.unit;
    op.start_ns = now_;
    op.step = &st;
    cost(st, k_.roles[s.role].warps, op, s.cta == 0);  // per-CTA totals come from CTA 0
    // Cold start: no load's data lands before the measured first load's would (counted from the
    // kernel's start), whichever role or tile issues it.
    if (op.is_load && !st.l2_prefetch && now_ < cold_first_load_ns_) op.not_before_ns = cold_first_load_ns_;
    if (op.is_load) ++loads_in_flight_;
    if (op.remaining <= 0 && op.port_remaining <= 0) op.remaining = kEps;
    op.order = seq_++;
    ops_.push_back(op);
  }

  void advance(int r) {
    RoleState& s = roles_[r];
    while (true) {
      if (!next_position(s)) {
        s.status = Status::Done;
        return;
      }
      const Step& st = segment_steps(s)[s.step];
      const int index = step_index(s, st);
      if ((s.segment == 1 && st.every > 1 && ((index % st.every) + st.every) % st.every != st.phase) ||
          index < st.from || index >= st.to) {
        s.step++;
        continue;
      }
      const bool indexed = st.barrier >= 0 || st.offset != 0;
      switch (st.kind) {
        case StepKind::Run:
        case StepKind::Issue: {
          if (indexed && (index < 0 || index >= k_.tiles)) {
            s.step++;
            continue;
          }
          // Non-TMA copies are issued by the role's own threads (cp.async, or ld.global +
          // st.shared): that costs issue slots before the data moves.
          if (st.unit == Unit::Copy && !st.store && st.engine != CopyEngine::Tma && !s.issue_cost_paid) {
            static const Step kIssueCost = sim::run(Unit::Fma, 0, "copy issue");
            const double instructions = st.engine == CopyEngine::CpAsync ? 1.0 : 2.0;  // + st.shared
            const double lane_ops = st.amount / 16.0 * instructions * rates_.lsu_weight;
            Op op;
            op.role = r;
            op.cta = s.cta;
            op.unit = Unit::Fma;
            op.remaining = std::max(lane_ops / rates_.fma_per_ns, kEps);
            op.cap = std::min(1.0, k_.roles[s.role].warps / 4.0);
            op.start_ns = now_;
            op.step = &kIssueCost;
            if (s.cta == 0) result_.fma_ops += lane_ops;
            ops_.push_back(op);
            s.issue_cost_paid = true;
            s.status = Status::BlockedOp;
            s.blocked_since = now_;
            return;
          }
          s.issue_cost_paid = false;
          if (st.kind == StepKind::Run) {
            start_op(r, st, true, -1, 0);
            s.status = Status::BlockedOp;
            s.blocked_since = now_;
            return;
          }
          start_op(r, st, false, st.barrier, index);
          s.step++;
          continue;
        }
        case StepKind::Wait:
          if (index >= k_.tiles || barrier_done(s.cta, st.barrier, index)) {
            s.step++;
            continue;
          }
          s.status = Status::BlockedWait;
          s.wait_barrier = st.barrier;
          s.wait_index = index;
          s.blocked_since = now_;
          waiters_[std::size_t(s.cta) * k_.barriers.size() + st.barrier].push_back(r);
          return;
        case StepKind::Arrive:
          s.step++;
          do_arrive(s.cta, st.barrier, index);
          continue;
        case StepKind::Delay:
          s.status = Status::BlockedDelay;
          s.blocked_since = now_;
          timed_.push({now_ + std::max(st.amount, 0.0), seq_++, r, s.cta, -1, 0, false});
          return;
      }
    }
  }

  // The copy path serves requests in issue order (an SM's memory requests return roughly in
  // order, so an early tile is not slowed by the prefetches queued behind it); the compute
  // pipes interleave warps, so their capacity is split max-min fairly among active ops.
  void assign_rates() {
    std::size_t first_hbm = ops_.size(), first_port = ops_.size();
    for (std::size_t i = 0; i < ops_.size(); ++i)
      if (ops_[i].unit == Unit::Copy) {
        Op& op = ops_[i];
        op.rate = op.port_rate = 0;
        if (op.remaining > 0 && (first_hbm == ops_.size() || op.order < ops_[first_hbm].order)) first_hbm = i;
        if (op.port_remaining > 0 && (first_port == ops_.size() || op.order < ops_[first_port].order)) first_port = i;
      }
    if (first_hbm < ops_.size()) ops_[first_hbm].rate = ops_[first_hbm].cap;
    // wgmma's shared-memory operand reads and the TMA's writes of walk loads into the SM slow
    // each other, each to the share calibrate measured with both streaming.
    double walk_share = 0;  // of the port's time, the part the SM's walk rate sets
    if (first_port < ops_.size()) {
      Op& copy = ops_[first_port];
      copy.port_rate = copy.cap;
      walk_share = copy.port_share;
      if (walk_share > 0 && rates_.walk_beside_wgmma < 1 &&
          std::any_of(ops_.begin(), ops_.end(), [](const Op& o) { return o.unit == Unit::Tensor; }))
        copy.port_rate = std::min(copy.cap, rates_.walk_beside_wgmma / copy.port_share);
    }
    for (int u = 1; u < kUnitCount; ++u) {
      scratch_.clear();
      for (std::size_t i = 0; i < ops_.size(); ++i)
        if (int(ops_[i].unit) == u) scratch_.push_back(i);
      std::sort(scratch_.begin(), scratch_.end(), [&](std::size_t a, std::size_t b) { return ops_[a].cap < ops_[b].cap; });
      double left = 1.0;
      if (u == int(Unit::Tensor) && walk_share > 0) {
        // Wide wgmmas (N >= 256) keep the share measured for them; any narrower or unknown one
        // running sets the general share.
        const bool wide = std::all_of(scratch_.begin(), scratch_.end(),
                                      [&](std::size_t i) { return ops_[i].step && ops_[i].step->mma_n >= 256; });
        left = 1.0 - (1.0 - (wide ? rates_.tensor_beside_walk_wide : rates_.tensor_beside_walk)) * walk_share;
      }
      std::size_t n = scratch_.size();
      for (std::size_t i : scratch_) {
        const double r = std::min(ops_[i].cap, left / double(n));
        ops_[i].rate = r;
        left -= r;
        --n;
      }
    }
  }

  void step_time() {
    assign_rates();
    double t_next = timed_.empty() ? INFINITY : timed_.top().time;
    for (const auto& op : ops_) {
      if (op.rate > 0 && op.remaining > 0) t_next = std::min(t_next, now_ + op.remaining / op.rate);
      if (op.port_rate > 0) t_next = std::min(t_next, now_ + op.port_remaining / op.port_rate);
    }
    const double dt = t_next - now_;
    if (dt > 0) {
      std::array<double, kUnitCount> used{};
      double port_used = 0;
      for (const auto& op : ops_) {
        used[int(op.unit)] += op.rate;
        port_used += op.port_rate;
      }
      used[int(Unit::Copy)] = std::max(used[int(Unit::Copy)], port_used);  // the busier of its two servers
      bool computing = false;
      for (int u = 0; u < kUnitCount; ++u) {
        result_.busy_ns[u] += std::min(1.0, used[u]) * dt;
        if (u != int(Unit::Copy) && used[u] > 0) computing = true;
      }
      if (loads_in_flight_ > 0) {
        result_.load_ns += dt;
        if (computing) result_.load_hidden_ns += dt;
      }
      for (auto& op : ops_) {
        op.remaining -= op.rate * dt;
        op.port_remaining -= op.port_rate * dt;
      }
    }
    now_ = t_next;
    const auto done = [&](double remaining, double rate) { return remaining <= kEps * std::max(1.0, rate) + 1e-12 * now_; };
    for (std::size_t i = 0; i < ops_.size();) {
      Op& op = ops_[i];
      if (done(op.port_remaining, op.port_rate)) op.port_remaining = 0;
      if (op.unit == Unit::Copy && done(op.remaining, op.rate)) op.remaining = 0;
      if (done(op.remaining, op.rate) && op.port_remaining == 0) {
        finish_transfer(op);
        ops_[i] = ops_.back();
        ops_.pop_back();
      } else {
        ++i;
      }
    }
    while (!timed_.empty() && timed_.top().time <= now_ + kEps) {
      const Timed t = timed_.top();
      timed_.pop();
      if (t.load_done) --loads_in_flight_;
      if (t.walk_in_flight) --*t.walk_in_flight;
      walk_bytes_in_flight_ -= t.walk_bytes;
      if (t.role >= 0) wake(t.role);
      else if (t.barrier >= 0) do_arrive(t.cta, t.barrier, t.index);
    }
  }

  void finish_transfer(const Op& op) {
    if (trace_ && op.cta == 0 && op.step)
      trace_->push_back({fmt::format("unit {}", unit_name(op.unit)), op.step->label, op.start_ns, now_, true});
    const double lands = std::max(now_ + op.latency_ns, op.not_before_ns);
    if (lands > now_) {
      timed_.push({lands, seq_++, op.role, op.cta, op.barrier, op.index, op.is_load, op.walk_in_flight, op.walk_bytes});
      return;
    }
    if (op.walk_in_flight) --*op.walk_in_flight;
    walk_bytes_in_flight_ -= op.walk_bytes;
    if (op.is_load) --loads_in_flight_;
    if (op.role >= 0) wake(op.role);
    else if (op.barrier >= 0) do_arrive(op.cta, op.barrier, op.index);
  }

  void wake(int r) {
    RoleState& s = roles_[r];
    if (s.status == Status::BlockedOp || s.status == Status::BlockedDelay) {
      const auto& steps = segment_steps(s);
      if (s.step < steps.size()) record_role(s, s.issue_cost_paid ? "copy issue" : steps[s.step].label, s.blocked_since, now_);
      if (!s.issue_cost_paid) s.step++;
      s.status = Status::Ready;
      ready_.push_back(r);
    }
  }

  void record_role(const RoleState& s, const std::string& name, double start, double end) {
    if (!trace_ || s.cta != 0 || end <= start) return;
    trace_->push_back({fmt::format("cta{} {}", s.cta, k_.roles[s.role].name), name, start, end, false});
  }

  const HardwareProfile& hw_;
  const KernelSpec& k_;
  Rates rates_;
  std::vector<TraceEvent>* trace_;
  const double cold_first_load_ns_;  // the first wave's loads land this long after its start at the earliest (0: no cold start)
  std::vector<RoleState> roles_;
  std::vector<int> ready_;
  std::vector<Op> ops_;
  std::priority_queue<Timed, std::vector<Timed>, std::greater<Timed>> timed_;
  std::vector<std::vector<int>> counts_;
  std::vector<std::vector<int>> waiters_;
  std::vector<std::size_t> scratch_;
  std::map<std::string, int> walk_in_flight_;  // each walked tensor's loads issued and not landed (by load)
  int loads_in_flight_ = 0;
  double walk_bytes_in_flight_ = 0;  // walk loads' bytes issued and not landed, of every tensor
  std::uint64_t seq_ = 0;
  double now_ = 0;
  SmResult result_;
  SmResult discard_;  // totals of CTAs other than CTA 0 (all CTAs run the same program)
};

}  // namespace

SmResult simulate_sm(const HardwareProfile& hw, const KernelSpec& kernel, int ctas_on_sm, double active_sms,
                     std::vector<TraceEvent>* trace, bool cold_start, double launch_sms) {
  OVERLAP_REQUIRE(ctas_on_sm >= 1, "kernel '{}': no CTA on the SM", kernel.name);
  return SmSimulation(hw, kernel, ctas_on_sm, active_sms, trace, cold_start, launch_sms).run();
}

}  // namespace overlap::sim
