#!/usr/bin/env python3
"""Interoperability of overlap's safetensors files with the `safetensors` Python package.

1. A file written by overlap opens with the package, and every tensor's dtype, shape and bytes
   equal what overlap wrote (compared bit for bit against raw dumps).
2. A file written by the package (through numpy) is read by overlap with the same content.
3. A real test-vector set written by `overlap vectors` opens with the package and carries the
   promised metadata.
Usage: safetensors_interop.py FIXTURE_BINARY OVERLAP_BINARY
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import safetensors
from safetensors.numpy import save_file


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def main():
    fixture, overlap = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "fixture.safetensors")
        subprocess.run([fixture, "write", path, tmp], check=True)
        with open(path, "rb") as f:
            entries = dict(safetensors.deserialize(f.read()))
        if len(entries) != 6:
            fail(f"expected 6 tensors, package saw {sorted(entries)}")
        for name, info in entries.items():
            with open(os.path.join(tmp, name + ".bin"), "rb") as raw:
                want = raw.read()
            if bytes(info["data"]) != want:
                fail(f"{name}: bytes differ")
            # The package may spell dtypes as safetensors does ("BF16") or in lower case ("bfloat16").
            spelled = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16",
                       "F8_E4M3": "float8_e4m3fn", "U8": "uint8"}[name[2:]]
            if info["dtype"] not in (name[2:], spelled):
                fail(f"{name}: dtype {info['dtype']}")
            if list(info["shape"]) != ([7] if name == "t_U8" else [3, 4, 5]):
                fail(f"{name}: shape {info['shape']}")
        with safetensors.safe_open(path, framework="numpy") as f:
            if f.metadata().get("note") != "interop fixture":
                fail(f"metadata {f.metadata()}")
            f32 = f.get_tensor("t_F32")
        with open(os.path.join(tmp, "t_F32.bin"), "rb") as raw:
            if f32.tobytes() != raw.read():
                fail("numpy view of t_F32 differs")

        # 2. The package writes, overlap reads.
        back = os.path.join(tmp, "from_python.safetensors")
        arrays = {"o": np.arange(12, dtype=np.float32).reshape(3, 4), "h": np.full((2,), 0.5, np.float16)}
        save_file(arrays, back, metadata={"producer": "numpy"})
        out = subprocess.run([fixture, "read", back], check=True, capture_output=True, text=True).stdout
        want = {f"tensor o F32 [3, 4] {sum(arrays['o'].tobytes())}",
                f"tensor h F16 [2] {sum(arrays['h'].tobytes())}", "meta producer numpy"}
        if set(out.strip().splitlines()) != want:
            fail(f"overlap read {out!r}, expected {want}")

        # 3. A real vector set.
        vec = subprocess.run([overlap, "vectors", "--workload", "gla", "--seed", "3", "--out", tmp],
                             check=True, capture_output=True, text=True).stdout.strip()
        with safetensors.safe_open(vec, framework="numpy") as f:
            meta = f.metadata()
            for key in ("workload", "shape", "seed", "distribution", "format_version", "tolerance"):
                if key not in meta:
                    fail(f"vector metadata lacks {key}: {meta}")
            tol = json.loads(meta["tolerance"])
            if meta["workload"] != "gla" or "o" not in tol:
                fail(f"vector metadata {meta}")
            o = f.get_tensor("o")
            if o.dtype != np.float64:
                fail(f"expected outputs are {o.dtype}, want float64")
    print("safetensors interop: every check passed")


if __name__ == "__main__":
    main()
