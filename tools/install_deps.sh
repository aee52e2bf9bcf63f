#!/usr/bin/env bash
# Installs what overlap needs on a Debian machine, only where it is missing:
# build tools and C++ libraries from Debian, and the Python `safetensors` reader used by the
# interoperability test. Safe to run repeatedly.
set -euo pipefail

debs=(cmake ninja-build g++ libeigen3-dev libtbb-dev libomp-dev nlohmann-json3-dev
      libcli11-dev libfmt-dev libgtest-dev libbenchmark-dev python3)
missing=()
for p in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install_deps: installing ${missing[*]}"
  sudo_cmd=""
  [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! python3 -c "import safetensors, numpy" 2>/dev/null; then
  echo "install_deps: installing python packages safetensors, numpy"
  python3 -m pip install -q safetensors numpy 2>&1 | grep -v -i "warning: running pip as" || true
fi

# CUTLASS / CuTe headers (the sm_90 GEMM mainloops under some CUDA kernels) from the
# `nvidia-cutlass` wheel on the Python package index, unpacked into the git-ignored .deps/.
# Only needed where nvcc exists; tools/device/deps.sh unpacks the same wheel on the GPU machine.
if command -v nvcc >/dev/null 2>&1 || [[ -x /usr/local/cuda/bin/nvcc ]]; then
  bash "$(dirname "$0")/fetch_cutlass.sh"
  # nvdisasm, for the test that checks the model's instruction counts against the kernels' SASS.
  bash "$(dirname "$0")/fetch_nvdisasm.sh"
fi
