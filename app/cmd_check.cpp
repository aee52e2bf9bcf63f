// `overlap check`: checks a result file (written by a kernel, a PyTorch script, anything that
// writes safetensors) against a test-vector set, and `overlap reference`, which writes such a
// result file from the CPU fast reference.
#include <nlohmann/json.hpp>

#include "app/commands.hpp"
#include "vectors/vectors.hpp"

namespace overlap::app {
namespace {

void print_checks(const std::vector<OutputCheck>& checks, bool json) {
  if (json) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& c : checks)
      out.push_back({{"output", c.name}, {"rel_error", c.rel_error},
                     {"worst_block_rel_error", c.worst_block_rel_error},
                     {"worst_block_row", c.worst_block_row}, {"worst_block_col", c.worst_block_col},
                     {"tolerance", c.tolerance},
                     {"elements", c.elements}, {"non_finite", c.non_finite},
                     {"unwritten", c.unwritten}, {"problem", c.problem}, {"pass", c.pass()}});
    fmt::print("{}\n", out.dump(2));
    return;
  }
  fmt::print("{:<8} {:>12} {:>12} {:>10} {:>11} {:>10}  {}\n", "output", "rel_error", "worst_block",
             "tolerance", "non_finite", "unwritten", "result");
  for (const auto& c : checks) {
    fmt::print("{:<8} {:>12.3e} {:>12.3e} {:>10.1e} {:>11} {:>10}  {}{}\n", c.name, c.rel_error,
               c.worst_block_rel_error, c.tolerance,
               c.non_finite, c.unwritten, c.pass() ? "PASS" : "FAIL",
               c.problem.empty() ? "" : " (" + c.problem + ")");
  }
}

}  // namespace

void register_check_command(CLI::App& app) {
  struct Options {
    std::string vectors, result, out;
    bool json = false;
  };
  auto opts = std::make_shared<Options>();
  auto* check = app.add_subcommand("check", "Check a result file against a test-vector set");
  check->add_option("--vectors,-v", opts->vectors, "test-vector file (safetensors)")->required();
  check->add_option("--result,-r", opts->result, "result file (safetensors with the output tensors)")->required();
  check->add_flag("--json", opts->json, "print JSON instead of a table");
  check->callback([opts] {
    const VectorSet vectors = read_vector_set(opts->vectors);
    const TensorFile result = read_safetensors(opts->result);
    const auto checks = check_outputs(vectors, result.tensors);
    print_checks(checks, opts->json);
    for (const auto& c : checks)
      if (!c.pass()) throw CLI::RuntimeError(1);  // exit code 1: a check failed
  });

  auto* ref = app.add_subcommand("reference", "Run the CPU fast reference on a test-vector set and write a result file");
  ref->add_option("--vectors,-v", opts->vectors, "test-vector file (safetensors)")->required();
  ref->add_option("--out,-o", opts->out, "result file to write")->required();
  ref->callback([opts] {
    const VectorSet vectors = read_vector_set(opts->vectors);
    TensorFile result;
    result.tensors = vectors.workload->fast_reference(vectors.shape, vectors.inputs);
    result.metadata = {{"producer", "overlap reference (CPU fast reference)"}};
    write_safetensors(opts->out, result);
    fmt::print("{}\n", opts->out);
  });
}

}  // namespace overlap::app
