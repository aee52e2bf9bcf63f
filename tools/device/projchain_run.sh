#!/usr/bin/env bash
# One GPU session for the projchain kernels, in one call: build, GPU tests, compute-sanitizer on
# the small shapes, then the benchmark beside its peers. Logs go to $OUT (or out/).
#   bash tools/device/projchain_run.sh [tests|bench|ncu|all]   (BENCH_ARGS: extra bench flags)
# ncu: Nsight Compute (--set full, clocks not locked) on one epilogue_fused call and one call of its
# peer torch.matmul(x, W_cat), at NCU_SHAPE (default: the reference shape); builds only the C API.
set -o pipefail
what=${1:-all}
OUT=${OUT:-out}
mkdir -p "$OUT"
targets="test_cuda_projchain overlap_projchain_capi"
[[ $what == ncu ]] && targets=overlap_projchain_capi
if ! source tools/device/setup.sh $targets >"$OUT/build.log" 2>&1; then
  tail -30 "$OUT/build.log"; echo "build failed"; exit 1
fi
set +e
tail -3 "$OUT/build.log"
B=${OVERLAP_BUILD:-build-device}
T="$B/tests_cuda/projchain/test_cuda_projchain"
status=0
if [[ $what == tests || $what == all ]]; then
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
if [[ $what == bench || $what == all ]]; then
  PYTHONUNBUFFERED=1 python3 bench/gpu/bench_projchain.py --lib "$B/cuda/projchain/liboverlap_projchain_capi.so" \
    --out "$OUT/bench_projchain.json" ${BENCH_ARGS:-} 2>&1 | tee "$OUT/bench.log" | grep -v Warning || status=1
fi
if [[ $what == ncu ]]; then
  LIB="$B/cuda/projchain/liboverlap_projchain_capi.so"
  ncu --clock-control none --profile-from-start off --kernel-name regex:'device_kernel|nvjet|gemm|xmma' \
    --set full --import-source no -f -o "$OUT/projchain" \
    python3 bench/gpu/bench_projchain.py --lib "$LIB" --profile --shapes "${NCU_SHAPE:-8,4096,2048,16,128}" \
    >"$OUT/ncu_run.log" 2>&1
  echo "ncu: exit $?"; tail -5 "$OUT/ncu_run.log"
  R="$OUT/projchain.ncu-rep"
  ncu -i "$R" --page details >"$OUT/ncu_details.txt" 2>&1
  ncu -i "$R" --page raw --csv >"$OUT/ncu_raw.csv" 2>&1
  # Per-SASS-instruction stall samples of our kernel: where its warps wait.
  ncu -i "$R" --kernel-name regex:device_kernel --page source --csv --print-source sass \
    >"$OUT/ncu_source_fused.csv" 2>&1
  echo "source page: exit $? ($(wc -l <"$OUT/ncu_source_fused.csv") lines)"
  grep -E "^  [a-zA-Z_].*\(|Duration|SM Frequency|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|L2 Hit Rate|L1/TEX Hit|Registers Per|Achieved Occupancy|Issue Slots Busy|Warp Cycles Per Issued|Cluster Size|Grid Size|Tensor" \
    "$OUT/ncu_details.txt" | head -70
fi
exit $status
