// Runs store_drain.cu's size experiment: how long every SM takes to write a small GEMM output
// tile (128 x 32 ... 128 x 128 fp16, one or two an SM) by fragment pairs and by bulk copy.
//   tma_store_sizes [repeats]
#include <cstdio>
#include <cstdlib>

#include "calibrate/store_drain.hpp"

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 10;
  if (repeats < 1) {
    std::fprintf(stderr, "tma_store_sizes: repeats must be at least 1, got '%s'\n", argv[1]);
    return 2;
  }
  std::fputs(overlap::gpu::store_sizes_csv(repeats).c_str(), stdout);
  return 0;
}
