#include <fmt/core.h>

#include "app/commands.hpp"
#include "core/error.hpp"

namespace overlap::app {
namespace {
std::vector<std::string>& stored_invocation() {
  static std::vector<std::string> args;
  return args;
}
}  // namespace

const std::vector<std::string>& invocation() { return stored_invocation(); }

int run_cli(CLI::App& app, int argc, char** argv) {
  stored_invocation().assign(argv, argv + argc);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const overlap::Error& e) {
    fmt::print(stderr, "overlap: error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "overlap: internal error: {}\n", e.what());
    return 3;
  }
  return 0;
}

}  // namespace overlap::app
