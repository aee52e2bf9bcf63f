// `overlap predict | compare | predictions`: the simulator's commands.
//   predict      one variant on one GPU (table, --json, --trace), or a sweep over shapes
//                (--sweep KEY=FROM:TO:x2), variants (--variant a,b / all) and GPUs (--hw all)
//   compare      speedup of variant b over a, with the reason in one line
//   predictions  writes docs/predictions.md
//   tune         every variant at one shape, ranked by predicted time; the pick and its bottleneck
#include <unistd.h>

#include <fmt/core.h>
#include <fmt/format.h>

#include <memory>

#include "app/commands.hpp"
#include "core/error.hpp"
#include "sim/api.hpp"
#include "sim/predictions_doc.hpp"
#include "sim/schedule_file.hpp"
#include "sim/sweep.hpp"
#include "sim/tune.hpp"
#include "sim/variants.hpp"
#include "vectors/safetensors.hpp"

namespace overlap::app {
namespace {

// "gla, gla_backward, ..., dualgemm": the workloads the model knows.
std::string workload_list() { return fmt::format("{}", fmt::join(sim::workload_names(), ", ")); }

void emit(const std::string& text, const std::string& out) {
  if (out.empty()) fmt::print("{}", text);
  else write_text_atomic(out, text);
}

struct PredictArgs {
  std::string hw = "H100", workload, variant, shape, trace, schedule, format = "table", out;
  std::vector<std::string> sweeps;
  bool json = false;
};

void run_predict(const PredictArgs& a) {
  if (!a.schedule.empty()) {
    OVERLAP_REQUIRE(a.sweeps.empty(), "--schedule predicts one configuration; drop --sweep");
    const sim::ScheduleFile file = sim::read_schedule_file(a.schedule);
    OVERLAP_REQUIRE(a.workload.empty() || a.workload == file.workload,
                    "--workload {} does not match the schedule file's workload {}", a.workload, file.workload);
    const sim::HardwareProfile hw = sim::load_profile(a.hw);
    const ShapeArgs shape = sim::parse_shape(file.workload, a.shape);
    sim::PredictOptions opt;
    opt.trace_path = a.trace;
    const sim::Prediction p =
        sim::predict_kernels(hw, file.workload, file.name, shape, sim::build_schedule(file, hw, shape), opt);
    emit(a.json ? p.to_json().dump(2) + "\n" : sim::format_prediction(p), a.out);
    return;
  }
  OVERLAP_REQUIRE(!a.workload.empty(), "--workload is required (one of {})", workload_list());
  OVERLAP_REQUIRE(!a.variant.empty(), "--variant is required (see `overlap list`)");
  const auto hws = sim::profile_list(a.hw);
  const auto variants = sim::variant_list(a.workload, a.variant);
  const bool single = a.sweeps.empty() && hws.size() == 1 && variants.size() == 1;
  if (single) {
    const sim::HardwareProfile hw = sim::load_profile(hws[0]);
    sim::PredictOptions opt;
    opt.trace_path = a.trace;
    const sim::Prediction p = sim::predict(hw, a.workload, variants[0], sim::parse_shape(a.workload, a.shape), opt);
    emit(a.json ? p.to_json().dump(2) + "\n" : sim::format_prediction(p), a.out);
    return;
  }
  OVERLAP_REQUIRE(a.trace.empty(), "--trace needs a single configuration (no sweep)");
  std::vector<sim::SweepAxis> axes;
  for (const auto& s : a.sweeps) axes.push_back(sim::parse_sweep_axis(s));
  const auto configs = sim::expand_sweep(hws, variants, a.shape, axes);
  const bool show_progress = configs.size() >= 200;
  const std::size_t step = std::max<std::size_t>(1, configs.size() / 100);
  const auto rows = sim::run_sweep(a.workload, configs, [&](std::size_t done, std::size_t total) {
    if (show_progress && (done % step == 0 || done == total))
      fmt::print(stderr, "\rsweep: {}/{} configurations ({:.0f}%){}", done, total, 100.0 * double(done) / double(total),
                 done == total ? "\n" : "");
  });
  const std::string format = a.json ? "json" : a.format;
  if (format == "csv") emit(sim::sweep_csv(rows), a.out);
  else if (format == "json") emit(sim::sweep_json(rows).dump(2) + "\n", a.out);
  else if (format == "table") emit(sim::sweep_table(rows), a.out);
  else fail("--format '{}' is not table, csv or json", format);
}

struct CompareArgs {
  std::string hw = "H100", workload, variants, shape;
  bool json = false;
};

void run_compare(const CompareArgs& a) {
  const auto vs = sim::split_names(a.variants);
  OVERLAP_REQUIRE(vs.size() == 2, "--variants needs exactly two names, a,b (got '{}')", a.variants);
  nlohmann::json all = nlohmann::json::array();
  const auto hws = sim::profile_list(a.hw);
  for (const auto& h : hws) {
    const sim::HardwareProfile hw = sim::load_profile(h);
    const ShapeArgs shape = sim::parse_shape(a.workload, a.shape);
    if (hws.size() > 1) {  // over several GPUs, one that cannot run a variant is reported, not fatal
      std::string why;
      for (const auto& v : vs)
        if (why.empty() && !sim::cannot_run(hw, a.workload, v, shape).empty())
          why = v + ": " + sim::cannot_run(hw, a.workload, v, shape);
      if (!why.empty()) {
        if (a.json) all.push_back({{"hw", h}, {"error", why}});
        else fmt::print("{} on {}: not predicted ({})\n", a.workload, h, why);
        continue;
      }
    }
    const sim::Comparison c = sim::compare(sim::predict(hw, a.workload, vs[0], shape), sim::predict(hw, a.workload, vs[1], shape));
    if (a.json)
      all.push_back({{"hw", h}, {"a", c.a.to_json()}, {"b", c.b.to_json()}, {"speedup", c.speedup}, {"reason", c.reason}});
    else
      fmt::print("{}", sim::format_comparison(c));
  }
  if (a.json) fmt::print("{}\n", (all.size() == 1 ? all[0] : all).dump(2));
}

struct TuneArgs {
  std::string hw = "H100", workload, shape;
  bool json = false;
};

void run_tune(const TuneArgs& a) {
  const sim::TuneResult t = sim::tune(sim::load_profile(a.hw), a.workload, sim::parse_shape(a.workload, a.shape));
  fmt::print("{}", a.json ? sim::tune_json(t).dump(2) + "\n" : sim::format_tune(t));
}

}  // namespace

void register_predict_commands(CLI::App& app) {
  auto pa = std::make_shared<PredictArgs>();
  auto* p = app.add_subcommand("predict", "Predict a variant's time on a hardware profile (or sweep shapes/variants/GPUs)");
  p->add_option("--hw", pa->hw, "Profile name, a profile JSON file, a comma list, or 'all'")->capture_default_str();
  p->add_option("--workload", pa->workload, "One of " + workload_list());
  p->add_option("--variant", pa->variant, "Variant name, a comma list, or 'all' (see `overlap list`)");
  p->add_option("--shape", pa->shape, "Shape, e.g. B=4,T=4096,H=32,K=64,V=64 (missing keys take defaults)");
  p->add_option("--sweep", pa->sweeps, "KEY=FROM:TO:xFACTOR, KEY=FROM:TO:+STEP or KEY=A/B/C (repeatable)");
  p->add_option("--schedule", pa->schedule, "Predict a variant described in a schedule JSON file");
  p->add_option("--trace", pa->trace, "Write a Chrome trace-event JSON timeline (Perfetto) of one SM");
  p->add_option("--format", pa->format, "Sweep output: table, csv or json")->capture_default_str();
  p->add_option("--out", pa->out, "Write the output to this file (atomically) instead of stdout");
  p->add_flag("--json", pa->json, "Print JSON");
  p->callback([pa] { run_predict(*pa); });

  auto ca = std::make_shared<CompareArgs>();
  auto* c = app.add_subcommand("compare", "Predicted speedup of variant b over variant a, with the reason");
  c->add_option("--hw", ca->hw, "Profile name, a profile JSON file, a comma list, or 'all'")->capture_default_str();
  c->add_option("--workload", ca->workload, "One of " + workload_list())->required();
  c->add_option("--variants", ca->variants, "a,b")->required();
  c->add_option("--shape", ca->shape, "Shape, e.g. B=4,T=4096,H=32,K=64,V=64");
  c->add_flag("--json", ca->json, "Print JSON");
  c->callback([ca] { run_compare(*ca); });

  auto ta = std::make_shared<TuneArgs>();
  auto* tu = app.add_subcommand("tune", "Rank every variant of a workload at one shape by predicted time; print the pick");
  tu->add_option("--hw", ta->hw, "Profile name or a profile JSON file")->capture_default_str();
  tu->add_option("--workload", ta->workload, "One of " + workload_list())->required();
  tu->add_option("--shape", ta->shape, "Shape, e.g. M=256,N=4096,K=7168,fmt=1 (missing keys take defaults)");
  tu->add_flag("--json", ta->json, "Print JSON");
  tu->callback([ta] { run_tune(*ta); });

  auto out = std::make_shared<std::string>("docs/predictions.md");
  auto* d = app.add_subcommand("predictions", "Write the pre-registered predictions document");
  d->add_option("--out", *out, "Output file")->capture_default_str();
  d->callback([out] { write_text_atomic(*out, sim::predictions_markdown()); });
}

}  // namespace overlap::app
