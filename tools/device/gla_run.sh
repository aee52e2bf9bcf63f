#!/usr/bin/env bash
# One GPU session for the gla kernels, in one call: build, GPU tests, compute-sanitizer on
# small shapes, then the benchmark beside its peers. Logs go to $OUT (or out/).
#   bash tools/device/gla_run.sh [tests|bench|ncu|all|all_ncu]
set -o pipefail
what=${1:-all}
OUT=${OUT:-out}
mkdir -p "$OUT"
if ! source tools/device/setup.sh test_cuda_gla overlap_gla_capi >"$OUT/build.log" 2>&1; then
  tail -30 "$OUT/build.log"; echo "build failed"; exit 1
fi
set +e
tail -3 "$OUT/build.log"
B=${OVERLAP_BUILD:-build-device}
status=0
if [[ $what == tests || $what == all || $what == all_ncu ]]; then
  "$B/tests_cuda/gla/test_cuda_gla" --gtest_brief=1 2>&1 | tee "$OUT/tests.log" | tail -40 || status=1
  # Sanitizers on the small shapes only (T <= 257), every implemented variant.
  filter='*T_63*:*T_1_*:*T_130*'
  for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool --error-exitcode 9 "$B/tests_cuda/gla/test_cuda_gla" --gtest_brief=1 \
      --gtest_filter="$filter" >"$OUT/sanitizer_$tool.log" 2>&1
    echo "compute-sanitizer $tool: exit $? ($(grep -c 'ERROR SUMMARY: 0' "$OUT/sanitizer_$tool.log") clean summaries)"
    grep -m3 -E "ERROR SUMMARY|Invalid|hazard" "$OUT/sanitizer_$tool.log"
  done
fi
if [[ $what == bench || $what == all || $what == all_ncu ]]; then
  PYTHONUNBUFFERED=1 python3 bench/gpu/bench_gla.py --lib "$B/cuda/gla/liboverlap_gla_capi.so" \
    --out "$OUT/bench_gla.json" ${BENCH_ARGS:-} 2>&1 | tee "$OUT/bench.log" | grep -v Warning || status=1
fi
if [[ $what == ncu || $what == all_ncu ]]; then
  # Where the fused kernel's time goes: stall reasons, pipe use, memory throughput (one launch
  # per shape; Nsight Compute runs the kernel many times to read its counters).
  for shape in "4,4096,32,64,64" "8,4096,16,128,128"; do
    ncu --kernel-name regex:gla_chunk_kernel --launch-skip 1 --launch-count 1 \
      --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis \
      --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
      python3 bench/gpu/bench_gla.py --lib "$B/cuda/gla/liboverlap_gla_capi.so" --no-peers --reps 1 --warmup 1 \
      --variants pipelined_fused --shapes "$shape" >"$OUT/ncu_${shape//,/_}.txt" 2>&1
    echo "ncu $shape: exit $?"
    grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Stall|Achieved Occupancy" \
      "$OUT/ncu_${shape//,/_}.txt" | head -20
  done
fi
exit $status
