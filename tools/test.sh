#!/usr/bin/env bash
# Installs what is missing, builds everything (CUDA code too where nvcc exists), runs the CPU
# test suite, then runs the vector-reader fuzz test again under AddressSanitizer + UBSan.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${OVERLAP_BUILD_DIR:-$root/build}"
"$root/tools/build.sh"
# Idle OpenMP threads sleep instead of spinning, so parallel test processes on 2 cores do not
# steal each other's time.
export OMP_WAIT_POLICY=PASSIVE
ctest --test-dir "$build" -L cpu --output-on-failure -j "$(nproc)"

asan="$root/build-asan"
if [[ ! -f "$asan/build.ninja" ]]; then
  (cd "$root" && cmake --preset asan >/dev/null)
fi
ninja -C "$asan" -j "$(nproc)" test_safetensors
ctest --test-dir "$asan" -R "Safetensors" --output-on-failure -j "$(nproc)"
