#!/usr/bin/env bash
# One GPU session for the linrnn kernels, in one call: build, GPU tests, compute-sanitizer on
# small shapes, then the benchmark beside its peers. Logs go to $OUT (or out/).
#   bash tools/device/linrnn_run.sh [tests|bench|all|ncu|all_ncu]
set -o pipefail
what=${1:-all}
OUT=${OUT:-out}
mkdir -p "$OUT"
if ! source tools/device/setup.sh test_cuda_linrnn overlap_linrnn_capi >"$OUT/build.log" 2>&1; then
  tail -30 "$OUT/build.log"; echo "build failed"; exit 1
fi
set +e
tail -3 "$OUT/build.log"
B=${OVERLAP_BUILD:-build-device}
status=0
if [[ $what == tests || $what == all || $what == all_ncu ]]; then
  timeout 150 "$B/tests_cuda/linrnn/test_cuda_linrnn" --gtest_brief=1 >"$OUT/tests.log" 2>&1 || status=1
  grep -E "FAILED|Failure|rel_error [0-9]|PASSED|tests ran|Skipped" "$OUT/tests.log" | grep -v "^\[ rel_error" | head -40
  echo "worst rel_error per variant:"
  for v in three_kernel semi_fused full_fused chunk_fused; do
    grep "^\[ rel_error \] $v " "$OUT/tests.log" | awk -v v=$v '{e=$NF+0; if(e>m)m=e} END{printf "  %s %.3e (%d checks)\n", v, m, NR}'
  done
  # Sanitizers on the small shapes only (T <= 257), every variant.
  filter='*T_63_*:*T_1_*:*T_130_*:*T_257_*'
  for tool in memcheck racecheck; do
    f=$filter
    timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 "$B/tests_cuda/linrnn/test_cuda_linrnn" --gtest_brief=1 \
      --gtest_filter="$f" >"$OUT/sanitizer_$tool.log" 2>&1
    echo "compute-sanitizer $tool: exit $? ($(grep -c 'ERROR SUMMARY: 0' "$OUT/sanitizer_$tool.log") clean summaries)"
    grep -m3 -E "ERROR SUMMARY|RACECHECK SUMMARY|Invalid|hazard" "$OUT/sanitizer_$tool.log"
  done
fi
if [[ $what == bench || $what == all || $what == all_ncu ]]; then
  PYTHONUNBUFFERED=1 timeout 170 python3 bench/gpu/bench_linrnn.py --lib "$B/cuda/linrnn/liboverlap_linrnn_capi.so" \
    --out "$OUT/bench_linrnn.json" ${BENCH_ARGS:-} 2>&1 | tee "$OUT/bench.log" | grep -v Warning || status=1
fi
if [[ $what == ncu || $what == all_ncu ]]; then
  # Where the scan and chunk_fused kernels' time goes (one launch each; --clock-control none
  # so durations compare with the benchmark's).
  export OVERLAP_LINRNN_BENCH_NO_PEERS=1
  for spec in "scan_kernel 4,2048,256,64 semi_fused" "chunk_fused_kernel 4,2048,256,64 chunk_fused" \
              "chunk_fused_kernel 8,4096,1024,1024 chunk_fused" "scan_kernel 8,4096,1024,1024 semi_fused"; do
    read -r kname shape variant <<<"$spec"
    log="$OUT/ncu_${kname}_${shape//,/_}.txt"
    timeout 120 ncu --clock-control none --kernel-name "regex:$kname" --launch-skip 3 --launch-count 1 \
      --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
      --section Occupancy --section LaunchStats --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active \
      python3 bench/gpu/bench_linrnn.py --lib "$B/cuda/linrnn/liboverlap_linrnn_capi.so" --reps 1 --warmup 1 \
      --variants "$variant" --shapes "$shape" >"$log" 2>&1
    echo "ncu $kname $shape: exit $?"
    grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|L2 Cache Throughput|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Achieved Occupancy|Registers Per|Theoretical Occupancy|hmma" "$log" | head -16
  done
fi
exit $status
