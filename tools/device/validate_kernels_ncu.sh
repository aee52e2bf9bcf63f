#!/usr/bin/env bash
# Every kernel of one `overlap validate` pass (one timed run, one input set) under Nsight
# Compute at the GPU's own clocks, caches flushed between kernels as ncu does: which library
# kernels run (cuBLAS's names carry tile, stages and cluster) and how long each of a workload's
# kernels takes; with NCU_UNITS=1 also how busy each unit is (DRAM, L2, L1, SM, issue, the
# tensor, FMA, ALU, XU and shared pipes), to set beside the model's bottleneck. Logs in $OUT
# (ncu.csv, and a line per call on stdout; with NCU_UNITS=1 a line per kernel, busiest first).
#   bash tools/device/validate_kernels_ncu.sh --workload projchain --variants wide_gemm unfused
#   NCU_UNITS=1 bash tools/device/validate_kernels_ncu.sh --workload projchain --shapes 'B=8,T=4096,d=2048,H=16,dk=128'
OUT=${OUT:-out}
mkdir -p "$OUT"
source tools/device/deps.sh >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
B=build-validate
{ cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOVERLAP_BUILD_TESTS=OFF -DOVERLAP_BUILD_BENCH=OFF &&
  ninja -C "$B" overlap-gpu; } >>"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
metrics=gpu__time_duration.sum
if [[ -n ${NCU_UNITS:-} ]]; then
  source tools/device/ncu_known_metrics.sh
  metrics=$(ncu_known_metrics "$OUT" gpu__time_duration.sum dram__throughput.avg.pct_of_peak_sustained_elapsed \
    lts__t_sectors.avg.pct_of_peak_sustained_elapsed l1tex__throughput.avg.pct_of_peak_sustained_active \
    sm__throughput.avg.pct_of_peak_sustained_elapsed sm__inst_issued.avg.pct_of_peak_sustained_active \
    sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active \
    sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active \
    sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active \
    sm__pipe_xu_cycles_active.avg.pct_of_peak_sustained_active sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_active)
  echo "ncu metrics used: $metrics"
fi
timeout 500 ncu --clock-control none --metrics "$metrics" --csv "$B/app/overlap-gpu" validate \
  --runs 1 --sets 1 --out "$OUT/validation" "$@" >"$OUT/ncu.csv" 2>"$OUT/ncu.err"
echo "ncu: exit $?"
python3 tools/ncu_kernel_lines.py "$OUT/ncu.csv" ${NCU_UNITS:+--units}
