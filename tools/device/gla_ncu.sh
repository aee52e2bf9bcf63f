#!/usr/bin/env bash
# Which unit binds each gla schedule (Nsight Compute, one launch per variant and shape):
# duration, DRAM and SM throughput, the utilization of each pipe (tensor wgmma / mma.sync,
# FMA, ALU, XU = special functions, shared memory), issue slots, and the warp stall reasons.
#   bash tools/device/gla_ncu.sh [VARIANTS] [SHAPES]   (after tools/device/setup.sh built the C API)
# Writes $OUT/ncu_<variant>_<shape>.txt and prints one summary table.
set -o pipefail
OUT=${OUT:-out}
B=${OVERLAP_BUILD:-build-device}
variants=${1:-sequential_fused,pipelined_fused,pingpong_fused}
shapes=${2:-"8,4096,16,128,128;4,4096,32,64,64"}
source tools/device/ncu_known_metrics.sh
wanted="gpu__time_duration.sum dram__throughput.avg.pct_of_peak_sustained_elapsed
sm__throughput.avg.pct_of_peak_sustained_elapsed sm__inst_issued.avg.pct_of_peak_sustained_active
sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active
sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active
sm__pipe_xu_cycles_active.avg.pct_of_peak_sustained_active sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active
sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_active
l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed
sm__warps_active.avg.pct_of_peak_sustained_active"
metrics=$(ncu_known_metrics "$OUT" $wanted)
echo "ncu metrics used: $metrics"
IFS=';' read -ra shape_list <<<"$shapes"
for shape in "${shape_list[@]}"; do
  for v in ${variants//,/ }; do
    f="$OUT/ncu_${v}_${shape//,/_}.txt"
    # A materialized variant is two kernels (states, then outputs): profile one pair.
    n=1; [[ $v == *_materialized ]] && n=2
    timeout 150 ncu --kernel-name regex:gla_ --launch-skip $n --launch-count $n --metrics "$metrics" \
      --section WarpStateStats --print-details all \
      python3 bench/gpu/bench_gla.py --lib "$B/cuda/gla/liboverlap_gla_capi.so" --no-peers --reps 1 --warmup 1 \
      --variants "$v" --shapes "$shape" >"$f" 2>&1
    echo "== $v $shape (ncu exit $?)"
    # Per kernel launch: its name line, then its metrics and top stall reasons.
    grep -E "^  [a-z_]+.*\(|^\s+(gpu__time|dram__|sm__|l1tex__)|Warp Cycles Per Issued|^\s+Stall [A-Z]" "$f" |
      awk '/^  [a-z_]/ {print "  " substr($0, 1, 110); next} {printf "   %-80s %s %s\n", $1, $2, $3}'

  done
done
# With SOURCE=1: per-SASS-instruction stall samples of pingpong_fused at the first shape (CSV;
# tools/sass_mix.py's region markers attribute them to the kernel's roles on the host).
if [[ -n ${SOURCE:-} ]]; then
  shape=${shape_list[0]}
  timeout 150 ncu --kernel-name regex:gla_pingpong_fused --launch-skip 1 --launch-count 1 --section SourceCounters \
    --section WarpStateStats --page source --print-source sass --csv \
    python3 bench/gpu/bench_gla.py --lib "$B/cuda/gla/liboverlap_gla_capi.so" --no-peers --reps 1 --warmup 1 \
    --variants pingpong_fused --shapes "$shape" >"$OUT/ncu_source_${shape//,/_}.csv" 2>&1
  echo "ncu source page: exit $? ($(wc -l <"$OUT/ncu_source_${shape//,/_}.csv") lines)"
fi
