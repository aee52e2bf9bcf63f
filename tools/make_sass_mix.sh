#!/usr/bin/env bash
# Regenerates the SASS instruction-mix tables the model charges for our kernels, from the
# kernels as they compile now (tools/sass_mix.py). Run after changing a kernel; the CPU test
# sim.sass_mix_matches_* fail while a table and its kernel disagree by more than 10%.
# Usage: tools/make_sass_mix.sh [BUILD_DIR]   (default: build; needs nvcc)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
bash "$root/tools/fetch_nvdisasm.sh"
cmake --build "$build" --target gla_pingpong_cubin linrnn_full_fused_cubin gla_backward_cubin
# gating=2: the kernel's 256 gating threads are two warps on each of the SM's four schedulers.
python3 "$root/tools/sass_mix.py" --cubin "$build/cuda/gla/gla_pingpong_cubin.cubin" \
  --source "$root/cuda/gla/gla_pingpong_fused.cuh" --kernel gla_pingpong_fused_kernel \
  --nvdisasm "$root/.deps/cuda-tools/bin/nvdisasm" --profile "$root/profiles/H100.json" \
  --warps-per-scheduler gating=2 \
  --cpp "$root/sim/models/generated/gla_pingpong_fused_sass.hpp" --cpp-name kGlaPingpongFusedSass \
  --command "tools/make_sass_mix.sh"
# pingpong_materialized's paired kernels, a lone consumer: one warp a scheduler.
python3 "$root/tools/sass_mix.py" --cubin "$build/cuda/gla/gla_pingpong_cubin.cubin" \
  --source "$root/cuda/gla/gla_pingpong_kernel.cuh" --kernel gla_pingpong_kernel \
  --nvdisasm "$root/.deps/cuda-tools/bin/nvdisasm" --profile "$root/profiles/H100.json" \
  --cpp "$root/sim/models/generated/gla_pingpong_paired_sass.hpp" --cpp-name kGlaPingpongPairedSass \
  --command "tools/make_sass_mix.sh"
# The same, timed with two consumer warps a scheduler (a CTA of two work units: the consumers run
# the same code side by side and share each scheduler's issue slot and SFU quarter).
python3 "$root/tools/sass_mix.py" --cubin "$build/cuda/gla/gla_pingpong_cubin.cubin" \
  --source "$root/cuda/gla/gla_pingpong_kernel.cuh" --kernel gla_pingpong_kernel \
  --nvdisasm "$root/.deps/cuda-tools/bin/nvdisasm" --profile "$root/profiles/H100.json" \
  --warps-per-scheduler paired=2 \
  --cpp "$root/sim/models/generated/gla_pingpong_paired_two_sass.hpp" --cpp-name kGlaPingpongPairedTwoSass \
  --command "tools/make_sass_mix.sh"
# linrnn full_fused: 128 threads, one CTA per SM at the shapes where W stays in shared memory.
python3 "$root/tools/sass_mix.py" --cubin "$build/cuda/linrnn/linrnn_full_fused_cubin.cubin" \
  --source "$root/cuda/linrnn/linrnn_full_fused.cu" --kernel full_fused_kernel \
  --nvdisasm "$root/.deps/cuda-tools/bin/nvdisasm" --profile "$root/profiles/H100.json" \
  --cpp "$root/sim/models/generated/linrnn_full_fused_sass.hpp" --cpp-name kLinrnnFullFusedSass \
  --command "tools/make_sass_mix.sh"
# gla backward's state walks: 128 threads, one warp a scheduler (two CTAs an SM share them).
python3 "$root/tools/sass_mix.py" --cubin "$build/cuda/gla/gla_backward_cubin.cubin" \
  --source "$root/cuda/gla/gla_state_walk_kernel.cuh" --kernel gla_state_walk_kernel \
  --nvdisasm "$root/.deps/cuda-tools/bin/nvdisasm" --profile "$root/profiles/H100.json" \
  --cpp "$root/sim/models/generated/gla_state_walk_sass.hpp" --cpp-name kGlaStateWalkSass \
  --command "tools/make_sass_mix.sh"
echo "wrote sim/models/generated/gla_pingpong_fused_sass.hpp, gla_pingpong_paired_sass.hpp, gla_pingpong_paired_two_sass.hpp, linrnn_full_fused_sass.hpp and gla_state_walk_sass.hpp"
