#!/usr/bin/env bash
# Installs what overlap needs on a Debian machine, only where it is missing:
# build tools and C++ libraries from Debian; Python's headers and nanobind for the Python
# package's extension module, and what the package and its tests import (numpy, ml_dtypes,
# pandas, matplotlib, pytest, and the `safetensors` reader of the interoperability test).
# Safe to run repeatedly.
set -euo pipefail

debs=(cmake ninja-build g++ libeigen3-dev libtbb-dev libomp-dev nlohmann-json3-dev
      libcli11-dev libfmt-dev libgtest-dev libbenchmark-dev python3 python3-dev)
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

# Python packages, by the name each is imported as (the same as its package name here).
pymods=(safetensors numpy nanobind ml_dtypes pandas matplotlib pytest)
pymissing=()
for m in "${pymods[@]}"; do
  python3 -c "import $m" 2>/dev/null || pymissing+=("$m")
done
if ((${#pymissing[@]})); then
  echo "install_deps: installing python packages ${pymissing[*]}"
  python3 -m pip install -q "${pymissing[@]}" 2>&1 | grep -v -i "warning: running pip as" || true
fi

# CUTLASS / CuTe headers (the sm_90 GEMM mainloops under some CUDA kernels) from the
# `nvidia-cutlass` wheel on the Python package index, unpacked into the git-ignored .deps/.
# Only needed where nvcc exists; tools/device/deps.sh unpacks the same wheel on the GPU machine.
if command -v nvcc >/dev/null 2>&1 || [[ -x /usr/local/cuda/bin/nvcc ]]; then
  bash "$(dirname "$0")/fetch_cutlass.sh"
  # nvdisasm, for the test that checks the model's instruction counts against the kernels' SASS.
  bash "$(dirname "$0")/fetch_nvdisasm.sh"
fi
