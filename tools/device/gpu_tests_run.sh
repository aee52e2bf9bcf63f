#!/usr/bin/env bash
# Every workload's GPU tests in one call, no sanitizers and no benchmark (the per-workload
# scripts do those): the check after a change that touches all of them, e.g. the output check
# itself. Prints, per workload, the gtest summary, the skipped cases (each must be an expected
# refusal) and the worst whole-tensor and worst per-block relative error per variant.
#   bash tools/device/gpu_tests_run.sh [WORKLOAD...]     (default: gla linrnn projchain dualgemm)
set -o pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
workloads=${*:-gla linrnn projchain dualgemm}
targets=""
for w in $workloads; do targets+=" test_cuda_$w"; done
if ! source tools/device/setup.sh $targets >"$OUT/build.log" 2>&1; then
  tail -30 "$OUT/build.log"; echo "build failed"; exit 1
fi
set +e
B=${OVERLAP_BUILD:-build-device}
status=0
for w in $workloads; do
  log="$OUT/tests_$w.log"
  timeout ${TEST_TIMEOUT:-240} "$B/tests_cuda/$w/test_cuda_$w" >"$log" 2>&1
  rc=$?
  [[ $rc == 0 ]] || status=1
  echo "== test_cuda_$w: exit $rc"
  [[ $rc == 124 ]] && tail -5 "$log"  # the test that hung
  grep -E "^\[  (PASSED|FAILED|SKIPPED) *\] [0-9]+ tests?" "$log"
  grep -E "^\[  FAILED  \] [A-Z]" "$log" | sed 's/ (.*//' | sort -u | awk '{print "  failed: " $NF}' | head -30
  grep -E "^\[  SKIPPED \] [A-Z]" "$log" | sed 's/ (.*//' | sort -u | awk '{print "  skipped: " $NF}' | head -30
  # Labels start with the variant's name; the last field is the error.
  for kind in rel_error block_error; do
    grep -E "^\[ $kind \] " "$log" | awk -v k=$kind '{v=$4; sub(":", "", v); e=$NF+0; n[v]++; if (e>m[v]) m[v]=e}
      END {for (v in m) printf "  worst %-11s %-26s %.3e (%d checks)\n", k, v, m[v], n[v]}' | sort
  done
done
exit $status
