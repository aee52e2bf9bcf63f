#!/usr/bin/env bash
# Every kernel's duration in one `overlap validate` pass (one timed run, one input set) under
# Nsight Compute at the GPU's own clocks, caches flushed between kernels as ncu does: which
# library kernels run (cuBLAS's names carry tile, stages and cluster) and how long each of a
# workload's kernels takes. Logs in $OUT (ncu.csv, and a line per call on stdout).
#   bash tools/device/validate_kernels_ncu.sh --workload projchain --variants wide_gemm unfused
OUT=${OUT:-out}
mkdir -p "$OUT"
source tools/device/deps.sh >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
B=build-validate
{ cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOVERLAP_BUILD_TESTS=OFF -DOVERLAP_BUILD_BENCH=OFF &&
  ninja -C "$B" overlap-gpu; } >>"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
timeout 500 ncu --clock-control none --metrics gpu__time_duration.sum --csv "$B/app/overlap-gpu" validate \
  --runs 1 --sets 1 --out "$OUT/validation" "$@" >"$OUT/ncu.csv" 2>"$OUT/ncu.err"
echo "ncu: exit $?"
# One line per call: the kernels in launch order, microseconds (a call ends at its L2 flush or
# its last activation kernel).
python3 - "$OUT/ncu.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head, rows = rows[0], rows[1:]
name, value = head.index("Kernel Name"), head.index("Metric Value")
line = []
for r in rows:
    short = r[name].split("(")[0].replace("void ", "").split("::")[-1][:48]
    line.append(f"{short} {float(r[value].replace(',', '')) / 1e3:.1f}")
    if "read_all" in short:
        print(" | ".join(line))
        line = []
if line:
    print(" | ".join(line))
PY
