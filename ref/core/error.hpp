#pragma once
// One error type for every entry point: a clear one-line message naming the problem and the
// offending value. The command-line tool turns it into a non-zero exit.
#include <fmt/format.h>
#include <stdexcept>
#include <string>

namespace overlap {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

template <class... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace overlap

// OVERLAP_REQUIRE(cond, "fmt {}", value): throws overlap::Error when cond is false.
#define OVERLAP_REQUIRE(cond, ...)      \
  do {                                  \
    if (!(cond)) ::overlap::fail(__VA_ARGS__); \
  } while (0)
