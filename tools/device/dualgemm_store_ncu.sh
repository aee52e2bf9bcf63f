#!/usr/bin/env bash
# Nsight Compute on the dualgemm epilogue question (direct fragment stores against a TMA store):
# stall reasons (drain at exit, LSU throttle, barriers) and store requests/sectors at L1 and L2,
# at the GPU's own clocks, for 128 x 128 and 128 x 64 tiles. Logs in $OUT.
#   bash tools/device/dualgemm_store_ncu.sh
OUT=${OUT:-out}
mkdir -p "$OUT"
set -o pipefail
bash tools/device/dualgemm_run.sh build > $OUT/build.txt 2>&1 || { tail $OUT/build.txt; exit 1; }
B=build-device
M="smsp__average_warps_issue_stalled_drain_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_membar_per_issue_active.ratio,smsp__warps_issue_stalled_drain.sum,smsp__warps_issue_stalled_lg_throttle.sum,smsp__warps_issue_stalled_barrier.sum,smsp__warps_issue_stalled_long_scoreboard.sum,smsp__warps_issue_stalled_wait.sum,smsp__warps_issue_stalled_math_pipe_throttle.sum,smsp__warps_issue_stalled_sleeping.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,lts__t_sectors_op_write.sum,lts__t_requests_op_write.sum,gpu__time_duration.sum,sm__cycles_elapsed.max,smsp__cycles_active.avg"
for job in "512,4096,7168 tile128x128_stages4_ws" "512,4096,7168 tile128x128_stages4_ws_tmastore" "256,4096,7168 tile128x64_stages4_ws" "256,4096,7168 tile128x64_stages4_ws_tmastore"; do
  set -- $job
  timeout 120 ncu --kernel-name regex:dualgemm_kernel --launch-skip 1 --launch-count 1 --clock-control none --metrics $M \
    python3 bench/gpu/bench_dualgemm.py --lib $B/cuda/dualgemm/liboverlap_dualgemm_capi.so --reps 1 --warmup 1 \
    --variants $2 --shapes $1 --formats fp8 > $OUT/ncu_$2_$1.txt 2>&1
  echo "== $2 $1: exit $?"
  grep -E "smsp__|l1tex__|lts__|gpu__time|sm__cycles" $OUT/ncu_$2_$1.txt
done
