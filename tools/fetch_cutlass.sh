#!/usr/bin/env bash
# Puts the CUTLASS / CuTe headers at .deps/cutlass/include (what cmake/OverlapCuda.cmake looks
# for). The wheel is kept in .deps/wheels/ so a machine without network (the lent GPU) can
# unpack the same file: `bash tools/fetch_cutlass.sh --offline`.
set -euo pipefail
version=4.2.0.0
root=$(cd "$(dirname "$0")/.." && pwd)
wheels=$root/.deps/wheels
dest=$root/.deps/cutlass
wheel=$wheels/nvidia_cutlass-$version-py3-none-any.whl
[[ -f $dest/include/cute/tensor.hpp && -f $dest/VERSION && $(cat "$dest/VERSION") == "$version" ]] && exit 0
if [[ ! -f $wheel ]]; then
  [[ ${1:-} == --offline ]] && { echo "fetch_cutlass: $wheel missing (carry .deps/wheels)"; exit 1; }
  echo "fetch_cutlass: downloading nvidia-cutlass $version"
  mkdir -p "$wheels"
  python3 -m pip download -q --no-deps "nvidia-cutlass==$version" -d "$wheels"
fi
rm -rf "$dest"
python3 - "$wheel" "$dest/include" <<'PY'
import sys, zipfile, pathlib
wheel, dest = sys.argv[1], pathlib.Path(sys.argv[2])
prefix = "cutlass_library/source/include/"
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.startswith(prefix) and not name.endswith("/"):
            out = dest / name[len(prefix):]
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(z.read(name))
PY
echo "$version" >"$dest/VERSION"
echo "fetch_cutlass: headers at .deps/cutlass/include"
