#!/usr/bin/env bash
# Where a dualgemm kernel's warps wait, instruction by instruction: Nsight Compute's warp-stall
# sampling (SourceCounters) on one call of each variant, exported as SASS with its samples and
# summarized by tools/ncu_stall_summary.py (top instructions and what they stall on).
#   NCU_VARIANT="a b" NCU_SHAPE=M,N,K NCU_FORMAT=fp8 bash tools/device/dualgemm_stalls.sh
OUT=${OUT:-out}
mkdir -p "$OUT"
if ! source tools/device/setup.sh overlap_dualgemm_capi >"$OUT/build.log" 2>&1; then
  tail -20 "$OUT/build.log"; echo "build failed"; exit 1
fi
B=${OVERLAP_BUILD:-build-device}
shape=${NCU_SHAPE:-256,3072,4096}
for variant in ${NCU_VARIANT:-tile128x48_stages7_ws}; do
  rep="$OUT/stalls_$variant"
  timeout 300 ncu --kernel-name regex:dualgemm_kernel --launch-skip 1 --launch-count 1 \
    --section WarpStateStats --section SourceCounters --section SpeedOfLight -f -o "$rep" \
    python3 bench/gpu/bench_dualgemm.py --lib "$B/cuda/dualgemm/liboverlap_dualgemm_capi.so" --reps 1 --warmup 1 \
    --variants "$variant" --shapes "$shape" --formats "${NCU_FORMAT:-fp8}" >"$rep.log" 2>&1
  echo "ncu $variant: exit $?"
  ncu --import "$rep.ncu-rep" --page source --csv --print-source sass >"$rep.sass.csv" 2>"$rep.err"
  ncu --import "$rep.ncu-rep" --page details --section WarpStateStats --section SpeedOfLight >"$rep.txt" 2>&1
  grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Warp Cycles Per Issued|Stall" "$rep.txt" | head -12
  python3 tools/ncu_stall_summary.py "$rep.sass.csv" | tee "$rep.summary.txt" | head -40
done
