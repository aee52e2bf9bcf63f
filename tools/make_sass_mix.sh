#!/usr/bin/env bash
# Regenerates the SASS instruction-mix tables the model charges for our kernels, from the
# kernels as they compile now (tools/sass_mix.py). Run after changing a kernel; the CPU test
# sim.sass_mix_matches_* fail while a table and its kernel disagree by more than 10%.
# Usage: tools/make_sass_mix.sh [BUILD_DIR]   (default: build; needs nvcc)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
bash "$root/tools/fetch_nvdisasm.sh"
cmake --build "$build" --target gla_pingpong_cubin linrnn_full_fused_cubin linrnn_scan_cubin projchain_activations_cubin gla_backward_cubin gla_chunk_cubin dualgemm_bf16_cubin dualgemm_fp8_cubin
# mix CUBIN SOURCE KERNEL TABLE NAME [sass_mix.py options]: one kernel's table from its cubin.
mix() {
  python3 "$root/tools/sass_mix.py" --cubin "$build/cuda/$1" --source "$root/cuda/$2" --kernel "$3" \
    --nvdisasm "$root/.deps/cuda-tools/bin/nvdisasm" --profile "$root/profiles/H100.json" \
    --cpp "$root/sim/models/generated/$4" --cpp-name "$5" --command "tools/make_sass_mix.sh" "${@:6}"
}
# gating=2: the kernel's 256 gating threads are two warps on each of the SM's four schedulers.
mix gla/gla_pingpong_cubin.cubin gla/gla_pingpong_fused.cuh gla_pingpong_fused_kernel \
  gla_pingpong_fused_sass.hpp kGlaPingpongFusedSass --warps-per-scheduler gating=2
# pingpong_materialized's paired kernels, a lone consumer: one warp a scheduler.
mix gla/gla_pingpong_cubin.cubin gla/gla_pingpong_kernel.cuh gla_pingpong_kernel \
  gla_pingpong_paired_sass.hpp kGlaPingpongPairedSass
# The same, timed with two consumer warps a scheduler (a CTA of two work units: the consumers run
# the same code side by side and share each scheduler's issue slot and SFU quarter).
mix gla/gla_pingpong_cubin.cubin gla/gla_pingpong_kernel.cuh gla_pingpong_kernel \
  gla_pingpong_paired_two_sass.hpp kGlaPingpongPairedTwoSass --warps-per-scheduler paired=2
# linrnn full_fused: 128 threads, one CTA per SM at the shapes where W stays in shared memory.
mix linrnn/linrnn_full_fused_cubin.cubin linrnn/linrnn_full_fused.cu full_fused_kernel \
  linrnn_full_fused_sass.hpp kLinrnnFullFusedSass
# linrnn's scan kernels (three_kernel's scan, semi_fused's scan + gate): 8 warps, two a scheduler;
# their regions lie in the kernel file and in the tile scan it includes.
mix linrnn/linrnn_scan_cubin.cubin linrnn/linrnn_scan_kernels.cu scan_kernelI \
  linrnn_scan_sass.hpp kLinrnnScanSass --source "$root/cuda/linrnn/linrnn_scan_tile.cuh" --warps-per-scheduler scan=2
# projchain's activation kernels (their bf16-pair forms): one item a pass of each loop.
mix projchain/projchain_activations_cubin.cubin projchain/projchain_activations.cu \
  "l2norm_heads_kernelILb1E|elementwise_kernelI.*Lb1EEEv" projchain_activations_sass.hpp kProjchainActivationsSass
# gla backward's state walks: 128 threads, one warp a scheduler (two CTAs an SM share them).
mix gla/gla_backward_cubin.cubin gla/gla_state_walk_kernel.cuh gla_state_walk_kernel \
  gla_state_walk_sass.hpp kGlaStateWalkSass
# gla backward's chunk kernels (pipelined, and warp-specialized: the same phases, compiled apart):
# 8 compute warps, two a scheduler; phase A's dA and A warps timed side by side by its sass-beside
# lines.
mix gla/gla_backward_cubin.cubin gla/gla_chunk_grad_kernel.cuh "gla_chunk_grad_(ws_)?kernel" \
  gla_chunk_grad_sass.hpp kGlaChunkGradSass --warps-per-scheduler all=2
# The sequential and pipelined forward's chunk kernel: 8 warps, two a scheduler (the all.* phases
# run by both, the out.* / state.* ones by one each, timed side by side by its sass-beside lines).
mix gla/gla_chunk_cubin.cubin gla/gla_chunk_kernel.cuh gla_chunk_kernel \
  gla_chunk_sass.hpp kGlaChunkSass --warps-per-scheduler all=2
# The dualgemm kernels' registers per thread (their occupancy), every instantiation of both formats.
python3 "$root/tools/kernel_registers.py" --cubin "$build/cuda/dualgemm/dualgemm_bf16_cubin.cubin" \
  --cubin "$build/cuda/dualgemm/dualgemm_fp8_cubin.cubin" --kernel dualgemm_kernel \
  --nvdisasm "$root/.deps/cuda-tools/bin/nvdisasm" --cpp "$root/sim/models/generated/dualgemm_registers.hpp" \
  --cpp-name kDualgemmRegisters --command "tools/make_sass_mix.sh"
echo "wrote sim/models/generated/dualgemm_registers.hpp"
echo "wrote sim/models/generated/gla_pingpong_fused_sass.hpp, gla_pingpong_paired_sass.hpp, gla_pingpong_paired_two_sass.hpp, linrnn_full_fused_sass.hpp, linrnn_scan_sass.hpp, projchain_activations_sass.hpp, gla_state_walk_sass.hpp, gla_chunk_grad_sass.hpp and gla_chunk_sass.hpp"
