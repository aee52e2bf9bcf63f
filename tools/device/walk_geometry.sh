#!/usr/bin/env bash
# One GPU call: build and run cuda/calibrate/walk_geometry.cu (one tensor's TMA walk rate per SM
# by row stride and box shape), CSV to $OUT/walk_geometry.csv.
#   bash tools/device/walk_geometry.sh [REPEATS]
set -o pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
if ! source tools/device/setup.sh tma_walk_geometry >"$OUT/build.log" 2>&1; then
  tail -30 "$OUT/build.log"; echo "build failed"; exit 1
fi
B=${OVERLAP_BUILD:-build-device}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
timeout 300 "$B/cuda/runtime/tma_walk_geometry" "${1:-10}" | tee "$OUT/walk_geometry.csv"
