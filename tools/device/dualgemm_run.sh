#!/usr/bin/env bash
# One GPU session for the dualgemm kernels, in one call: build, GPU tests, compute-sanitizer on
# small shapes, then the benchmark beside its peers. Logs go to $OUT (or out/).
#   bash tools/device/dualgemm_run.sh [tests|bench|all|ncu|ncu_src]
# Knobs (environment): SANITIZERS (default "memcheck racecheck"; "" skips them), TEST_TIMEOUT,
# SANITIZER_TIMEOUT, SANITIZER_FILTER (gtest filter of the sanitizer runs), BENCH_TIMEOUT (seconds), BENCH_ARGS (extra bench_dualgemm.py arguments),
# TEST_FILTER (gtest filter), NCU_SHAPE (M,N,K) / NCU_VARIANT (one or a space-separated list) /
# NCU_FORMAT (ncu; one report per variant, ncu_<variant>.txt), NCU_METRICS (more metrics, comma-separated),
# NCU_CLOCKS ("none": profile at the clocks the GPU runs; default Nsight Compute's locked base clock).
# ncu_src: warp-stall samples per SASS instruction of each NCU_VARIANT at NCU_SHAPE / NCU_FORMAT, at the
# clocks the GPU runs (ncu_src_<variant>.csv; summarize with tools/ncu_stall_summary.py).
set -o pipefail
what=${1:-all}
OUT=${OUT:-out}
mkdir -p "$OUT"
if ! source tools/device/setup.sh test_cuda_dualgemm overlap_dualgemm_capi >"$OUT/build.log" 2>&1; then
  grep -E "error|Error" "$OUT/build.log" | head -30; tail -20 "$OUT/build.log"; echo "build failed"; exit 1
fi
set +e
tail -3 "$OUT/build.log"
B=${OVERLAP_BUILD:-build-device}
T="$B/tests_cuda/dualgemm/test_cuda_dualgemm"
status=0
if [[ $what == tests || $what == all ]]; then
  # Time limits keep a hung kernel (a lost mbarrier phase) from eating the device budget.
  timeout ${TEST_TIMEOUT:-300} "$T" --gtest_filter="${TEST_FILTER:-*}" >"$OUT/tests.log" 2>&1
  rc=$?
  echo "test_cuda_dualgemm: exit $rc"
  [[ $rc == 124 ]] && tail -5 "$OUT/tests.log"  # the test that hung
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|Failure|Expected" "$OUT/tests.log" | head -60
  grep -q "^\[  PASSED  \]" "$OUT/tests.log" && ! grep -q "^\[  FAILED  \]" "$OUT/tests.log" || status=1
  # Worst relative error per format over every variant and shape.
  for f in 0 1; do
    grep "rel_error \]" "$OUT/tests.log" | grep "fmt=$f" | awk '{print $NF}' | sort -g | tail -1 |
      sed "s/^/worst rel_error fmt=$f: /"
  done
  # Sanitizers on the small shapes only, every variant.
  for tool in ${SANITIZERS-memcheck racecheck}; do
    timeout ${SANITIZER_TIMEOUT:-200} compute-sanitizer --tool $tool --error-exitcode 9 "$T" --gtest_brief=1 \
      --gtest_filter="${SANITIZER_FILTER:-*M_256_N_512_K_256*:*L_2_M_100*:*M_1_N_8*}" >"$OUT/sanitizer_$tool.log" 2>&1
    echo "compute-sanitizer $tool: exit $? ($(grep -cE '(ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards)' "$OUT/sanitizer_$tool.log") clean summaries)"
    grep -m3 -E "ERROR SUMMARY|Invalid|hazard" "$OUT/sanitizer_$tool.log"
  done
fi
if [[ $what == bench || $what == all ]]; then
  PYTHONUNBUFFERED=1 timeout ${BENCH_TIMEOUT:-300} python3 bench/gpu/bench_dualgemm.py \
    --lib "$B/cuda/dualgemm/liboverlap_dualgemm_capi.so" --out "$OUT/bench_dualgemm.json" ${BENCH_ARGS:-} 2>&1 |
    tee "$OUT/bench.log" | grep -v Warning || status=1
fi
if [[ $what == ncu ]]; then
  shape=${NCU_SHAPE:-256,4096,7168}
  for variant in ${NCU_VARIANT:-tile128x64_stages4_ws}; do
    report="$OUT/ncu_$variant.txt"
    timeout 200 ncu --kernel-name regex:dualgemm_kernel --launch-skip 1 --launch-count 1 ${NCU_CLOCKS:+--clock-control $NCU_CLOCKS} \
      --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis \
      --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section Occupancy --section LaunchStats \
      --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum${NCU_METRICS:+,$NCU_METRICS} \
      python3 bench/gpu/bench_dualgemm.py --lib "$B/cuda/dualgemm/liboverlap_dualgemm_capi.so" --reps 1 --warmup 1 \
      --variants "$variant" --shapes "$shape" --formats "${NCU_FORMAT:-fp8}" >"$report" 2>&1
    echo "ncu $variant: exit $?"
    grep -E "Duration|SM Frequency|DRAM Throughput|Memory Throughput|L2 Hit|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|dram__bytes|lts__t_sectors" \
      "$report" | head -16
  done
fi
if [[ $what == ncu_src ]]; then
  shape=${NCU_SHAPE:-256,3072,4096}
  for variant in ${NCU_VARIANT:-tile64x64_stages4_ws}; do
    timeout 200 ncu --kernel-name regex:dualgemm_kernel --launch-skip 1 --launch-count 1 --clock-control none \
      --section SourceCounters --section WarpStateStats --page source --print-source sass --csv \
      python3 bench/gpu/bench_dualgemm.py --lib "$B/cuda/dualgemm/liboverlap_dualgemm_capi.so" --reps 1 --warmup 1 \
      --variants "$variant" --shapes "$shape" --formats "${NCU_FORMAT:-fp8}" >"$OUT/ncu_src_$variant.csv" 2>&1
    echo "ncu source $variant: exit $? ($(wc -l <"$OUT/ncu_src_$variant.csv") lines)"
    python3 tools/ncu_stall_summary.py "$OUT/ncu_src_$variant.csv" --top 8 | head -30
  done
fi
exit $status
