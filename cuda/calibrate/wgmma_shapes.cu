// An experiment, not a calibration: the wgmma stream's rate by the instruction's N and by how a
// kernel's k-loop issues it. calibrate's tensor stream (tensor_stream.cu) times m64n256 in
// batches of 8 with every batch waited for; the dualgemm kernels issue a k-block (4 k-steps of
// 32 bytes of K) of m64nN at a time, N = 2 x the warpgroup's columns (64 to 256), and keep one
// k-block in flight (commit, then wait until one group is left). Does N, or the grouping, change
// the rate the tensor pipe reaches? And the two-atom stage's layout (tile128x64_stages3_ws_
// tmastore_k2: 8 k-steps a group over two atoms of K, B's 8-row groups 2 KiB apart)?
//
//   tma_wgmma_shapes [repeats]
//
// Every SM runs one CTA of two warpgroups streaming wgmma with A (64 rows) and B (N rows) in
// shared memory (128 bytes of K, 128-byte swizzle, random finite values), about 100 us a launch.
// Prints one CSV row per case: format, N, wgmmas a group, groups left in flight at each wait,
// K atoms of the layout, TFLOP/s (device events, median), FLOPs an SM a clock (clock64), and that against the
// calibration's pattern (m64n256, 8 a group, none in flight) of the same format.
#include <cstdio>
#include <cstdlib>

#include "calibrate/wgmma_stream.cuh"
#include "runtime/cuda_check.hpp"

namespace {

using overlap::gpu::measure_wgmma_stream;

template <bool Fp8, int N, int Group, int InFlight, int KAtoms = 1>
void row(int sms, int repeats, double base) {
  const auto r = measure_wgmma_stream<Fp8, N, Group, InFlight, KAtoms>(sms, repeats);
  std::printf("%s,%d,%d,%d,%d,%.1f,%.0f,%.3f\n", Fp8 ? "fp8" : "bf16", N, Group, InFlight, KAtoms, r.tflops,
              r.flops_per_clk, base > 0 ? r.tflops / base : 1.0);
}

template <bool Fp8>
void format_rows(int sms, int repeats) {
  const double base = measure_wgmma_stream<Fp8, 256, 8, 0>(sms, repeats).tflops;
  row<Fp8, 256, 8, 0>(sms, repeats, base);
  row<Fp8, 256, 4, 0>(sms, repeats, base);
  row<Fp8, 256, 4, 1>(sms, repeats, base);
  row<Fp8, 192, 4, 1>(sms, repeats, base);
  row<Fp8, 128, 4, 1>(sms, repeats, base);
  row<Fp8, 96, 4, 1>(sms, repeats, base);
  row<Fp8, 64, 4, 1>(sms, repeats, base);
  row<Fp8, 128, 8, 0>(sms, repeats, base);
  row<Fp8, 64, 8, 0>(sms, repeats, base);
  row<Fp8, 128, 8, 1>(sms, repeats, base);
  row<Fp8, 128, 8, 1, 2>(sms, repeats, base);
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 10;
  const int sms = overlap::gpu::current_sm_count();
  std::printf("# wgmma_shapes: one CTA of two warpgroups an SM (%d SMs), A and B in shared memory\n", sms);
  std::printf("format,n,wgmmas_a_group,groups_in_flight,k_atoms,TFLOPs,flops_per_sm_clk,against_calibration\n");
  format_rows<false>(sms, repeats);
  format_rows<true>(sms, repeats);
  return 0;
}
