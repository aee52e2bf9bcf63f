#!/usr/bin/env bash
# Nsight Compute on dualgemm variants with the shared-memory and tensor-pipe counters that the
# default `dualgemm_run.sh ncu` sections leave out (which of the metrics below this ncu knows is
# asked first, so an unknown name does not fail the run).
#   NCU_VARIANT="a b" NCU_SHAPE=M,N,K NCU_FORMAT=fp8 bash tools/device/dualgemm_smem_ncu.sh
OUT=${OUT:-out}
mkdir -p "$OUT"
ncu --query-metrics --chip gh100 >"$OUT/ncu_metrics.txt" 2>&1
wanted="l1tex__data_bank_reads.avg.pct_of_peak_sustained_elapsed l1tex__data_bank_writes.avg.pct_of_peak_sustained_elapsed
sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_elapsed
l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed sm__inst_executed_pipe_tensor_op_gmma.sum
sm__cycles_elapsed.avg"
metrics=""
for m in $wanted; do
  if grep -q "^${m%%.*} " "$OUT/ncu_metrics.txt"; then metrics="$metrics${metrics:+,}$m"; fi
done
echo "metrics: $metrics"
NCU_METRICS="$metrics" bash tools/device/dualgemm_run.sh ncu
for f in "$OUT"/ncu_*.txt; do
  [[ $f == *ncu_metrics.txt ]] && continue
  echo "== $f"
  grep -E "data_bank|gmma|pipe_shared|wavefronts_mem_shared|cycles_elapsed|Duration" "$f" | head -20
done
