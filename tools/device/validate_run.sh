#!/usr/bin/env bash
# Validation on the lent GPU in one call: build the whole `overlap` tool with the CUDA kernels,
# measure the GPU (`overlap calibrate`), then `overlap validate` with the built-in profile of the
# GPU found. Results land in $OUT (or out/): run.log, calibrated.json,
# validation/{report.md,report.json,plot.svg}.
#   bash tools/device/validate_run.sh [extra validate arguments, e.g. --workload linrnn]
# The same measurements are scored against the calibrated profile afterwards, without the GPU:
#   python3 tools/rescore_validation.py validation/report.json build/app/overlap --hw calibrated.json
# With SKIP_CALIBRATE=1 it only validates; with CALIBRATE_ONLY=1 it only calibrates. Where every workload does not fit one call, run it per
# workload (`... validate_run.sh --workload dualgemm`, one OUT each) and join the reports:
#   build/app/overlap merge-reports A/validation/report.json B/validation/report.json --out docs/validation/current
set -o pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
log="$OUT/run.log"
if ! source tools/device/deps.sh >"$log" 2>&1; then
  tail -20 "$log"; echo "dependency setup failed"; exit 1
fi
set +e
B=build-validate
{ cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOVERLAP_BUILD_TESTS=OFF -DOVERLAP_BUILD_BENCH=OFF &&
  ninja -C "$B" -j "$(nproc)" overlap; } >>"$log" 2>&1 || { tail -40 "$log"; echo "build failed"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee -a "$log"
if [[ -z ${SKIP_CALIBRATE:-} ]]; then
  timeout 120 "$B/app/overlap" calibrate --out "$OUT/calibrated.json" 2>&1 | tee -a "$log"
fi
[[ -n ${CALIBRATE_ONLY:-} ]] && exit 0
"$B/app/overlap" validate --out "$OUT/validation" "$@" 2>&1 | tee -a "$log" | grep -v "^\[" | tail -90
