// overlap: check on the CPU, predict with the model, validate on a GPU.
#include <CLI/CLI.hpp>

#include "app/commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"overlap: predict and validate load/compute overlap in linear-RNN kernels"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "overlap 0.1.0");
  overlap::app::register_run_command(app);
  overlap::app::register_list_command(app);
  overlap::app::register_vectors_command(app);
  overlap::app::register_check_command(app);
  overlap::app::register_predict_commands(app);
  overlap::app::register_validate_commands(app);
  return overlap::app::run_cli(app, argc, argv);
}
