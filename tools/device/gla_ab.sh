#!/usr/bin/env bash
# A/B timing of pingpong_fused builds that differ by compile-time flags, in turns, same inputs.
#   SPECS="name:flags;name:flags" SHAPES="B,T,H,K,V;..." ROUNDS=2 bash tools/device/gla_ab.sh
# Builds the gla C API once per spec (in parallel, build-ab-<name>), then runs bench_gla.py
# (--no-peers, pingpong_fused) with each library, ROUNDS times round-robin.
set -o pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
source tools/device/deps.sh >"$OUT/ab_deps.log" 2>&1 || { echo "deps failed"; exit 1; }
IFS=';' read -ra specs <<<"${SPECS:?name:flags;...}"
pids=()
for spec in "${specs[@]}"; do
  name=${spec%%:*} flags=${spec#*:}
  ( cmake -S tools/device/gpu_build -B "build-ab-$name" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CUDA_FLAGS="$flags" >/dev/null && ninja -C "build-ab-$name" overlap_gla_capi ) >"$OUT/ab_build_$name.log" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || { echo "an A/B build failed"; tail -5 "$OUT"/ab_build_*.log; exit 1; }; done
for r in $(seq 1 "${ROUNDS:-2}"); do
  for spec in "${specs[@]}"; do
    name=${spec%%:*}
    echo "== round $r: $name"
    PYTHONUNBUFFERED=1 timeout 200 python3 bench/gpu/bench_gla.py --lib "build-ab-$name/cuda/gla/liboverlap_gla_capi.so" \
      --no-peers --reps 20 --warmup 3 --variants pingpong_fused --shapes "${SHAPES:?}" 2>&1 | grep -E "^\| pingpong|^## "
  done
done
