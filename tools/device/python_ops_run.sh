#!/usr/bin/env bash
# The torch ops' tests (issue 17) in one call on the lent GPU machine: overlap.ops on every kernel
# variant and shape against the float64 oracles and flash-linear-attention, torch.compile, and the
# CPU-side op tests, with the machine's python3 and PyTorch. Logs go to $OUT (or out/).
#   bash tools/device/python_ops_run.sh [PACKAGE_DIR]
# PACKAGE_DIR: a built package (PACKAGE_DIR/overlap holding _core and _cuda_ops for this Python),
# e.g. built with nvcc on a CPU machine against Python 3.12's headers, which saves the device the
# kernels' compile. Without it the package is built here (tools/device/deps.sh: carry .debs and
# .deps/wheels). fla's wheels travel in .whl (tools/device/deps.sh).
set -o pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
pkg=${1:-}
if [[ -z $pkg ]]; then
  B=build-device-python
  if ! (source tools/device/deps.sh &&
        timeout 900 cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DOVERLAP_BUILD_PYTHON=ON -DOVERLAP_NATIVE=OFF \
          -DOVERLAP_BUILD_TESTS=OFF -DOVERLAP_BUILD_BENCH=OFF -DOVERLAP_BUILD_APP=OFF &&
        timeout 900 ninja -C $B -j "$(nproc)" _core _cuda_ops) >"$OUT/build.log" 2>&1; then
    tail -30 "$OUT/build.log"; echo "build failed"; exit 1
  fi
  pkg=$B/python/package
fi
# The package's runtime libraries (fmt, TBB) from the carried Debian packages; no build needed.
deps=/tmp/overlap-deps
mkdir -p $deps
for f in .debs/libfmt9_*.deb .debs/libtbb12_*.deb .debs/libtbbmalloc2_*.deb .debs/libhwloc15_*.deb; do
  [[ -f $f ]] && dpkg -x "$f" $deps
done
export LD_LIBRARY_PATH="$deps/usr/lib/x86_64-linux-gnu:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if ls .whl/*.whl >/dev/null 2>&1; then
  timeout 120 python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
    .whl/*.whl
fi
export PYTHONPATH="$pkg:/tmp/site${PYTHONPATH:+:$PYTHONPATH}" MPLBACKEND=Agg PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c "import torch, overlap.ops as o; print('torch', torch.__version__, 'kernels', o.kernels_available())" 2>&1 |
  tee "$OUT/import.log"
# -s prints each comparison's error ([ops_error] lines); the time limit keeps a hung kernel from
# eating the device budget.
# PYTEST_K picks tests (pytest -k, e.g. "not kernels"); default: all of the three files.
# TEST_TIMEOUT (seconds, default 420) bounds the run.
timeout ${TEST_TIMEOUT:-420} python3 -m pytest -s -q -p no:cacheprovider -rs ${PYTEST_K:+-k "$PYTEST_K"} tests/python/test_ops_gpu.py \
  tests/python/test_ops_torch.py tests/python/test_ops_checks.py >"$OUT/pytest.log" 2>&1
rc=$?
echo "pytest: exit $rc"
# (pytest's progress dots can stand before a line: not anchored.)
grep -oE "\[ops_(error|refused)\].*" "$OUT/pytest.log" >"$OUT/errors.txt"
grep -E "passed|failed|^FAILED|^ERROR|^SKIPPED" "$OUT/pytest.log" | tail -40
# The worst error per op and output variant (the full list is in errors.txt).
awk '$1 == "[ops_error]" {k = $2 " " $3 " " ($(NF-3)); if ($(NF-2) + 0 > m[k]) m[k] = $(NF-2) + 0}
     END {for (k in m) printf "worst %-42s %.3e\n", k, m[k]}' "$OUT/errors.txt" | sort
# The README's example: a GLA layer with chunk_gla from overlap.ops against fla's, timed
# (RUN_EXAMPLE=0 skips it).
if [[ ${RUN_EXAMPLE:-1} == 1 ]]; then
  timeout 120 python3 examples/gla_layer_vs_fla.py 2>&1 | grep -v Warning | tee "$OUT/example.log" || rc=1
fi
exit $rc
