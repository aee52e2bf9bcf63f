#!/usr/bin/env bash
# One GPU session for the gla kernels, in one call: build, GPU tests, compute-sanitizer on
# small shapes, then the benchmark beside its peers. Logs go to $OUT (or out/).
#   bash tools/device/gla_run.sh [tests|bench|train|tests_train|varlen|tests_varlen|ncu|all|all_ncu|ncu_pp|tests_ncu_pp|ncu_bwd|ncu_table|ncu_src]
# (train: the forward + backward benchmark, bench/gpu/bench_gla_train.py; varlen: the
# variable-length batch against equal lengths, bench/gpu/bench_gla_varlen.py, VARLEN_ARGS; ncu_bwd:
# Nsight Compute on the backward's kernels at NCU_SHAPE, default 8,4096,16,128,128, the first
# NCU_COUNT (3) launches of kernels matching NCU_KERNELS, then per-SASS samples of each of
# NCU_SRC_KERNELS (names or regexes; "" skips them); ncu_table:
# tools/device/gla_ncu.sh's table of pipes and stalls for NCU_VARIANTS (comma-separated) at NCU_SHAPES
# (semicolon-separated, each B,T,H,K,V); ncu_src:
# per-SASS stall samples (CSV) of launch SKIP of NCU_KERNEL for each SHAPE:SKIP in NCU_JOBS, of
# NCU_VARIANT, for tools/ncu_by_region.py on the host)
# Knobs (environment): SANITIZERS (default "memcheck racecheck"; "" skips them), TEST_TIMEOUT,
# SANITIZER_TIMEOUT, BENCH_TIMEOUT (seconds), BENCH_ARGS (extra bench_gla.py or bench_gla_train.py arguments),
# BENCH2_ARGS (a second benchmark pass, other arguments), NCU_SHAPE / NCU_VARIANT / NCU_SKIP /
# NCU_COUNT (ncu_pp: which launches), NCU_CLOCKS (ncu_pp, ncu_bwd: "none" profiles at the clocks
# the GPU runs, as the model predicts; default Nsight Compute's locked base clock),
# TEST_FILTER / SAN_FILTER (gtest filters of the GPU tests and of the sanitizer runs).
# These configure this script only; the library has no environment knobs.
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
if [[ $what == tests || $what == all || $what == all_ncu || $what == tests_ncu_pp || $what == tests_train ||
      $what == tests_varlen ]]; then
  # Time limits keep a hung kernel (a lost mbarrier phase) from eating the device budget.
  timeout ${TEST_TIMEOUT:-120} "$B/tests_cuda/gla/test_cuda_gla" --gtest_filter="${TEST_FILTER:-*}" >"$OUT/tests.log" 2>&1
  rc=$?
  echo "test_cuda_gla: exit $rc"
  [[ $rc == 124 ]] && tail -5 "$OUT/tests.log"  # the test that hung
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|rel_error \] pingpong|rel_error \] materialized B=|rel_error \] (forward|backward) |Failure|Expected" "$OUT/tests.log" | tail -60
  grep -q "^\[  PASSED  \]" "$OUT/tests.log" && ! grep -q "^\[  FAILED  \]" "$OUT/tests.log" || status=1
  # Sanitizers on the small shapes only (T <= 257), every implemented variant.
  filter=${SAN_FILTER:-'*T_63*:*T_1_*:*T_130*'}
  for tool in ${SANITIZERS-memcheck racecheck}; do
    timeout ${SANITIZER_TIMEOUT:-150} compute-sanitizer --tool $tool --error-exitcode 9 "$B/tests_cuda/gla/test_cuda_gla" --gtest_brief=1 \
      --gtest_filter="$filter" >"$OUT/sanitizer_$tool.log" 2>&1
    echo "compute-sanitizer $tool: exit $? ($(grep -cE '(ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards)' "$OUT/sanitizer_$tool.log") clean summaries)"
    grep -m3 -E "ERROR SUMMARY|Invalid|hazard" "$OUT/sanitizer_$tool.log"
  done
fi
if [[ $what == bench || $what == all || $what == all_ncu || $what == tests_ncu_pp ]]; then
  PYTHONUNBUFFERED=1 timeout ${BENCH_TIMEOUT:-300} python3 bench/gpu/bench_gla.py --lib "$B/cuda/gla/liboverlap_gla_capi.so" \
    --out "$OUT/bench_gla.json" ${BENCH_ARGS:-} 2>&1 | tee "$OUT/bench.log" | grep -v Warning || status=1
fi
if [[ $what == train || $what == tests_train ]]; then
  PYTHONUNBUFFERED=1 timeout ${BENCH_TIMEOUT:-300} python3 bench/gpu/bench_gla_train.py \
    --lib "$B/cuda/gla/liboverlap_gla_capi.so" --out "$OUT/bench_gla_train.json" ${BENCH_ARGS:-} 2>&1 |
    tee "$OUT/bench_train.log" | grep -v Warning || status=1
fi
if [[ $what == varlen || $what == tests_varlen ]]; then
  PYTHONUNBUFFERED=1 timeout ${BENCH_TIMEOUT:-300} python3 bench/gpu/bench_gla_varlen.py \
    --lib "$B/cuda/gla/liboverlap_gla_capi.so" --out "$OUT/bench_gla_varlen.json" ${VARLEN_ARGS:-} 2>&1 |
    tee "$OUT/bench_varlen.log" | grep -v Warning || status=1
