#!/usr/bin/env bash
# Dependencies for every GPU run (source it from the repository root on the lent GPU machine):
#   source tools/device/deps.sh
# The machine has nvcc, cmake, ninja and PyTorch but none of our C++ dependencies and no
# network, so the Debian packages travel in the git-ignored folder .debs/ (fetched on a Debian
# machine with `apt-get download`, list below) and are unpacked into a prefix; Python peers
# travel as wheels in .whl/ (installed into a target folder).
#   apt-get download libeigen3-dev libtbb-dev libtbb12 libtbbmalloc2 libhwloc15 \
#     nlohmann-json3-dev libcli11-dev libfmt-dev libfmt9 libgtest-dev libbenchmark-dev \
#     libbenchmark1debian libtbbbind-2-5
#   pip download --no-deps (python 3.12 wheels) flash-linear-attention==0.6.0 fla-core==0.6.0
# CUTLASS headers come from the wheel tools/fetch_cutlass.sh keeps in .deps/wheels (carry it).
set -eo pipefail
OVERLAP_DEPS=${OVERLAP_DEPS:-/tmp/overlap-deps}
OVERLAP_BUILD=${OVERLAP_BUILD:-build-device}
mkdir -p "$OVERLAP_DEPS"
for f in .debs/*.deb; do dpkg -x "$f" "$OVERLAP_DEPS"; done
export CMAKE_PREFIX_PATH="$OVERLAP_DEPS/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
export LD_LIBRARY_PATH="$OVERLAP_DEPS/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
bash tools/fetch_cutlass.sh --offline
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH="/tmp/site${PYTHONPATH:+:$PYTHONPATH}"
fi
