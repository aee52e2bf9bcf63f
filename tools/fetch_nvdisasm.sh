#!/usr/bin/env bash
# Puts nvdisasm at .deps/cuda-tools/bin/nvdisasm (tools/sass_mix.py reads kernels' SASS with it;
# the CUDA toolkit on the project's machines ships nvcc and ptxas but not the disassemblers).
# From the `nvidia-cuda-nvdisasm` wheel on the Python package index, kept in .deps/wheels.
set -euo pipefail
version=13.2.51
root=$(cd "$(dirname "$0")/.." && pwd)
wheels=$root/.deps/wheels
dest=$root/.deps/cuda-tools
[[ -x $dest/bin/nvdisasm && -f $dest/VERSION && $(cat "$dest/VERSION") == "$version" ]] && exit 0
wheel=$(ls "$wheels"/nvidia_cuda_nvdisasm-$version-*.whl 2>/dev/null | head -1 || true)
if [[ -z $wheel ]]; then
  [[ ${1:-} == --offline ]] && { echo "fetch_nvdisasm: wheel missing in $wheels"; exit 1; }
  echo "fetch_nvdisasm: downloading nvidia-cuda-nvdisasm $version"
  mkdir -p "$wheels"
  python3 -m pip download -q --no-deps --only-binary=:all: "nvidia-cuda-nvdisasm==$version" -d "$wheels"
  wheel=$(ls "$wheels"/nvidia_cuda_nvdisasm-$version-*.whl | head -1)
fi
rm -rf "$dest"
mkdir -p "$dest/bin"
python3 - "$wheel" "$dest/bin" <<'PY'
import os, sys, zipfile
wheel, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith("/bin/nvdisasm"))
    out = os.path.join(dest, "nvdisasm")
    with open(out, "wb") as f:
        f.write(z.read(name))
    os.chmod(out, 0o755)
PY
echo "$version" >"$dest/VERSION"
