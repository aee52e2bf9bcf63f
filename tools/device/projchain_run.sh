#!/usr/bin/env bash
# One GPU session for the projchain kernels, in one call: build, GPU tests, compute-sanitizer on
# the small shapes, then the benchmark beside its peers. Logs go to $OUT (or out/).
#   bash tools/device/projchain_run.sh [tests|bench|ncu|all|all_ncu]   (BENCH_ARGS: extra bench flags)
set -o pipefail
what=${1:-all}
OUT=${OUT:-out}
mkdir -p "$OUT"
if ! source tools/device/setup.sh test_cuda_projchain overlap_projchain_capi >"$OUT/build.log" 2>&1; then
  tail -30 "$OUT/build.log"; echo "build failed"; exit 1
fi
set +e
tail -3 "$OUT/build.log"
B=${OVERLAP_BUILD:-build-device}
T="$B/tests_cuda/projchain/test_cuda_projchain"
status=0
if [[ $what == tests || $what == all || $what == all_ncu ]]; then
  "$T" --gtest_brief=1 2>&1 | tee "$OUT/tests.log" | grep -v "rel_error" | tail -40 || status=1
  grep -c "rel_error" "$OUT/tests.log" | sed 's/^/checked outputs: /'
  # Sanitizers on the small shapes only (N <= 300), every implemented variant.
  filter='*T_33*:*T_130*:*T_47*:*T_129*:*T_17_*:*T_100_*:*T_300_*'
  for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool --error-exitcode 9 "$T" --gtest_brief=1 --gtest_filter="$filter" \
      >"$OUT/sanitizer_$tool.log" 2>&1
    echo "compute-sanitizer $tool: exit $? ($(grep -c 'ERROR SUMMARY: 0' "$OUT/sanitizer_$tool.log") clean summaries)"
    grep -m3 -E "ERROR SUMMARY|Invalid|hazard" "$OUT/sanitizer_$tool.log"
  done
fi
if [[ $what == bench || $what == all || $what == all_ncu ]]; then
  PYTHONUNBUFFERED=1 python3 bench/gpu/bench_projchain.py --lib "$B/cuda/projchain/liboverlap_projchain_capi.so" \
    --out "$OUT/bench_projchain.json" ${BENCH_ARGS:-} 2>&1 | tee "$OUT/bench.log" | grep -v Warning || status=1
fi
if [[ $what == ncu || $what == all_ncu ]]; then
  # Where the fused GEMM's time goes (one launch at N=2048): throughput, L2 hit rate, stalls.
  ncu --kernel-name regex:device_kernel --launch-skip 1 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section LaunchStats \
    python3 bench/gpu/bench_projchain.py --lib "$B/cuda/projchain/liboverlap_projchain_capi.so" --reps 1 --warmup 1 \
    --variants epilogue_fused --shapes 4,512,2048,16,128 >"$OUT/ncu_fused.txt" 2>&1
  echo "ncu: exit $?"
  grep -E "Duration|Throughput|Hit Rate|L2 Compression|Busy|Stall|Warp Cycles Per Issued|Registers|Grid Size" \
    "$OUT/ncu_fused.txt" | head -40
fi
exit $status
