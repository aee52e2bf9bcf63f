#include "sim/predictions_doc.hpp"

#include <functional>
#include <optional>

#include <fmt/format.h>

#include "core/error.hpp"
#include "sim/api.hpp"
#include "sim/variants.hpp"
#include "sim/varlen.hpp"

namespace overlap::sim {
namespace {

const std::vector<std::string> kGpus = {"T4", "A100", "H100", "H200", "B200"};

struct Outcome {
  std::optional<Prediction> p;
  std::string why_not;
};

class Doc {
 public:
  Doc() {
    for (const auto& g : kGpus) hw_.push_back(load_profile(g));
  }

  Outcome run(std::size_t gpu, const std::string& workload, const std::string& variant, const std::string& shape_text) {
    const ShapeArgs shape = parse_shape(workload, shape_text);
    const std::string why = cannot_run(hw_[gpu], workload, variant, shape);
    if (!why.empty()) return {std::nullopt, why};
    return {predict(hw_[gpu], workload, variant, shape), {}};
  }

  // A table of times (rows: variants, columns: GPUs), then the n/a reasons.
  void time_table(const std::string& workload, const std::vector<std::string>& variants, const std::string& shape,
                  const std::function<std::string(std::size_t)>& shape_for = {}) {
    out_ += "| variant |";
    for (const auto& g : kGpus) out_ += " " + g + " |";
    out_ += "\n|---|";
    for (std::size_t i = 0; i < kGpus.size(); ++i) out_ += "---:|";
    out_ += "\n";
    std::vector<std::string> notes;
    for (const auto& v : variants) {
      out_ += "| `" + v + "` |";
      for (std::size_t g = 0; g < kGpus.size(); ++g) {
        const Outcome o = run(g, workload, v, shape_for ? shape_for(g) : shape);
        if (o.p) {
          out_ += fmt::format(" {} ({}) |", time_text(o.p->time_us), o.p->bottleneck);
        } else {
          out_ += " n/a |";
          notes.push_back(fmt::format("`{}` on {}: {}", v, kGpus[g], o.why_not));
        }
      }
      out_ += "\n";
    }
    if (!notes.empty()) {
      out_ += "\nNot runnable (can_implement):\n";
      for (const auto& n : notes) out_ += "- " + n + "\n";
    }
    out_ += "\n";
  }

  // One hypothesis: speedup of `b` over `a` per GPU, with the model's one-line reason.
  // gla_backward: saved_states against materialized, the forward's extra state writes included.
  void saving_table(const std::string& shape_text) {
    const ShapeArgs shape = parse_shape("gla_backward", shape_text);
    out_ += "Saving the states, per GPU: the backward's time saved, the forward's extra writes, the net.\n\n";
    out_ += "| GPU | backward saves | forward writes more | net |\n|---|---:|---:|---:|\n";
    for (std::size_t g = 0; g < kGpus.size(); ++g) {
      const Outcome a = run(g, "gla_backward", "materialized", shape_text);
      const Outcome b = run(g, "gla_backward", "saved_states", shape_text);
      if (!a.p || !b.p) {
        out_ += fmt::format("| {} | n/a | n/a | n/a |\n", kGpus[g]);
        continue;
      }
      const double saved_us = a.p->time_us - b.p->time_us;
      const double extra_us = gla_saved_states_bytes(shape) / (hw_[g].hbm_bandwidth_GBps * 1e3);
      out_ += fmt::format("| {} | {} | {} | {} ({}) |\n", kGpus[g], time_text(saved_us), time_text(extra_us),
                          time_text(saved_us - extra_us), saved_us > extra_us ? "saving pays" : "recomputing pays");
    }
    out_ += "\n";
  }

  void hypothesis(const std::string& title, const std::string& workload, const std::string& a, const std::string& b,
                  const std::string& shape, const std::function<std::string(std::size_t)>& shape_for = {}) {
    out_ += fmt::format("**{}** (`{}` over `{}`)\n\n", title, b, a);
    for (std::size_t g = 0; g < kGpus.size(); ++g) {
      const std::string s = shape_for ? shape_for(g) : shape;
      const Outcome oa = run(g, workload, a, s), ob = run(g, workload, b, s);
      if (!oa.p || !ob.p) {
        out_ += fmt::format("- {}: not predicted ({})\n", kGpus[g], !oa.p ? a + ": " + oa.why_not : b + ": " + ob.why_not);
        continue;
      }
      const Comparison c = compare(*oa.p, *ob.p);
      out_ += fmt::format("- {}: **{:.2f}x** ({} -> {}). {}\n", kGpus[g], c.speedup, time_text(oa.p->time_us),
                          time_text(ob.p->time_us), c.reason);
    }
    out_ += "\n";
  }

