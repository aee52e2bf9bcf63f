#!/usr/bin/env bash
# One GPU session for the projchain kernels, in one call: build, GPU tests, compute-sanitizer on
# the small shapes, then the benchmark beside its peers (epilogue_fused also with STRIPS, default 1,8,33:
# AlongM, strips of 8, AlongN: the round-3 orders and a neighbour, timed in the same run). Logs go
# to $OUT (or out/).
#   bash tools/device/projchain_run.sh [tests|bench|ncu|order|pad|all]   (BENCH_ARGS: extra bench flags)
# pad: the reference shape timed with GPU spins of PADS µs (default 0 200 1000) before each call:
# if a row's time does not move with the spin, its timed window holds GPU work only (no gap
# while the host is still enqueueing); builds only the C API.
# ncu: Nsight Compute (--set full, clocks not locked) on one epilogue_fused call and one call of its
# peer torch.matmul(x, W_cat), at NCU_SHAPE (default: the reference shape); builds only the C API.
# order: the tile-order comparison: GPU tests (no sanitizers), the benchmark with epilogue_fused at
# each strip width in STRIPS (all rows interleaved, SM clock / power sampled), then Nsight
# Compute's DRAM bytes, L2 hit rate and duration for one call per strip width at NCU_SHAPE.
# compare: builds of the C API library with other compile flags, timed beside the tree's build in
# one interleaved benchmark run (COMPARE_SHAPES, default the reference shape and N = 8192):
#   COMPARE="label:nvcc flags;..." DIAGNOSTIC="label:nvcc flags;..." bash tools/device/projchain_run.sh compare
# COMPARE builds are output-checked rows; DIAGNOSTIC builds (wrong by design) are timed unchecked.
set -o pipefail
what=${1:-all}
OUT=${OUT:-out}
mkdir -p "$OUT"
targets="test_cuda_projchain overlap_projchain_capi"
[[ $what == ncu || $what == pad || $what == compare ]] && targets=overlap_projchain_capi
if ! source tools/device/setup.sh $targets >"$OUT/build.log" 2>&1; then
  tail -30 "$OUT/build.log"; echo "build failed"; exit 1
fi
set +e
tail -3 "$OUT/build.log"
B=${OVERLAP_BUILD:-build-device}
T="$B/tests_cuda/projchain/test_cuda_projchain"
status=0
if [[ $what == tests || $what == all || $what == order ]]; then
  "$T" --gtest_brief=1 2>&1 | tee "$OUT/tests.log" | grep -v "rel_error" | tail -40 || status=1
  grep -c "rel_error" "$OUT/tests.log" | sed 's/^/checked outputs: /'
fi
if [[ $what == tests || $what == all ]]; then
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
    --out "$OUT/bench_projchain.json" --strips "${STRIPS:-1,8,33}" ${BENCH_ARGS:-} 2>&1 | tee "$OUT/bench.log" | grep -v Warning || status=1
fi
if [[ $what == pad ]]; then
  for pad in ${PADS:-0 200 1000}; do
    echo "== spin ${pad} us before each call"
    PYTHONUNBUFFERED=1 python3 bench/gpu/bench_projchain.py --lib "$B/cuda/projchain/liboverlap_projchain_capi.so" \
      --out "$OUT/bench_pad_${pad}.json" --shapes "${PAD_SHAPE:-8,4096,2048,16,128}" --pad-us "$pad" ${BENCH_ARGS:-} \
      >"$OUT/bench_pad_${pad}.log" 2>&1 || status=1
    grep -E "^\| (implementation|torch_wide_matmul|torch_unfused|unfused|wide_gemm|epilogue_fused) " "$OUT/bench_pad_${pad}.log"
  done
fi
if [[ $what == order ]]; then
  STRIPS=${STRIPS:-1,3,6,8,11,16,33}
  PYTHONUNBUFFERED=1 python3 bench/gpu/bench_projchain.py --lib "$B/cuda/projchain/liboverlap_projchain_capi.so" \
    --out "$OUT/bench_order.json" --variants epilogue_fused --strips "$STRIPS" ${BENCH_ARGS:-} 2>&1 |
    tee "$OUT/bench_order.log" | grep -v Warning || status=1
  ncu --clock-control none --profile-from-start off --kernel-name regex:'device_kernel|nvjet|gemm|xmma' \
    --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,gpu__time_duration.sum \
    --csv --page raw python3 bench/gpu/bench_projchain.py --lib "$B/cuda/projchain/liboverlap_projchain_capi.so" \
    --profile --strips "0,$STRIPS" --shapes "${NCU_SHAPE:-8,4096,2048,16,128}" >"$OUT/ncu_order.csv" 2>"$OUT/ncu_order.err"
  echo "ncu: exit $? (kernels in the order: strips 0,$STRIPS, then torch.matmul)"
  python3 - "$OUT/ncu_order.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head = rows[0]
want = ["Kernel Name", "gpu__time_duration.sum", "gpc__cycles_elapsed.max", "dram__bytes_read.sum",
        "dram__bytes_write.sum", "lts__t_sector_hit_rate.pct", "sm__throughput.avg.pct_of_peak_sustained_elapsed"]
idx = [head.index(w) for w in want if w in head]
for r in rows[1:]:
    print(" | ".join(r[i][:40] for i in idx))
PY
fi
if [[ $what == compare ]]; then
  # One build directory per label, built in parallel (each is one CUTLASS translation unit).
  extra=()
  pids=()
  for kind in COMPARE DIAGNOSTIC; do
    IFS=';' read -ra specs <<<"${!kind:-}"
    for spec in "${specs[@]}"; do
      [[ -z $spec ]] && continue
      [[ $spec == *:* ]] || { echo "$kind: '$spec' is not label:flags"; exit 1; }
      label=${spec%%:*} flags=${spec#*:}
      dir="$B-$label"
      (cmake -S tools/device/gpu_build -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_FLAGS="$flags" \
         >"$OUT/build_$label.log" 2>&1 && ninja -C "$dir" -j 4 overlap_projchain_capi >>"$OUT/build_$label.log" 2>&1) &
      pids+=($!)
      [[ $kind == COMPARE ]] && extra+=(--compare-lib "$label=$dir/cuda/projchain/liboverlap_projchain_capi.so")
      [[ $kind == DIAGNOSTIC ]] && extra+=(--diagnostic-lib "$label=$dir/cuda/projchain/liboverlap_projchain_capi.so")
    done
  done
  for p in "${pids[@]}"; do wait "$p" || { echo "a compare build failed"; tail -20 "$OUT"/build_*.log; exit 1; }; done
  echo "built ${#pids[@]} extra libraries"
  PYTHONUNBUFFERED=1 python3 bench/gpu/bench_projchain.py --lib "$B/cuda/projchain/liboverlap_projchain_capi.so" \
    --out "$OUT/bench_compare.json" --variants "${VARIANTS:-epilogue_fused}" \
    --shapes "${COMPARE_SHAPES:-8,4096,2048,16,128;4,2048,2048,16,128}" "${extra[@]}" ${BENCH_ARGS:-} 2>&1 |
    tee "$OUT/bench_compare.log" | grep -v Warning || status=1
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
