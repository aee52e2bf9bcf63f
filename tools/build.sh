#!/usr/bin/env bash
# Shared by tools/run.sh and tools/test.sh: install what is missing, configure, build.
# Usage: tools/build.sh [ninja targets...]   (no targets = everything)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tools/install_deps.sh"
build="${OVERLAP_BUILD_DIR:-$root/build}"
if [[ ! -f "$build/build.ninja" ]]; then
  # The Python package is built and tested too; ON makes a missing nanobind an error, not a skip.
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOVERLAP_BUILD_PYTHON=ON >/dev/null
fi
jobs=$(nproc)
ninja -C "$build" -j "$jobs" "$@"
