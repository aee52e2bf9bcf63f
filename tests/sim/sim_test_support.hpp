#pragma once
// Shared pieces of the simulator tests.
#include <functional>
#include <string>

#include "core/error.hpp"

namespace overlap::sim::test_support {

// The message of the overlap::Error that f throws, or "" when it throws none.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace overlap::sim::test_support