fi
if [[ -n ${BENCH2_ARGS:-} ]]; then
  # A second benchmark pass (e.g. other shapes or reps).
  PYTHONUNBUFFERED=1 timeout ${BENCH_TIMEOUT:-300} python3 bench/gpu/bench_gla.py \
    --lib "$B/cuda/gla/liboverlap_gla_capi.so" --out "$OUT/bench_gla_2.json" $BENCH2_ARGS 2>&1 |
    tee "$OUT/bench_2.log" | grep -v Warning || status=1
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
if [[ $what == ncu_pp || $what == tests_ncu_pp ]]; then
  # Where the pingpong kernel's warps stall: the summary, then per-SASS-instruction stall
  # samples (CSV, read back on the host). NCU_SHAPE / NCU_VARIANT pick the launch.
  shape=${NCU_SHAPE:-4,4096,32,64,64}
  variant=${NCU_VARIANT:-pingpong_fused}
  bench="bench/gpu/bench_gla.py --lib $B/cuda/gla/liboverlap_gla_capi.so --no-peers --reps 1 --warmup 1 --variants $variant --shapes $shape"
  timeout 150 ncu --kernel-name regex:gla_pingpong --launch-skip ${NCU_SKIP:-1} --launch-count ${NCU_COUNT:-1} \
    ${NCU_CLOCKS:+--clock-control $NCU_CLOCKS} --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis \
    --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section SourceCounters \
    python3 $bench >"$OUT/ncu_${variant}_${shape//,/_}.txt" 2>&1
  echo "ncu details: exit $?"
  grep -E "Duration|Registers Per|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Stall|Achieved Occupancy|Throughput" \
    "$OUT/ncu_${variant}_${shape//,/_}.txt" | head -30
  timeout 150 ncu --kernel-name regex:gla_pingpong --launch-skip 1 --launch-count 1 --section SourceCounters \
    --section WarpStateStats --page source --print-source sass --csv python3 $bench >"$OUT/ncu_sass.csv" 2>&1
  echo "ncu source: exit $? ($(wc -l <"$OUT/ncu_sass.csv") lines)"
fi
if [[ $what == ncu_table ]]; then
  OUT=$OUT OVERLAP_BUILD=$B bash tools/device/gla_ncu.sh "${NCU_VARIANTS:-}" "${NCU_SHAPES:-}" || status=1
fi
if [[ $what == ncu_src ]]; then
  for job in ${NCU_JOBS:-8,4096,16,128,128:0}; do
    shape=${job%%:*} skip=${job##*:}
    timeout 200 ncu --kernel-name regex:${NCU_KERNEL:-gla_pingpong_kernel} --launch-skip $skip --launch-count 1 \
      --section SourceCounters --section WarpStateStats --page source --print-source sass --csv \
      python3 bench/gpu/bench_gla.py --lib "$B/cuda/gla/liboverlap_gla_capi.so" --no-peers --reps 1 --warmup 1 \
      --variants ${NCU_VARIANT:-pingpong_materialized} --shapes "$shape" >"$OUT/ncu_src_${shape//,/_}_$skip.csv" 2>&1
    echo "ncu source $shape launch $skip: exit $? ($(wc -l <"$OUT/ncu_src_${shape//,/_}_$skip.csv") lines)"
  done
fi
if [[ $what == ncu_bwd ]]; then
  shape=${NCU_SHAPE:-8,4096,16,128,128}
  timeout 300 ncu --kernel-name regex:"${NCU_KERNELS:-gla_chunk_grad|gla_state_walk}" --launch-count ${NCU_COUNT:-3} \
    ${NCU_CLOCKS:+--clock-control $NCU_CLOCKS} --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis \
    --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section InstructionStats --section SourceCounters \
    python3 bench/gpu/bench_gla_train.py --lib "$B/cuda/gla/liboverlap_gla_capi.so" --no-peers --reps 1 --warmup 0 \
    --shapes "$shape" >"$OUT/ncu_bwd_${shape//,/_}.txt" 2>&1
  echo "ncu backward: exit $?"
  grep -E "^  [a-z_]+.*\(|Duration|Registers Per|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Achieved Occupancy|Throughput" \
    "$OUT/ncu_bwd_${shape//,/_}.txt" | head -60
  # Per-SASS-instruction stall samples of each backward kernel (CSV, read back on the host).
  for kernel in ${NCU_SRC_KERNELS-gla_chunk_grad gla_state_walk}; do
    timeout 200 ncu --kernel-name regex:$kernel --launch-count 1 --section SourceCounters --section WarpStateStats \
      --page source --print-source sass --csv python3 bench/gpu/bench_gla_train.py \
      --lib "$B/cuda/gla/liboverlap_gla_capi.so" --no-peers --reps 1 --warmup 0 --shapes "$shape" \
      >"$OUT/ncu_sass_$kernel.csv" 2>&1
    echo "ncu source $kernel: exit $? ($(wc -l <"$OUT/ncu_sass_$kernel.csv") lines)"
  done
fi
exit $status
