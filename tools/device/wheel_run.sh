#!/usr/bin/env bash
# `pip install .` on the lent GPU machine, then the torch ops' GPU tests on the installed wheel
# (tools/device/python_ops_run.sh with the installed package): the path a user takes. Offline:
# the build backend's wheels (scikit-build-core, nanobind, pathspec, packaging, and cmake: the
# machine's is older than pyproject.toml asks) travel in
# .deps/wheels beside the CUTLASS wheel (carry .deps/wheels, .debs and .whl).
#   pip download --no-deps -d .deps/wheels "scikit-build-core>=0.10" "nanobind>=2.0" pathspec packaging
#   pip download --no-deps --only-binary :all: --platform manylinux2014_x86_64 -d .deps/wheels "cmake>=3.25,<4"
#   bash tools/device/wheel_run.sh
set -o pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
if ! source tools/device/deps.sh >"$OUT/deps.log" 2>&1; then
  tail -20 "$OUT/deps.log"; echo "dependency setup failed"; exit 1
fi
set +e
site=/tmp/overlap-wheel
rm -rf "$site" /tmp/overlap-dist
start=$(date +%s)
# Build isolation takes the backend from .deps/wheels; numpy, pandas, ml_dtypes are the
# machine's (--no-deps at install).
CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) timeout 900 python3 -m pip wheel . --no-deps --no-index --find-links .deps/wheels \
  -w /tmp/overlap-dist >"$OUT/wheel_build.log" 2>&1 || { tail -40 "$OUT/wheel_build.log"; echo "wheel build failed"; exit 1; }
echo "wheel built in $(( $(date +%s) - start )) s: $(ls /tmp/overlap-dist)"
python3 -m pip install -q --no-deps --no-index --target "$site" /tmp/overlap-dist/overlap-*.whl || exit 1
unzip -l /tmp/overlap-dist/overlap-*.whl | grep -E "_core|_cuda_ops"
bash tools/device/python_ops_run.sh "$site"
