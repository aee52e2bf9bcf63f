#!/usr/bin/env bash
# One GPU session for the linrnn kernels, in one call: build, GPU tests, compute-sanitizer on
# small shapes, then the benchmark beside its peers. Logs go to $OUT (or out/).
#   bash tools/device/linrnn_run.sh [tests|bench|all|ncu|all_ncu|ncu_src]
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
  # Sanitizers on the small shapes only (T <= 257), every variant. The leading underscore keeps
  # "hT_1_" (every case with hT=1) out of the match. full_fused (a barrier per timestep, slow
  # under racecheck) runs in its own pass after the others, so its time limit cannot cost the
  # other variants their coverage.
  small='*_T_63_*:*_T_1_*:*_T_130_*:*_T_257_*'
  for tool in memcheck racecheck; do
    for pass in "others:${small}-*full_fused*" "full_fused:*full_fused*_T_63_*:*full_fused*_T_1_*:*full_fused*_T_130_*:*full_fused*_T_257_*"; do
      name=${pass%%:*}
      log="$OUT/sanitizer_${tool}_${name}.log"
      timeout ${SANITIZER_TIMEOUT:-60} compute-sanitizer --tool $tool --error-exitcode 9 "$B/tests_cuda/linrnn/test_cuda_linrnn" \
        --gtest_brief=1 --gtest_filter="${pass#*:}" >"$log" 2>&1
      rc=$?
      [[ $rc == 0 ]] || status=1  # 9: the tool found errors; 124: out of time (coverage partial)
      echo "compute-sanitizer $tool ($name): exit $rc ($(grep -cE '(ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards)' "$log") clean summaries)"
      grep -m3 -E "ERROR SUMMARY|RACECHECK SUMMARY|Invalid|hazard|tests ran|PASSED|FAILED" "$log"
      echo "  cases run: $(grep -oE '^\[ rel_error \] [a-z_/]+ [^ ]+ [a-z_]+' "$log" | sort -u | awk '{print $4}' | sort | uniq -c | tr '\n' ' ')"
    done
  done
fi
if [[ $what == bench || $what == all || $what == all_ncu ]]; then
  PYTHONUNBUFFERED=1 timeout 170 python3 bench/gpu/bench_linrnn.py --lib "$B/cuda/linrnn/liboverlap_linrnn_capi.so" \
    --out "$OUT/bench_linrnn.json" ${BENCH_ARGS:-} 2>&1 | tee "$OUT/bench.log" | grep -v Warning || status=1
fi
if [[ $what == ncu || $what == all_ncu ]]; then
  # Where the scan and chunk_fused kernels' time goes (one launch each; --clock-control none
  # so durations compare with the benchmark's).
  for spec in "scan_kernel 4,2048,256,64 semi_fused" "handoff_gemm_kernel 4,2048,256,64 chunk_fused" \
              "handoff_gemm_kernel 8,4096,1024,1024 chunk_fused" "scan_kernel 8,4096,1024,1024 semi_fused"; do
    read -r kname shape variant <<<"$spec"
    log="$OUT/ncu_${kname}_${shape//,/_}.txt"
    timeout 120 ncu --clock-control none --kernel-name "regex:$kname" --launch-skip 3 --launch-count 1 \
      --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
      --section Occupancy --section LaunchStats --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active \
      python3 bench/gpu/bench_linrnn.py --lib "$B/cuda/linrnn/liboverlap_linrnn_capi.so" --reps 1 --warmup 1 --no-peers \
      --variants "$variant" --shapes "$shape" >"$log" 2>&1
    echo "ncu $kname $shape: exit $?"
    grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|L2 Cache Throughput|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Achieved Occupancy|Registers Per|Theoretical Occupancy|hmma|gmma" "$log" | head -16
  done
fi
if [[ $what == ncu_src ]]; then
  # Per-SASS-instruction stall samples (CSV, joined with the cubin's regions on the host by
  # tools/ncu_by_region.py) of the scan kernels and chunk_fused, one launch each.
  for spec in ${NCU_SRC_JOBS:-scan_kernel:4,2048,256,64:semi_fused scan_kernel:4,2048,256,64:three_kernel \
              scan_kernel:16,4096,256,64:semi_fused handoff_gemm_kernel:4,2048,256,64:chunk_fused}; do
    IFS=: read -r kname shape variant <<<"$spec"
    csv="$OUT/ncu_src_${variant}_${kname}_${shape//,/_}.csv"
    timeout 150 ncu --clock-control none --kernel-name "regex:$kname" --launch-skip 3 --launch-count 1 \
      --section SourceCounters --section WarpStateStats --page source --print-source sass --csv \
      python3 bench/gpu/bench_linrnn.py --lib "$B/cuda/linrnn/liboverlap_linrnn_capi.so" --reps 1 --warmup 1 --no-peers \
      --variants "$variant" --shapes "$shape" >"$csv" 2>&1
    echo "ncu source $variant $kname $shape: exit $? ($(wc -l <"$csv") lines)"
  done
fi
exit $status
