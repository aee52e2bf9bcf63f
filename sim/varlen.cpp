#include "sim/varlen.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <queue>

#include <fmt/format.h>

#include "core/error.hpp"
#include "sim/api.hpp"
#include "sim/variants.hpp"

namespace overlap::sim {
namespace {

constexpr std::int64_t kChunk = 64;  // the kernels' chunk (cuda/gla/gla_varlen.cuh)

std::int64_t chunks(std::int64_t steps) { return (steps + kChunk - 1) / kChunk; }

// Finish time of CTAs of the given durations issued in order onto `slots` CTA slots, each to
// the slot that frees first.
double list_schedule(std::vector<double> durations, std::int64_t slots) {
  std::priority_queue<double, std::vector<double>, std::greater<>> free_at;
  for (std::int64_t i = 0; i < slots; ++i) free_at.push(0.0);
  double end = 0;
  for (double d : durations) {
    const double start = free_at.top();
    free_at.pop();
    free_at.push(start + d);
    end = std::max(end, start + d);
  }
  return end;
}

}  // namespace

std::vector<std::int64_t> gla_varlen_bench_lengths() {
  std::vector<std::int64_t> out;
  for (int i = 0; i < 64; ++i)
    out.push_back(std::max<std::int64_t>(1, std::llround(8192.0 * std::pow(i / 63.0, 3))));
  return out;
}

VarlenPrediction predict_gla_varlen_train(const HardwareProfile& hw, const std::vector<std::int64_t>& lengths,
                                          std::int64_t H, std::int64_t K, std::int64_t V) {
  OVERLAP_REQUIRE(!lengths.empty(), "gla varlen model: no sequences");
  for (std::int64_t n : lengths) OVERLAP_REQUIRE(n >= 0, "gla varlen model: a length of {} (must be >= 0)", n);
  const auto N = static_cast<std::int64_t>(lengths.size());
  VarlenPrediction r;
  r.steps = std::accumulate(lengths.begin(), lengths.end(), std::int64_t{0});
  OVERLAP_REQUIRE(r.steps > 0, "gla varlen model: every sequence is empty");
  r.equal_T = std::max<std::int64_t>(1, std::llround(double(r.steps) / double(N)));
  // The kernels walk the sequences longest first.
  std::vector<std::int64_t> order = lengths;
  std::sort(order.begin(), order.end(), std::greater<>());

  const std::string dense = fmt::format("B={},T={},H={},K={},V={},h0=0,hT=0", N, r.equal_T, H, K, V);
  std::vector<KernelPrediction> kernels = predict(hw, "gla", "pingpong_fused", parse_shape("gla", dense)).kernels;
  for (const auto& k : predict(hw, "gla_backward", "saved_states", parse_shape("gla_backward", dense)).kernels)
    kernels.push_back(k);
  const std::int64_t equal_chunks = chunks(r.equal_T);
  // Before its loads, every CTA of a varlen kernel looks up its sequence in the plan: two
  // dependent reads of small tables that stay in L2 (the chunk grads: chunk_seq[c], then the
  // sequence's offsets and chunk_begin; a walk or the forward: order[i], then the same).
  const double lookup_us = 2 * hw.l2_latency_cycles * hw.cycle_ns() * 1e-3;
  for (const KernelPrediction& k : kernels) {
    const std::int64_t slots = static_cast<std::int64_t>(hw.sm_count) * std::max(1, k.ctas_per_sm);
    const std::int64_t waves = k.full_waves + (k.tail_ctas > 0 ? 1 : 0);
    const double per_cta = (k.time_us - k.launch_us) / double(std::max<std::int64_t>(1, waves));
    std::vector<double> durations;
    if (k.name == "gla_backward_chunk_grads") {  // one CTA per (sequence, head, chunk)
      for (std::int64_t n : order) durations.insert(durations.end(), std::size_t(chunks(n) * H), per_cta + lookup_us);
    } else {  // walks: the equal batch's CTAs per sequence, each over its sequence's chunks
      const std::int64_t per_sequence = k.ctas / N;
      for (std::int64_t n : order)
        durations.insert(durations.end(), std::size_t(per_sequence),
                         per_cta * double(chunks(n)) / double(equal_chunks) + lookup_us);
    }
    r.kernels.push_back({k.name, k.time_us, list_schedule(durations, slots) + k.launch_us});
  }
  // The forward's extra writes of the saved states (as the saving table charges them) and the
  // plan kernel each direction launches.
  std::int64_t varlen_chunks = 0;
  for (std::int64_t n : lengths) varlen_chunks += chunks(n);
  const double per_chunk_us = double(H * K * V * 2) / (hw.hbm_bandwidth_GBps * 1e3);
  r.kernels.push_back({"saved state writes", double(N * equal_chunks) * per_chunk_us, double(varlen_chunks) * per_chunk_us});
  r.kernels.push_back({"gla_varlen_plan (x2)", 0.0, 2 * hw.launch_overhead_us});
  for (const auto& k : r.kernels) r.equal_us += k.equal_us, r.varlen_us += k.varlen_us;
  r.per_step_ratio = (r.varlen_us / double(r.steps)) / (r.equal_us / double(N * r.equal_T));
  return r;
}

}  // namespace overlap::sim
