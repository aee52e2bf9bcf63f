#!/usr/bin/env bash
# Issue 16's goal shapes at M = 256 against the soonest a TMA kernel with their walk can have its
# operands, in one call on one GPU:
#   1. walk_geometry's `floor` set: each best kernel's operand walk alone, once and cold (L2
#      flushed), no MMA, epilogue or store, timed as `overlap validate` times a call;
#   2. the best kernels themselves, timed by `overlap validate` (the same timing);
#   3. the same kernels in the benchmark beside torch (the timing the goals name).
#   bash tools/device/dualgemm_floor.sh
# Logs and reports under $OUT (or out/): walk_geometry.csv, validate/, bench/.
set -o pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
variants="tile128x64_stages6_ws_tmastore_es_lean tile128x48_stages7_ws_tmastore_es_lean"
echo "== the walks alone (us_per_launch is the call, validate's timing)"
OUT="$OUT" bash tools/device/experiment.sh walk_geometry "${REPEATS:-15}" floor | grep -v "^#" | cut -d, -f2,5,8,12,13,16,17,21
echo "== the kernels, overlap validate"
SKIP_CALIBRATE=1 OUT="$OUT/validate" bash tools/device/validate_run.sh --workload dualgemm --variants $variants \
  --shapes 'L=1,M=256,N=4096,K=7168,fmt=1;L=1,M=256,N=3072,K=4096,fmt=1;L=1,M=256,N=3072,K=4096,fmt=0' |
  grep -E "^\| dualgemm \| tile"
echo "== the kernels, the benchmark"
SANITIZERS="" OUT="$OUT/bench" \
  BENCH_ARGS="--shapes=256,4096,7168;256,3072,4096 --formats=bf16,fp8 --variants=${variants// /,} --reps 60 --flush read" \
  bash tools/device/dualgemm_run.sh bench | grep -vE "^\[|Warning" | tail -40
