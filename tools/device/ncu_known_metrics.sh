# Sourced: ncu_known_metrics DIR METRIC... prints, comma-separated, the metrics this Nsight
# Compute knows for gh100 (names differ between chips and versions), listing them in DIR once.
ncu_known_metrics() {
  local dir=$1 list="" m
  shift
  [[ -s $dir/ncu_metrics.txt ]] || ncu --query-metrics --chip gh100 >"$dir/ncu_metrics.txt" 2>&1
  for m in "$@"; do
    grep -q "^${m%%.*}\b\|^\s*${m%%.*}\s" "$dir/ncu_metrics.txt" && list="${list:+$list,}$m"
  done
  echo "$list"
}
