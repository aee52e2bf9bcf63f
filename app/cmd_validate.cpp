// `overlap validate` and `overlap calibrate`: the third job. On a machine with a GPU, every
// compiled kernel variant runs on the shared test vectors (output poisoned, checked first),
// is timed (warm-up, events, L2 flushed, several input sets, median), and is predicted by the
// model for the GPU found; the report says how good the predictions were.
//
// Compiled twice. `overlap-gpu` (OVERLAP_WITH_CUDA) runs them and links the CUDA runtime,
// cuBLAS and every kernel. `overlap` links none of that, so its other commands start without
// mapping a CUDA library; its validate and calibrate parse the same options, then hand the
// command line to the `overlap-gpu` beside it (OVERLAP_GPU_TOOL), or say that this build has
// no CUDA.
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>

#if !defined(OVERLAP_WITH_CUDA) && defined(OVERLAP_GPU_TOOL)
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#endif

#include "app/commands.hpp"
#include "app/validate/validation_report.hpp"
#include "app/validate/validation_set.hpp"
#include "sim/api.hpp"
#include "vectors/vectors.hpp"

#ifdef OVERLAP_WITH_CUDA
#include "calibrate/calibrate.hpp"
#include "validate/gpu_variant.hpp"
#include "validate/run_variant.hpp"
#endif

