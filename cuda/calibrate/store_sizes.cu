// Runs store_drain.cu's size experiment: how long every SM takes to write a small GEMM output
// tile (128 x 32 ... 128 x 128 fp16, one or two an SM) by fragment pairs and by bulk copy.
//   tma_store_sizes [repeats]
#include <cstdio>

#include "calibrate/experiment_args.hpp"
#include "calibrate/store_drain.hpp"

int main(int argc, char** argv) {
  const int repeats = overlap::gpu::repeats_arg(argc, argv, 10, "tma_store_sizes");
  if (repeats == 0) return 2;
  std::fputs(overlap::gpu::store_sizes_csv(repeats).c_str(), stdout);
  return 0;
}