  // gla training on the benchmark's variable-length batch against equal lengths, per GPU where
  // the kernels run (sim/varlen.hpp).
  void varlen_table(const std::vector<std::int64_t>& lengths, std::int64_t H, std::int64_t K, std::int64_t V) {
    out_ += fmt::format("H={}, K={}, V={}:\n\n", H, K, V);
    out_ += "| GPU | equal lengths | packed batch | per step, packed / equal |\n|---|---:|---:|---:|\n";
    const std::string dense = fmt::format("B=1,T=64,H={},K={},V={},h0=0,hT=0", H, K, V);
    for (std::size_t g = 0; g < kGpus.size(); ++g) {
      const std::string why = cannot_run(hw_[g], "gla_backward", "saved_states", parse_shape("gla_backward", dense));
      const std::string why_fwd = cannot_run(hw_[g], "gla", "pingpong_fused", parse_shape("gla", dense));
      if (!why.empty() || !why_fwd.empty()) {
        out_ += fmt::format("| {} | n/a | n/a | n/a |\n", kGpus[g]);
        continue;
      }
      const VarlenPrediction v = predict_gla_varlen_train(hw_[g], lengths, H, K, V);
      out_ += fmt::format("| {} | {} | {} | {:.3f} |\n", kGpus[g], time_text(v.equal_us), time_text(v.varlen_us),
                          v.per_step_ratio);
    }
    out_ += "\n";
  }

  std::string& text() { return out_; }
  static std::string time_text(double us) {
    return us >= 1000 ? fmt::format("{:.2f} ms", us * 1e-3) : fmt::format("{:.1f} us", us);
  }