namespace overlap::app {
namespace {

#ifdef OVERLAP_WITH_CUDA
std::string today() {
  const std::time_t t = std::time(nullptr);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

std::string slug(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '-';
  return s;
}

// The built-in profile closest to a GPU: by name, else by compute capability.
std::string closest_profile(const std::string& gpu_name, int compute_capability) {
  for (const auto& name : sim::builtin_profile_names())
    if (gpu_name.find(name) != std::string::npos) return name;
  if (compute_capability >= 100) return "B200";
  if (compute_capability >= 90) return "H100";
  if (compute_capability >= 80) return "A100";
  return "T4";
}

#endif  // OVERLAP_WITH_CUDA

// report.md, report.json and plot.svg into `dir`; the markdown to stdout as well. A report with
// a failed check exits 1.
void write_report(const ValidationReport& report, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  write_text_atomic(dir / "report.md", render_markdown(report));
  write_text_atomic(dir / "report.json", report_to_json(report).dump(2) + "\n");
  write_text_atomic(dir / "plot.svg", render_svg(report));
  fmt::print("{}", render_markdown(report));
  fmt::print("\nwrote {}/report.md, report.json, plot.svg\n", dir.string());
  if (report.summary.failed > 0) throw CLI::RuntimeError(1);
}

// The model's time and bottleneck for a row on `hw` (a row it cannot predict says why).
void predict_row(const sim::HardwareProfile& hw, const ShapeArgs& shape, ValidationRow& row) {
  try {
    const sim::Prediction p = sim::predict(hw, row.workload, row.variant, shape);
    row.predicted_us = p.time_us;
    row.bottleneck = p.bottleneck;
  } catch (const Error& e) {
    row.predicted_us = 0;
    row.bottleneck = std::string("no prediction: ") + e.what();
  }
}

struct ValidateOptions {
  std::vector<std::string> workloads, variants, shapes;
  std::string hw = "auto", out;
  bool quick = false;
  int runs = 15, sets = 3;
  std::uint64_t seed = 1;
};

#ifdef OVERLAP_WITH_CUDA
std::string gpu_name(int* cc) {
  cudaDeviceProp prop{};
  OVERLAP_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  *cc = prop.major * 10 + prop.minor;
  return prop.name;
}

// Expected outputs from the float64 oracle where it is affordable; above that, from the fp32
// fast reference, which the CPU tests hold to 1e-5 of the oracle.
ExpectedFrom expected_source(const ShapeArgs& shape) {
  double size = 1;
  for (const auto& [k, v] : shape.items()) size *= static_cast<double>(std::max<std::int64_t>(v, 1));
  return size <= 2e8 ? ExpectedFrom::Oracle : ExpectedFrom::FastReference;
}

ValidationReport run_validation(const ValidateOptions& o, const std::string& command) {
  std::vector<std::string> workloads = o.workloads;
  if (workloads.empty())
    for (const auto& v : gpu::gpu_variants())
      if (std::find(workloads.begin(), workloads.end(), v.workload) == workloads.end()) workloads.push_back(v.workload);

  require_validation_shapes(workloads, o.quick, o.shapes);
  OVERLAP_REQUIRE(gpu::device_count() > 0, "validate needs a CUDA GPU and found none");
  int cc = 0;
  ValidationReport report;
  report.gpu = gpu_name(&cc);
  report.date = today();
  report.command = command;
  const std::string profile_name = o.hw == "auto" ? closest_profile(report.gpu, cc) : o.hw;
  const sim::HardwareProfile hw = sim::load_profile(profile_name);
  report.profile = profile_name;

  gpu::TimingOptions timing;
  timing.runs_per_set = o.runs;
  for (const auto& workload : workloads) {
    const auto shapes = select_validation_shapes(workload, o.quick, o.shapes);
    for (std::size_t si = 0; si < shapes.size(); ++si) {
      const Workload& w = find_workload(workload);
      const ShapeArgs shape = w.parse_shape(shapes[si]);
      fmt::print(stderr, "[{} {}/{}] {}: building test vectors\n", workload, si + 1, shapes.size(), shape.to_string());
      const VectorSet set = load_vector_set(
          make_vector_set({.workload = workload, .shape = shape.to_string(), .seed = o.seed, .expected = expected_source(shape)}),
          "memory");
      std::vector<TensorMap> timing_sets{set.inputs};
      for (int s = 1; s < o.sets; ++s) timing_sets.push_back(w.make_inputs(shape, o.seed + 1000 * s, set.distribution));

      for (const auto& variant : gpu::gpu_variants()) {
        if (variant.workload != workload) continue;
        if (!o.variants.empty() && std::find(o.variants.begin(), o.variants.end(), variant.name) == o.variants.end())
          continue;
        if (auto why = variant.cannot_implement(shape)) {
          fmt::print(stderr, "    {:<24} skipped: {}\n", variant.name, *why);
          continue;
        }
        ValidationRow row{workload, variant.name, shape.to_string()};
        try {
          const auto run = gpu::run_variant(variant, set, timing_sets, timing);
          row.passed = run.passed;
          for (const auto& c : run.checks) {
            row.worst_rel_error = std::max(row.worst_rel_error, c.rel_error);
            if (!c.pass()) row.failure += (row.failure.empty() ? "" : "; ") + describe(c);
          }
          row.measured_us = run.timing.median_us;
          row.timed_runs = run.timing.runs;
        } catch (const Error& e) {
          row.passed = false;
          row.failure = e.what();
        }
        predict_row(hw, shape, row);
        fmt::print(stderr, "    {:<24} {}  measured {:>9.1f} us  predicted {:>9.1f} us\n", variant.name,
                   row.passed ? "pass" : "FAIL " + row.failure, row.measured_us, row.predicted_us);
        report.rows.push_back(row);
      }
    }
  }
  score(report);
  return report;
}

#elif defined(OVERLAP_GPU_TOOL)
// This binary does not run `what`: it replaces itself with the GPU tool beside it, same arguments.
[[noreturn]] void run_gpu_command(const char*) {
  const std::filesystem::path tool = std::filesystem::read_symlink("/proc/self/exe").parent_path() / OVERLAP_GPU_TOOL;
  OVERLAP_REQUIRE(std::filesystem::exists(tool), "{} is missing (it is built beside overlap where nvcc exists)",
                  tool.string());
  std::vector<std::string> args = invocation();
  args.at(0) = tool.string();
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  execv(tool.c_str(), argv.data());
  fail("could not run {}: {}", tool.string(), std::strerror(errno));
}
#else
// This binary does not run `what`, and no build of it does.
[[noreturn]] void run_gpu_command(const char* what) {
  fail("{} needs a build with CUDA (nvcc was not found when this overlap was configured)", what);
}
#endif  // OVERLAP_WITH_CUDA

}  // namespace

void register_validate_commands(CLI::App& app) {
  auto opts = std::make_shared<ValidateOptions>();
  auto* v = app.add_subcommand("validate", "Run every compiled GPU variant on the test vectors, time it, and compare with the model");
  v->add_option("--workload,-w", opts->workloads, "workloads to validate (default: every one with GPU variants)");
  v->add_option("--variants", opts->variants, "only these variants")->delimiter(',');
  v->add_option("--hw", opts->hw, "profile to predict with: auto (closest built-in to the GPU found), a name or a file");
  v->add_option("--out,-o", opts->out, "report directory (default docs/validation/<date>-<gpu>)");
  v->add_flag("--quick", opts->quick, "two small shapes per workload instead of the full set");
  v->add_option("--shapes", opts->shapes,
                "only these shapes of the set, ';' between them (e.g. 'B=8,T=4096,d=2048,H=16,dk=128')")
      ->delimiter(';');
  v->add_option("--runs", opts->runs, "timed runs per input set")->check(CLI::Range(1, 1000));
  v->add_option("--sets", opts->sets, "input sets timed in rotation")->check(CLI::Range(1, 16));
  v->add_option("--seed", opts->seed, "seed of the test vectors");
  v->callback([opts] {
#ifdef OVERLAP_WITH_CUDA
    std::string command = "overlap validate";
    for (const auto& w : opts->workloads) command += " --workload " + w;
    if (opts->quick) command += " --quick";
    for (const auto& s : opts->shapes) command += " --shapes '" + s + "'";
    if (opts->hw != "auto") command += " --hw " + opts->hw;
    const ValidationReport report = run_validation(*opts, command);
    const std::filesystem::path dir =
        opts->out.empty() ? std::filesystem::path("docs/validation") / (report.date + "-" + slug(report.gpu))
                          : std::filesystem::path(opts->out);
    write_report(report, dir);
#else
    run_gpu_command("validate");
#endif
  });

  // Several validate runs (one per workload, each within a machine's time limit) as the one
  // report they would have made together. No GPU needed.
  auto merge_inputs = std::make_shared<std::vector<std::string>>();
  auto merge_out = std::make_shared<std::string>();
  auto repredict = std::make_shared<bool>(false);
  auto median = std::make_shared<bool>(false);
  auto* m = app.add_subcommand("merge-reports", "Combine the report.json of several validate runs on one GPU into one report");
  m->add_option("reports", *merge_inputs, "report.json files; a later file's row replaces an earlier one's")
      ->required()
      ->check(CLI::ExistingFile);
  m->add_option("--out,-o", *merge_out, "report directory to write")->required();
  m->add_flag("--repredict", *repredict,
              "predict every row again with this build's model (same profile; the measurements stay)");
  m->add_flag("--median", *median,
              "a row measured in several reports (repeated runs, on one machine or several) takes the median of "
              "their times, instead of the last (a pair's speedup: the ratio of its rows' medians)");
  m->callback([merge_inputs, merge_out, repredict, median] {
    std::vector<ValidationReport> reports;
    for (const auto& path : *merge_inputs) {
      std::ifstream in(path);
      nlohmann::json j;
      try {
        j = nlohmann::json::parse(in);
      } catch (const nlohmann::json::exception& e) {
        throw Error(fmt::format("merge-reports: {} is not JSON ({})", path, e.what()));
      }
      try {
        reports.push_back(report_from_json(j));
      } catch (const Error& e) {
        throw Error(fmt::format("merge-reports: {}: {}", path, e.what()));
      }
    }
    ValidationReport report = merge_reports(reports, *median);
    if (*median) report.command += "; rows measured in several runs merged by their median (overlap merge-reports --median)";
    if (*repredict) {
      const sim::HardwareProfile hw = sim::load_profile(report.profile);
      for (ValidationRow& row : report.rows) predict_row(hw, sim::parse_shape(row.workload, row.shape), row);
      score(report);
      // Said once, last: every row's prediction, earlier runs' included, is this build's.
      const std::string note = "; predictions of every row re-made by overlap merge-reports --repredict";
      for (auto at = report.command.find(note); at != std::string::npos; at = report.command.find(note))
        report.command.erase(at, note.size());
      report.command += note;
    }
    write_report(report, *merge_out);
  });

  struct CalibrateOptions {
    std::string out, base = "auto";
    int repeats = 10;
  };
  auto copts = std::make_shared<CalibrateOptions>();
  auto* c = app.add_subcommand("calibrate", "Measure the GPU found and write a hardware profile derived from the closest built-in one");
  c->add_option("--out,-o", copts->out, "profile file to write (default profiles/calibrated-<gpu>.json)");
  c->add_option("--base", copts->base, "built-in profile to derive from (default: closest to the GPU found)");
  c->add_option("--repeats", copts->repeats, "timed repetitions per microbenchmark")->check(CLI::Range(3, 1000));
  c->callback([copts] {
#ifdef OVERLAP_WITH_CUDA
    const gpu::Calibration cal = gpu::calibrate_device({.repeats = copts->repeats});
    const std::string base = copts->base == "auto" ? closest_profile(cal.gpu_name, cal.compute_capability) : copts->base;
    const sim::HardwareProfile base_profile = sim::load_profile(base);
    nlohmann::ordered_json j;
    j["name"] = slug(cal.gpu_name) + "-calibrated";
    j["base"] = base;
    j["description"] = fmt::format("{} measured by overlap calibrate on {}", cal.gpu_name, today());
    fmt::print("{:<22} {:>12} {:>12}  {}\n", "field", base, "measured", "method");
    for (const auto& f : cal.fields) {
      j["fields"][f.field] = {{"value", f.value}, {"source", f.method + ", " + today()}};
      double base_value = 0;
      for (const auto& pf : sim::profile_fields())
        if (pf.name == f.field) base_value = base_profile.*(pf.member);
      fmt::print("{:<22} {:>12.4g} {:>12.4g}  {}\n", f.field, base_value, f.value, f.method);
    }
    const std::string text = j.dump(2) + "\n";
    sim::parse_profile(text, "calibrated profile");  // never write a profile the tool cannot load
    const std::filesystem::path out =
        copts->out.empty() ? std::filesystem::path("profiles") / ("calibrated-" + slug(cal.gpu_name) + ".json")
                           : std::filesystem::path(copts->out);
    write_text_atomic(out, text);
    fmt::print("wrote {}\n", out.string());
#else
    run_gpu_command("calibrate");
#endif
  });
}

}  // namespace overlap::app
