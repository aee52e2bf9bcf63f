#pragma once
// Each group of `overlap` subcommands lives in its own file and registers itself on the app.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace overlap::app {

void register_vectors_command(CLI::App& app);  // cmd_vectors.cpp: write a test-vector set
void register_check_command(CLI::App& app);    // cmd_check.cpp: check a result file
void register_list_command(CLI::App& app);     // cmd_list.cpp: workloads, variants, profiles
void register_predict_commands(CLI::App& app); // cmd_predict.cpp: predict, compare, sweep, predictions
void register_run_command(CLI::App& app);      // cmd_run.cpp: the main job on built-in defaults
void register_validate_commands(CLI::App& app); // cmd_validate.cpp: validate and calibrate on a GPU

// Parses and runs the app, mapping errors to exit codes: 2 for bad input (overlap::Error),
// 3 for anything else, CLI11's own for usage errors.
int run_cli(CLI::App& app, int argc, char** argv);

// The command line run_cli was given, for a command that hands it to another program.
const std::vector<std::string>& invocation();

}  // namespace overlap::app
