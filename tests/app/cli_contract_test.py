#!/usr/bin/env python3
"""The `overlap` tool's contract with its users, end to end: good input works, and every kind
of bad input gets a one-line error naming the problem and the value, a non-zero exit code, and
leaves no half-written output behind.
Usage: cli_contract_test.py OVERLAP_BINARY"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

OVERLAP = sys.argv[1]
failures = []
passed = 0


def run(*args):
    return subprocess.run([OVERLAP, *args], capture_output=True, text=True)


def expect(name, result, code, *needles):
    global passed
    text = result.stdout + result.stderr
    problems = []
    if result.returncode != code:
        problems.append(f"exit {result.returncode}, expected {code}")
    for n in needles:
        if n not in text:
            problems.append(f"output lacks {n!r}")
    if code == 2 and len([l for l in result.stderr.splitlines() if l.startswith("overlap: error:")]) != 1:
        problems.append("expected exactly one 'overlap: error:' line on stderr")
    if problems:
        failures.append(f"{name}: {'; '.join(problems)}\n--- output ---\n{text}")
    else:
        passed += 1


NUMPY_DTYPES = {"F32": np.float32, "F64": np.float64}


def rewrite(src, dst, change):
    """Rewrites a safetensors file: change(tensors) edits a dict name -> numpy array for F32/F64
    tensors (others travel as raw bytes, since numpy has no bfloat16); metadata is kept."""
    data = open(src, "rb").read()
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    meta = header.pop("__metadata__", None)
    tensors, raw = {}, {}
    for name, info in header.items():
        b, e = info["data_offsets"]
        if info["dtype"] in NUMPY_DTYPES:
            tensors[name] = np.frombuffer(body[b:e], NUMPY_DTYPES[info["dtype"]]).reshape(info["shape"])
        else:
            raw[name] = (info["dtype"], info["shape"], body[b:e])
    change(tensors)
    out, blob = {}, b""
    if meta is not None:
        out["__metadata__"] = meta
    items = [(k, {v: k2 for k2, v in NUMPY_DTYPES.items()}[t.dtype.type], list(t.shape), t.tobytes())
             for k, t in tensors.items()] + [(k, d, s, b) for k, (d, s, b) in raw.items()]
    for name, dtype, shape, payload in sorted(items):
        out[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(blob), len(blob) + len(payload)]}
        blob += payload
    text = json.dumps(out).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    open(dst, "wb").write(len(text).to_bytes(8, "little") + text + blob)


with tempfile.TemporaryDirectory() as tmp:
    j = lambda *p: os.path.join(tmp, *p)
    r = run("vectors", "--workload", "gla", "--shape", "B=1,T=37,H=2,K=32,V=16", "--seed", "4", "--out", tmp)
    expect("vectors writes a file", r, 0, ".safetensors")
    vec = r.stdout.strip()

    expect("reference writes a result", run("reference", "--vectors", vec, "--out", j("res.safetensors")), 0)
    expect("check passes the fast reference", run("check", "--vectors", vec, "--result", j("res.safetensors")), 0,
           "PASS")
    expect("check --json", run("check", "--vectors", vec, "--result", j("res.safetensors"), "--json"), 0,
           '"pass": true')

    # A wrong result: 5% off everywhere fails with exit code 1.
    rewrite(j("res.safetensors"), j("wrong.safetensors"), lambda t: t.update(o=t["o"] * np.float32(1.05)))
    expect("check fails a wrong result", run("check", "--vectors", vec, "--result", j("wrong.safetensors")), 1,
           "FAIL")

    def add_nan(t):
        o = t["o"].copy()
        o.flat[3] = np.nan
        t["o"] = o
    rewrite(j("res.safetensors"), j("nan.safetensors"), add_nan)
    expect("check fails a NaN", run("check", "--vectors", vec, "--result", j("nan.safetensors")), 1, "FAIL")
    rewrite(j("res.safetensors"), j("shape.safetensors"), lambda t: t.update(o=np.ascontiguousarray(t["o"][:, :5])))
    expect("check fails a misshapen output", run("check", "--vectors", vec, "--result", j("shape.safetensors")), 1,
           "shape")
    rewrite(j("res.safetensors"), j("missing.safetensors"), lambda t: t.pop("hT"))
    expect("check fails a missing output", run("check", "--vectors", vec, "--result", j("missing.safetensors")), 1,
           "missing from result")

    # Bad input files.
    data = open(vec, "rb").read()
    open(j("trunc.safetensors"), "wb").write(data[: len(data) // 2])
    expect("truncated vector file", run("check", "--vectors", j("trunc.safetensors"), "--result",
                                        j("res.safetensors")), 2, "truncated", "trunc.safetensors")
    r = run("reference", "--vectors", j("trunc.safetensors"), "--out", j("never.safetensors"))
    expect("reference on a truncated file", r, 2, "truncated")
    if os.path.exists(j("never.safetensors")):
        failures.append("a failed `reference` left its output file behind")
    header_len = int.from_bytes(data[:8], "little")
    lied = data[:8] + data[8:8 + header_len].replace(b'"data_offsets":[0,', b'"data_offsets":[1,', 1) + data[8 + header_len:]
    open(j("lie.safetensors"), "wb").write(lied)
    expect("header lying about offsets", run("check", "--vectors", j("lie.safetensors"), "--result",
                                             j("res.safetensors")), 2, "lie.safetensors")

    def positive_gate(t):
        g = t["g"].copy()
        g.flat[5] = 0.25
        t["g"] = g
    rewrite(vec, j("gpos.safetensors"), positive_gate)
    expect("gate g > 0", run("check", "--vectors", j("gpos.safetensors"), "--result", j("res.safetensors")), 2,
           "0.25")

    def nan_gate(t):
        g = t["g"].copy()
        g.flat[2] = np.nan
        t["g"] = g
    rewrite(vec, j("gnan.safetensors"), nan_gate)
    expect("NaN in an input", run("check", "--vectors", j("gnan.safetensors"), "--result", j("res.safetensors")), 2,
           "nan")

    # Bad arguments.
    expect("unknown workload", run("vectors", "--workload", "glaa", "--out", tmp), 2, "unknown workload 'glaa'")
    expect("zero size", run("vectors", "--workload", "gla", "--shape", "B=0", "--out", tmp), 2, "'B' = 0")
    expect("unknown shape key", run("vectors", "--workload", "gla", "--shape", "Q=3", "--out", tmp), 2, "'Q'")
    expect("non-integer size", run("vectors", "--workload", "gla", "--shape", "T=1.5", "--out", tmp), 2, "'1.5'")
    expect("unknown distribution", run("vectors", "--workload", "gla", "--distribution", "wild", "--out", tmp), 2,
           "'wild'")
    before = set(os.listdir(tmp))
    run("vectors", "--workload", "gla", "--shape", "B=0", "--out", tmp)
    if set(os.listdir(tmp)) != before:
        failures.append("a failed `vectors` left a file behind")

    # The model's entry points.
    expect("predict", run("predict", "--hw", "H100", "--workload", "gla", "--variant", "pipelined", "--shape",
                          "B=4,T=4096,H=32,K=64,V=64"), 0)
    expect("unknown profile", run("predict", "--hw", "H999", "--workload", "gla", "--variant", "pipelined"), 2,
           "H999")
    expect("unknown variant", run("predict", "--hw", "H100", "--workload", "gla", "--variant", "warp_magic"), 2,
           "warp_magic")
    open(j("bad_profile.json"), "w").write('{"name": "x", "base": "H100", "fields": {"warp_speed": {"value": 9, "source": "me"}}}')
    expect("unknown profile field", run("predict", "--hw", j("bad_profile.json"), "--workload", "gla", "--variant",
                                        "pipelined"), 2, "warp_speed")

    # merge-reports: a report without its date is named, and nothing is written.
    open(j("no_date.json"), "w").write(json.dumps({"format": "overlap-validation-report", "gpu": "g", "profile": "H100",
                                                   "command": "c", "rows": []}))
    expect("report without a date", run("merge-reports", j("no_date.json"), "--out", j("merged")), 2,
           "no_date.json", 'has no "date"')
    if os.path.exists(j("merged")):
        failures.append("merge-reports of a bad report wrote its output directory")
    else:
        passed += 1

    # merge-reports --repredict: the measurements stay, every prediction is this build's model's.
    row = {"workload": "gla", "variant": "pipelined_fused", "shape": "B=4,T=512,H=32,K=64,V=64,h0=1,hT=1",
           "passed": True, "failure": "", "worst_rel_error": 1e-3, "measured_us": 50.0, "timed_runs": 15,
           "predicted_us": 1.0, "bottleneck": "stale"}
    open(j("old.json"), "w").write(json.dumps({"format": "overlap-validation-report", "gpu": "g", "date": "2026-01-01",
                                               "profile": "H100", "command": "c", "rows": [row]}))
    expect("merge-reports --repredict", run("merge-reports", j("old.json"), "--repredict", "--out", j("re")), 0)
    model = json.loads(run("predict", "--hw", "H100", "--workload", "gla", "--variant", "pipelined_fused", "--shape",
                           row["shape"], "--json").stdout)
    got = json.load(open(j("re/report.json")))["rows"][0] if os.path.exists(j("re/report.json")) else {}
    if got.get("measured_us") != 50.0 or abs(got.get("predicted_us", 0) - model["time_us"]) > 1e-6 * model["time_us"]:
        failures.append(f"merge-reports --repredict: row {got}, model {model.get('time_us')}")
    else:
        passed += 1

# validate refuses a shape outside its set by name, before it looks for a GPU (where overlap was
# built beside nvcc: the GPU tool it hands validate to exists).
if os.path.exists(os.path.join(os.path.dirname(OVERLAP), "overlap-gpu")):
    expect("validate --shapes outside the set",
           run("validate", "--workload", "projchain", "--shapes", "B=8,T=4096,d=2048,H=16,dk=64"), 2,
           "'B=8,T=4096,d=2048,H=16,dk=64'", "validation set of projchain")

# Commands that use no GPU load no CUDA library (the dynamic loader's own log of what it maps;
# validate and calibrate run in the separate overlap-gpu).
for args in (["list"], ["predict", "--hw", "H100", "--workload", "gla", "--variant", "pipelined_fused"]):
    traced = subprocess.run([OVERLAP, *args], capture_output=True, text=True, env={**os.environ, "LD_DEBUG": "libs"})
    loaded = [l for l in traced.stderr.splitlines() if "calling init:" in l and ("libcu" in l or "libnv" in l)]
    if traced.returncode != 0 or loaded:
        failures.append(f"overlap {' '.join(args)} loads a CUDA library: {loaded or traced.stderr[-500:]}")
    else:
        passed += 1

print(f"cli contract: {passed} checks passed, {len(failures)} failed")
for f in failures:
    print("FAIL", f)
sys.exit(1 if failures else 0)
