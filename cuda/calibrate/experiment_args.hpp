#pragma once
// The experiments' first argument (tools/device/experiment.sh passes it): how many launches to
// time, `fallback` when absent. A value below 1 is refused with a message naming the program and
// the value; the caller exits with status 2 when this returns 0.
#include <cstdio>
#include <cstdlib>

namespace overlap::gpu {

inline int repeats_arg(int argc, char** argv, int fallback, const char* program) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : fallback;
  if (repeats >= 1) return repeats;
  std::fprintf(stderr, "%s: repeats must be at least 1, got '%s'\n", program, argv[1]);
  return 0;
}

}  // namespace overlap::gpu