 private:
  std::vector<HardwareProfile> hw_;
  std::string out_;
};

void gla_section(Doc& d) {
  auto& o = d.text();
  const std::string shape = reference_shape("gla");
  o += "## gla: pipelining, pingpong, and how chunk states travel\n\n";
  o += fmt::format("Shape `{}` (the full-size case of issue 3).\n\n", shape);
  const std::vector<std::string> vs = {"sequential_fused", "pipelined_fused", "pingpong_fused",
                                       "sequential_materialized", "pipelined_materialized", "pingpong_materialized"};
  d.time_table("gla", vs, shape);
  d.hypothesis("Software pipelining pays", "gla", "sequential_fused", "pipelined_fused", shape);
  d.hypothesis("Pingpong warp specialization pays over pipelining", "gla", "pipelined_fused", "pingpong_fused", shape);
  d.hypothesis("Keeping the state on chip beats materializing it (pipelined)", "gla", "pipelined_materialized",
               "pipelined_fused", shape);
  d.hypothesis("Keeping the state on chip beats materializing it (pingpong)", "gla", "pingpong_materialized",
               "pingpong_fused", shape);
  // The benchmark's other shapes (bench/gpu/bench_gla.py): head dims 64, a long sequence with
  // few heads, a short one.
  for (const auto& [other, what] : std::vector<std::pair<std::string, std::string>>{
           {"B=4,T=4096,H=32,K=64,V=64,h0=0,hT=0", "head dims 64"},
           {"B=2,T=16384,H=16,K=128,V=128,h0=0,hT=0", "a long sequence, 32 heads"},
           {"B=4,T=1024,H=32,K=64,V=64,h0=0,hT=0", "a short sequence"}}) {
    o += fmt::format("At `{}` ({}):\n\n", other, what);
    d.time_table("gla", vs, other);
    d.hypothesis("Pingpong warp specialization pays over pipelining", "gla", "pipelined_fused", "pingpong_fused",
                 other);
  }
}

void gla_backward_section(Doc& d) {
  auto& o = d.text();
  o += "## gla_backward: the gradients (issue 18)\n\n";
  o += "`materialized`: a forward walk writes every S_n, a backward walk writes every dS_n, and one CTA per chunk "
       "forms dq, dk, dv, dg (cuda/gla/gla_backward_common.cuh). `saved_states`: the forward saves every S_n "
       "instead (bf16, B H NT K V elements more written), and the backward runs the last two passes. Whether saving "
       "pays is the backward's saving against the forward's extra writes, charged here at the profile's HBM "
       "bandwidth. `saved_states_ws`: `saved_states` with the chunk pass warp-specialized (a persistent CTA an SM "
       "whose producer warpgroup loads the next chunk's inputs into the buffers the compute warps have freed, "
       "cuda/gla/gla_chunk_grad_ws_kernel.cuh), against a CTA a chunk that loads its own. The benchmark's shapes "
       "(bench/gpu/bench_gla_train.py), no h0 or dhT:\n\n";
  for (const auto& shape : std::vector<std::string>{"B=8,T=4096,H=16,K=128,V=128,h0=0,hT=0",
                                                   "B=4,T=4096,H=32,K=64,V=64,h0=0,hT=0"}) {
    o += fmt::format("Shape `{}`:\n\n", shape);
    d.time_table("gla_backward", {"materialized", "saved_states", "saved_states_ws"}, shape);
    d.saving_table(shape);
    d.hypothesis("Warp-specializing the chunk pass pays", "gla_backward", "saved_states", "saved_states_ws", shape);
  }
  const std::vector<std::int64_t> lengths = gla_varlen_bench_lengths();
  std::int64_t steps = 0;
  for (auto n : lengths) steps += n;
  o += fmt::format(
      "### A variable-length batch\n\nForward (`pingpong_fused`, saving the states) and `saved_states` backward on "
      "the benchmark's packed batch (bench/gpu/bench_gla_varlen.py: 64 sequences of 1 to 8192 steps, {} in all), "
      "against the same steps as 64 equal sequences. Each kernel's cost per chunk (walks) or per CTA (chunk "
      "grads) comes from its prediction on the equal batch; the packed batch's CTAs are list-scheduled onto the "
      "CTA slots longest walk first, as the kernels issue them (sim/varlen.hpp). Issue 18's goal: at most 1.10 "
      "per step.\n\n",
      steps);
  d.varlen_table(lengths, 16, 128, 128);
  d.varlen_table(lengths, 32, 64, 64);
}

void linrnn_section(Doc& d) {
  auto& o = d.text();
  o += "## linrnn: where the scan and the projection should live\n\n";
  const std::vector<std::string> vs = {"three_kernel", "semi_fused", "full_fused", "chunk_fused"};
  for (const auto& shape : std::vector<std::string>{reference_shape("linrnn"), "B=16,T=2048,d=256,dv=64,h0=0,hT=0",
                                                   "B=8,T=4096,d=1024,dv=1024,h0=0,hT=0"}) {
    o += fmt::format("Shape `{}`:\n\n", shape);
    d.time_table("linrnn", vs, shape);
  }
  const std::string ref = reference_shape("linrnn");
  d.hypothesis("Fusing scan and gate pays", "linrnn", "three_kernel", "semi_fused", ref);
  d.hypothesis("Per-timestep full fusion loses", "linrnn", "semi_fused", "full_fused", ref);
  d.hypothesis("Chunked fusion wins", "linrnn", "semi_fused", "chunk_fused", ref);
  d.hypothesis("Chunked fusion at the large shape", "linrnn", "semi_fused", "chunk_fused",
               "B=8,T=4096,d=1024,dv=1024,h0=0,hT=0");
}

// Where fusion stops paying: per GPU, the fused GEMM's gain over the wide GEMM + activation
// kernels across N, what bounds the wide GEMM, and the first N where the gain drops below 5%.
void crossover_summary(Doc& d) {
  auto& o = d.text();
  o += "**Crossover in N** (`epilogue_fused` over `wide_gemm`, B=4, d=2048, H=16, dk=128; N = 4T):\n\n";
  for (std::size_t g = 0; g < kGpus.size(); ++g) {
    std::string series, first_small;
    for (const int T : {128, 256, 512, 1024, 2048, 4096, 8192, 16384}) {
      const std::string shape = fmt::format("B=4,T={},d=2048,H=16,dk=128", T);
      const Outcome a = d.run(g, "projchain", "wide_gemm", shape), b = d.run(g, "projchain", "epilogue_fused", shape);
      if (!a.p || !b.p) continue;
      const double gain = a.p->time_us / b.p->time_us;
      const std::string wide_bound = a.p->kernels.front().bottleneck;
      series += fmt::format("{}N={}: {:.2f}x (GEMM {})", series.empty() ? "" : ", ", 4 * T, gain, wide_bound);
      if (first_small.empty() && gain < 1.05) first_small = fmt::format("{}", 4 * T);
    }
    o += fmt::format("- {}: {}. {}\n", kGpus[g], series.empty() ? "not predicted" : series,
                     first_small.empty() ? "Fusion gains at least 5% at every N here: the activation kernels' HBM "
                                           "round trip and launches are never hidden."
                                         : "Gain below 5% from N=" + first_small +
                                               ": the wide GEMM's own time dominates the activations' round trip.");
  }
  o += "\n";
}

void projchain_section(Doc& d) {
  auto& o = d.text();
  o += "## projchain: does fusion pay, and where is the crossover in N = B*T\n\n";
  const std::vector<std::string> vs = {"unfused", "wide_gemm", "epilogue_fused", "cluster_fused"};
  for (const int T : {512, 1024, 2048, 4096}) {
    const std::string shape = fmt::format("B=4,T={},d=2048,H=16,dk=128", T);
    o += fmt::format("Shape `{}` (N = {}):\n\n", shape, 4 * T);
    d.time_table("projchain", vs, shape);
    d.hypothesis(fmt::format("Epilogue fusion over the wide GEMM at N={}", 4 * T), "projchain", "wide_gemm",
                 "epilogue_fused", shape);
  }
  const std::string ref = reference_shape("projchain");
  o += fmt::format("Reference shape `{}` (N = 32768):\n\n", ref);
  d.time_table("projchain", vs, ref);
  d.hypothesis("One wide GEMM over five", "projchain", "unfused", "wide_gemm", ref);
  d.hypothesis("Epilogue fusion over the wide GEMM", "projchain", "wide_gemm", "epilogue_fused", ref);
  d.hypothesis("Cluster fusion over epilogue fusion", "projchain", "epilogue_fused", "cluster_fused", ref);
  crossover_summary(d);
}

void dualgemm_section(Doc& d) {
  auto& o = d.text();
  o += "## dualgemm: tile size, stages, warp specialization, TMA store\n\n";
  o += "Operand format per GPU: T4 and A100 bf16 (fp16 on T4), H100 fp8 e4m3, B200 NVFP4 (`fmt` = 0 / 0 / 1 / 2).\n\n";
  const auto shape_for = [](const std::string& mnk) {
    return [mnk](std::size_t g) { return mnk + (g == 2 ? ",fmt=1" : g == 3 ? ",fmt=2" : ",fmt=0"); };
  };
  std::vector<std::string> vs;
  for (const auto& v : list_variants("dualgemm")) vs.push_back(v.name);
  for (const auto& mnk : std::vector<std::string>{"M=256,N=4096,K=7168", "M=512,N=4096,K=7168", "M=256,N=3072,K=4096",
                                                  "M=512,N=3072,K=7168"}) {
    o += fmt::format("### `{}`\n\n", mnk);
    d.time_table("dualgemm", vs, "", shape_for(mnk));
    const std::string base = "tile128x128_stages4_ws";
    d.hypothesis("Smaller tiles fill more SMs", "dualgemm", base, "tile64x128_stages4_ws", "", shape_for(mnk));
    d.hypothesis("Smallest tiles", "dualgemm", base, "tile64x64_stages4_ws", "", shape_for(mnk));
    d.hypothesis("128x96 tiles, 5 stages (3072 columns in 32 tiles: 128 CTAs at M = 512)", "dualgemm", base,
                 "tile128x96_stages5_ws", "", shape_for(mnk));
    d.hypothesis("Fewer stages", "dualgemm", base, "tile128x128_stages2_ws", "", shape_for(mnk));
    d.hypothesis("One stage (no load/MMA overlap)", "dualgemm", base, "tile128x128_stages1_ws", "", shape_for(mnk));
    d.hypothesis("More stages (128x64 tiles: 4 to 6)", "dualgemm", "tile128x64_stages4_ws", "tile128x64_stages6_ws", "",
                 shape_for(mnk));
    d.hypothesis("Warp specialization (baseline) over one warpgroup doing TMA and MMA", "dualgemm",
                 "tile128x128_stages4_nows", base, "", shape_for(mnk));
    d.hypothesis("TMA-store epilogue", "dualgemm", base, "tile128x128_stages4_ws_tmastore", "", shape_for(mnk));
    d.hypothesis("2x2 cluster multicast (128x64, 6 stages)", "dualgemm", "tile128x64_stages6_ws",
                 "tile128x64_stages6_ws_c2x2", "", shape_for(mnk));
    d.hypothesis("2x1 cluster multicast of B (128x128)", "dualgemm", base, "tile128x128_stages4_ws_c2x1", "",
                 shape_for(mnk));
    d.hypothesis("A stage freed as soon as its MMAs are done (128x64, 6 stages)", "dualgemm",
                 "tile128x64_stages6_ws", "tile128x64_stages6_ws_eager", "", shape_for(mnk));
    d.hypothesis("Loads two k-blocks at a time (128x64, 6 stages)", "dualgemm", "tile128x64_stages6_ws",
                 "tile128x64_stages6_ws_pairs", "", shape_for(mnk));
    d.hypothesis("B prefetched into L2 8 k-blocks ahead (128x64, 6 stages, TMA store)", "dualgemm",
                 "tile128x64_stages6_ws_tmastore", "tile128x64_stages6_ws_tmastore_pf8", "", shape_for(mnk));
    d.hypothesis("Two K atoms a TMA box (3 stages of 64 KiB for 6 of 32; 128x64, TMA store)", "dualgemm",
                 "tile128x64_stages6_ws_tmastore", "tile128x64_stages3_ws_tmastore_k2", "", shape_for(mnk));
    d.hypothesis("A seventh stage (128x64, no TMA store)", "dualgemm", "tile128x64_stages6_ws", "tile128x64_stages7_ws",
                 "", shape_for(mnk));
    d.hypothesis("128x48 tiles, 7 stages (3072 columns in 64 tiles: 128 CTAs at M = 256)", "dualgemm",
                 "tile128x64_stages6_ws", "tile128x48_stages7_ws", "", shape_for(mnk));
    for (const auto& [tile, v] : {std::pair{"128x48", "tile128x48_stages7_ws"}, std::pair{"128x64", "tile128x64_stages7_ws"},
                                  std::pair{"64x64", "tile64x64_stages4_ws"}})
      d.hypothesis(fmt::format("Two producer warps issuing alternate k-blocks ({})", tile), "dualgemm", v,
                   fmt::format("{}_p2", v), "", shape_for(mnk));
    d.hypothesis("TMA-store epilogue (128x48, 7 stages)", "dualgemm", "tile128x48_stages7_ws", "tile128x48_stages7_ws_tmastore",
                 "", shape_for(mnk));
    for (const auto& v : {"tile128x48_stages7_ws", "tile128x48_stages7_ws_tmastore", "tile128x64_stages7_ws"})
      d.hypothesis(fmt::format("fp8 scales loaded before the k-loop ({})", v), "dualgemm", v, fmt::format("{}_es", v), "",
                   shape_for(mnk));
    d.hypothesis("The first fill before the CTA's barrier, the last TMA store waited for its reads only (128x48)", "dualgemm",
                 "tile128x48_stages7_ws_tmastore_es", "tile128x48_stages7_ws_tmastore_es_lean", "", shape_for(mnk));
    d.hypothesis("Early scales and lean edges at 128x64 (6 stages, TMA store)", "dualgemm", "tile128x64_stages6_ws_tmastore",
                 "tile128x64_stages6_ws_tmastore_es_lean", "", shape_for(mnk));
  }
}

}  // namespace

std::string predictions_markdown() {
  Doc d;
  auto& o = d.text();
  o += "# Pre-registered predictions\n\n";
  o += "Generated by `overlap predictions --out docs/predictions.md` from the simulator (`sim/`) and the "
       "hardware profiles (`profiles/`); do not edit by hand. These are the model's predictions for every "
       "hypothesis in SPEC. The file is regenerated and committed whenever the model changes, and before a "
       "new kernel is first timed (its registration): the commit that adds a kernel's prediction precedes "
       "the commit with its first measurement, and the GPU results are judged against it. Earlier "
       "registrations are in the file's git history.\n\n";
  o += "Each cell is the predicted time and the bottleneck unit (hbm, copy, tensor, fma, sfu, smem, launch, or "
       "latency when no unit is busy half the time). Each hypothesis line gives the predicted speedup of the "
       "second variant over the first and the model's one-line reason.\n\n";
  o += "Profiles:";
  for (const auto& g : kGpus) {
    const HardwareProfile hw = load_profile(g);
    o += fmt::format(" {} ({} SMs, {:.0f} GB/s, {:.0f} bf16 TFLOP/s);", g, hw.sm_count, hw.hbm_bandwidth_GBps,
                     hw.bf16_step_TFLOPs());
  }
  o += " sources in the profile files.\n\n";
  gla_section(d);
  gla_backward_section(d);
  linrnn_section(d);
  projchain_section(d);
  dualgemm_section(d);
  return o;
}

}  // namespace overlap::sim
