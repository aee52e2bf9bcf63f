#!/usr/bin/env bash
# Every GPU run starts here (run it from the repository root on the lent GPU machine):
#   source tools/device/setup.sh TARGET...   # deps, then builds TARGETs into build-device/
# e.g. `source tools/device/setup.sh test_cuda_linrnn overlap_linrnn_capi`. Naming the targets
# keeps one workload's run independent of another workload's unfinished kernels.
# Dependencies: tools/device/deps.sh.
source tools/device/deps.sh
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv
# Only the GPU slice (reference, kernels, GPU tests): see tools/device/gpu_build/CMakeLists.txt.
cmake -S tools/device/gpu_build -B "$OVERLAP_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "$OVERLAP_BUILD" -j "$(nproc)" "$@"
