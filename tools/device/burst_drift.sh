#!/usr/bin/env bash
# One GPU call: build and run cuda/calibrate/burst_drift.cu (do SMs that load in bursts between
# compute phases stay in step?), CSV to $OUT/burst_drift.csv.
#   bash tools/device/burst_drift.sh [REPEATS]
set -o pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
if ! source tools/device/setup.sh tma_burst_drift >"$OUT/build.log" 2>&1; then
  tail -30 "$OUT/build.log"; echo "build failed"; exit 1
fi
B=${OVERLAP_BUILD:-build-device}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
timeout 300 "$B/cuda/runtime/tma_burst_drift" "${1:-10}" | tee "$OUT/burst_drift.csv"
