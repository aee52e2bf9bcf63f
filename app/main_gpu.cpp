// overlap-gpu: `overlap validate` and `overlap calibrate`, the commands that run kernels. A
// program of its own so that `overlap`'s other commands load no CUDA library; `overlap`
// hands these two to it (cmd_validate.cpp).
#include <CLI/CLI.hpp>

#include "app/commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"overlap-gpu: validate and calibrate on a GPU (run through `overlap validate` / `overlap calibrate`)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "overlap 0.1.0");
  overlap::app::register_validate_commands(app);
  return overlap::app::run_cli(app, argc, argv);
}
