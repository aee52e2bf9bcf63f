#!/usr/bin/env bash
# One GPU call: build and run one of the experiments beside the calibration (cuda/calibrate/):
#   bash tools/device/experiment.sh walk_geometry [REPEATS] [SET]  # the TMA operand walk by geometry; SET
#       one of walk_geometry.cu's sets (all, scaling, order, wait, trace, producers, spread, consumer, footprint, loaded, kernels, floor, surface)
#   bash tools/device/experiment.sh burst_drift [REPEATS]          # do SMs loading in bursts stay in step?
#   bash tools/device/experiment.sh wgmma_shapes [REPEATS]         # the wgmma stream's rate by N and grouping
#   bash tools/device/experiment.sh store_sizes [REPEATS]          # small output tiles' drain, fragment vs bulk
#   bash tools/device/experiment.sh tensor_clock [REPEATS]         # the clock while some SMs stream wgmma
#   bash tools/device/experiment.sh dualgemm_trace [REPEATS] [M,N,K] # fp8 dualgemm loads, stage by stage
#   bash tools/device/experiment.sh consumer_chain [REPEATS]       # a consumer's k-block with mbarriers, no loads
#   bash tools/device/experiment.sh load_issue [REPEATS]           # what issuing a TMA load costs the issuing thread
# Its CSV goes to $OUT/<name>.csv.
set -o pipefail
name=${1:?usage: experiment.sh walk_geometry|burst_drift|wgmma_shapes|store_sizes|tensor_clock|dualgemm_trace|consumer_chain|load_issue [REPEATS] [SET]}
OUT=${OUT:-out}
mkdir -p "$OUT"
if ! source tools/device/setup.sh "tma_$name" >"$OUT/build.log" 2>&1; then
  tail -30 "$OUT/build.log"; echo "build failed"; exit 1
fi
B=${OVERLAP_BUILD:-build-device}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
timeout 300 "$B/cuda/runtime/tma_$name" "${2:-10}" ${3:+"$3"} | tee "$OUT/$name.csv"
