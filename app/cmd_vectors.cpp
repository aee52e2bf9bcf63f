// `overlap vectors`: writes one shared test-vector set (inputs + expected outputs + metadata).
#include <filesystem>

#include "app/commands.hpp"
#include "app/output_names.hpp"
#include "vectors/vectors.hpp"

namespace overlap::app {

void register_vectors_command(CLI::App& app) {
  struct Options {
    std::string workload, shape, distribution, out_dir = ".", expected = "oracle";
    std::uint64_t seed = 0;
  };
  auto opts = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("vectors", "Write a test-vector set (safetensors) for a workload");
  cmd->add_option("--workload,-w", opts->workload, "gla | linrnn | projchain | dualgemm")->required();
  cmd->add_option("--shape,-s", opts->shape, "e.g. B=2,T=63,H=2,K=64,V=64 (missing keys take defaults)");
  cmd->add_option("--seed", opts->seed, "random seed (generation is deterministic from it)");
  cmd->add_option("--distribution,-d", opts->distribution, "input distribution (default: the workload's first)");
  cmd->add_option("--expected", opts->expected, "oracle (float64, default) | fast (fp32 fast reference, for large shapes)")
      ->check(CLI::IsMember({"oracle", "fast"}));
  cmd->add_option("--out,-o", opts->out_dir, "output directory (created if missing)");
  cmd->callback([opts] {
    VectorRequest request{opts->workload, opts->shape, opts->seed, opts->distribution,
                          opts->expected == "oracle" ? ExpectedFrom::Oracle : ExpectedFrom::FastReference};
    const TensorFile file = make_vector_set(request);
    std::filesystem::create_directories(opts->out_dir);
    const auto path = std::filesystem::path(opts->out_dir) /
                      vector_file_name(request.workload, file.metadata.at("shape"),
                                       file.metadata.at("distribution"), request.seed);
    write_safetensors(path, file);
    fmt::print("{}\n", path.string());
  });
}

}  // namespace overlap::app
