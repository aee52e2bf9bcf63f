#!/usr/bin/env bash
# A K sweep of dualgemm kernels on the lent GPU, in one call: each variant timed at one M and N
# and several K, as bench/gpu/bench_dualgemm.py times calls (L2 flushed before each, interleaved
# turns), into $OUT/ksweep.json. On the host, tools/ksweep_fit.py separates each kernel's
# k-loop rate from its fixed cost, beside the model's:
#   bash tools/device/dualgemm_ksweep.sh
#   python3 tools/ksweep_fit.py ksweep.json build/app/overlap --hw H100
# Knobs (environment): KSWEEP_VARIANTS (comma-separated, or `all` for every compiled variant;
# default the 64x64 / 128x128 pair),
# KSWEEP_FORMATS (default fp8,bf16), KSWEEP_MN (M,N pairs, space-separated; default 256,3072),
# KSWEEP_K (space-separated; default 1024 2048 4096 8192), KSWEEP_REPS (default 20).
set -o pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
if ! source tools/device/setup.sh overlap_dualgemm_capi >"$OUT/build.log" 2>&1; then
  tail -20 "$OUT/build.log"; echo "build failed"; exit 1
fi
B=${OVERLAP_BUILD:-build-device}
shapes=""
for mn in ${KSWEEP_MN:-256,3072}; do
  for k in ${KSWEEP_K:-1024 2048 4096 8192}; do shapes="${shapes:+$shapes;}$mn,$k"; done
done
variants=${KSWEEP_VARIANTS:-tile64x64_stages4_ws,tile128x128_stages4_ws}
[ "$variants" = all ] && variants=""  # bench_dualgemm.py's default: every variant
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm --format=csv,noheader
PYTHONUNBUFFERED=1 timeout ${BENCH_TIMEOUT:-300} python3 bench/gpu/bench_dualgemm.py \
  --lib "$B/cuda/dualgemm/liboverlap_dualgemm_capi.so" --out "$OUT/ksweep.json" \
  --variants "$variants" \
  --formats "${KSWEEP_FORMATS:-fp8,bf16}" --shapes "$shapes" --reps "${KSWEEP_REPS:-20}" --flush read 2>&1 |
  tee "$OUT/ksweep.log" | grep -E "^## |^\| tile|SM clock"
