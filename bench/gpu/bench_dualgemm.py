#!/usr/bin/env python3
"""Times every dualgemm variant beside its peers, in one run, on the same inputs.

    python3 bench/gpu/bench_dualgemm.py --lib BUILD/cuda/dualgemm/liboverlap_dualgemm_capi.so [--out r.json]
        [--variants a,b,...] [--shapes M,N,K;...] [--formats bf16,fp8]

C = silu(A B1^T) * (A B2^T), A [M,K], B1, B2 [N,K] (K-major), per shape and operand format:
  every variant of cuda/dualgemm/dualgemm_tiling.hpp, through the C entry point (fp16 out)
Peers, same inputs, same run:
  torch_bf16             bf16: two torch.matmul, then F.silu and multiply (bf16 out)
  torch_fp8_scaled_mm    fp8: torch._scaled_mm twice (per-tensor scales, fp16 out), silu, multiply
  cublas_concat          one cuBLAS GEMM against [B1; B2] (torch.matmul, or _scaled_mm in fp8),
                         then the element-wise kernel on its two halves
Our fp8 kernels take row-wise scales (a_scale [M], b*_scale [N]); the peers take one scale per
tensor (what _scaled_mm takes with fp16 out). The inputs hold equal scales per tensor, so both
compute the same product.
Floor: max(bytes that must move / measured D2D copy bandwidth, FLOPs / the format's measured
tensor rate: a large torch.matmul in bf16, a large _scaled_mm in fp8), all measured in this run.
Timing as bench_common.time_rows: interleaved turns, L2 flushed before each call, CUDA events,
rotating input sets. Each implementation's C is checked against an fp32 reference of the same
(decoded) operands before it is timed (relative Frobenius error <= 1e-2; C is NaN-filled first).
"""
import argparse
import ctypes
import json
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
from bench_common import (add_flush_argument, add_pad_argument, call_capi, clock_line, rel_error, start_report,  # noqa: E402
                          time_calls, time_rows)

SHAPES = [(256, 4096, 7168), (512, 4096, 7168), (256, 3072, 4096), (512, 3072, 7168)]
FORMATS = {"bf16": 0, "fp8": 1}
INPUT_SETS = 3
FP8 = torch.float8_e4m3fn


class OverlapLib:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        vp, ci, ll, cc = ctypes.c_void_p, ctypes.c_int, ctypes.c_longlong, ctypes.c_char_p
        self.lib.overlap_dualgemm_forward.restype = ci
        self.lib.overlap_dualgemm_forward.argtypes = [cc, ci, ll, ll, ll, ll] + [vp] * 8 + [cc, ci]
        self.lib.overlap_dualgemm_variant_count.restype = ci
        self.lib.overlap_dualgemm_variant_name.restype = cc
        self.lib.overlap_dualgemm_variant_name.argtypes = [ci]

    def variants(self):
        return [self.lib.overlap_dualgemm_variant_name(i).decode()
                for i in range(self.lib.overlap_dualgemm_variant_count())]

    def forward(self, variant, fmt, s, c):
        M, K = s["a"].shape
        N = s["b1"].shape[0]
        scales = [s[n].data_ptr() for n in ("a_scale_rows", "b1_scale_rows", "b2_scale_rows")] if fmt else [None] * 3
        call_capi(self.lib.overlap_dualgemm_forward, variant.encode(), fmt, 1, M, N, K, s["a"].data_ptr(),
                  s["b1"].data_ptr(), s["b2"].data_ptr(), *scales, c.data_ptr(),
                  torch.cuda.current_stream().cuda_stream)


def make_inputs(shape, fmt, seed):
    """a, b1, b2 ~ N(0, 1/sqrt(K)) each (so A B^T ~ N(0, 1)). fp8: e4m3 codes, one scale for A and
    one shared by B1 and B2 (amax / 448), so cublas_concat's [B1; B2] holds the same values; our
    kernels get the same scales row-wise (all rows equal)."""
    M, N, K = shape
    gen = torch.Generator(device="cuda").manual_seed(seed)
    x = {name: torch.randn(rows, K, device="cuda", generator=gen) / K ** 0.25
         for name, rows in (("a", M), ("b1", N), ("b2", N))}
    if fmt == 0:
        s = {name: v.to(torch.bfloat16) for name, v in x.items()}
    else:
        s = {}
        b_scale = (torch.maximum(x["b1"].abs().max(), x["b2"].abs().max()) / 448.0).float()
        for name, scale in (("a", (x["a"].abs().max() / 448.0).float()), ("b1", b_scale), ("b2", b_scale)):
            s[name] = (x[name] / scale).to(FP8)
            s[name + "_scale"] = scale.reshape(())
            s[name + "_scale_rows"] = scale.expand(x[name].shape[0]).contiguous()
    s["b12"] = torch.cat([s["b1"], s["b2"]]).contiguous()
    return s


def decoded(s, name):
    return s[name].float() * s[name + "_scale"] if name + "_scale" in s else s[name].float()


def fp32_reference(s):
    a = decoded(s, "a")
    return F.silu(a @ decoded(s, "b1").t()) * (a @ decoded(s, "b2").t())


def torch_bf16(s):
    return F.silu(s["a"] @ s["b1"].t()) * (s["a"] @ s["b2"].t())


def torch_fp8(s):
    y1 = torch._scaled_mm(s["a"], s["b1"].t(), scale_a=s["a_scale"], scale_b=s["b1_scale"], out_dtype=torch.float16)
    y2 = torch._scaled_mm(s["a"], s["b2"].t(), scale_a=s["a_scale"], scale_b=s["b2_scale"], out_dtype=torch.float16)
    return F.silu(y1) * y2


def cublas_concat(s, fmt):
    N = s["b1"].shape[0]
    if fmt == 0:
        y = s["a"] @ s["b12"].t()
    else:
        y = torch._scaled_mm(s["a"], s["b12"].t(), scale_a=s["a_scale"], scale_b=s["b1_scale"],
                             out_dtype=torch.float16)
    return F.silu(y[:, :N]) * y[:, N:]


def fp8_rate(flush):
    """fp8 e4m3 tensor-core rate in FLOP/s: an 8192^3 torch._scaled_mm (fp32 accumulation, fp16 out)."""
    n = 8192
    a = torch.randn(n, n, device="cuda").to(FP8)
    b = torch.randn(n, n, device="cuda").to(FP8).t()
    one = torch.ones((), device="cuda")
    ms, _, _ = time_calls(lambda i: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.float16), 1, 20,
                          5, flush)
    return 2 * n ** 3 / (ms * 1e-3)


def bench_shape(shape, fmt_name, lib, variants, args, flush, bw, rates):
    M, N, K = shape
    fmt = FORMATS[fmt_name]
    sets = [make_inputs(shape, fmt, 1000 + i) for i in range(INPUT_SETS)]
    ref = fp32_reference(sets[0])
    elem = 2 if fmt == 0 else 1
    floor_bytes = (M * K + 2 * N * K) * elem + 2 * M * N
    flops = 4 * M * N * K
    entry = {"shape": dict(M=M, N=N, K=K), "format": fmt_name, "floor_bytes": floor_bytes, "flops": flops,
             "floor_bytes_ms": floor_bytes / bw * 1e3, "floor_flops_ms": flops / rates[fmt_name] * 1e3, "rows": []}
    entry["floor_ms"] = max(entry["floor_bytes_ms"], entry["floor_flops_ms"])
    timed = []

    def add_row(name, fn, out_of):
        row = {"name": name}
        entry["rows"].append(row)
        try:
            out = out_of()
            torch.cuda.synchronize()
            err = rel_error(out, ref) if not torch.isnan(out).any().item() else float("nan")
            row["rel_error"] = err
            if not err <= 1e-2:
                row["error"] = f"wrong output before timing: rel error {err}"
                return
            timed.append((row, fn))
        except Exception as e:  # noqa: BLE001 -- one broken row must not lose the others
            row["error"] = f"{type(e).__name__}: {e}"

    if fmt == 0:
        add_row("torch_bf16", lambda i: torch_bf16(sets[i]), lambda: torch_bf16(sets[0]))
    else:
        add_row("torch_fp8_scaled_mm", lambda i: torch_fp8(sets[i]), lambda: torch_fp8(sets[0]))
    add_row("cublas_concat", lambda i: cublas_concat(sets[i], fmt), lambda: cublas_concat(sets[0], fmt))

    c = torch.empty(M, N, device="cuda", dtype=torch.float16)

    def ours_once(v):
        c.fill_(float("nan"))
        lib.forward(v, fmt, sets[0], c)
        return c

    for v in variants:
        add_row(v, lambda i, v=v: lib.forward(v, fmt, sets[i], c), lambda v=v: ours_once(v))
    entry["clocks"] = time_rows(timed, INPUT_SETS, args.reps, args.warmup, flush, args.pad_us)
    return entry


def print_table(entry):
    s = entry["shape"]
    rows = {r["name"]: r.get("ms") for r in entry["rows"]}
    peer = rows.get("torch_bf16") or rows.get("torch_fp8_scaled_mm")
    print(f"\n## {entry['format']} M={s['M']} N={s['N']} K={s['K']}  floor {entry['floor_ms'] * 1e3:.1f} us "
          f"(bytes {entry['floor_bytes_ms'] * 1e3:.1f}, FLOPs {entry['floor_flops_ms'] * 1e3:.1f})")
    if entry.get("clocks"):
        print(clock_line(entry["clocks"]))
    print("| implementation | median us [min, max] | time/floor | vs torch | TFLOP/s | rel err |")
    print("|---|---|---|---|---|---|")
    for r in entry["rows"]:
        if "ms" not in r:
            print(f"| {r['name']} | - | - | - | - | {r.get('error', '')} |")
            continue
        ms = r["ms"]
        print(f"| {r['name']} | {ms * 1e3:.1f} [{r['min_ms'] * 1e3:.1f}, {r['max_ms'] * 1e3:.1f}] | "
              f"{ms / entry['floor_ms']:.2f} | {peer / ms if peer else 0:.2f}x | {entry['flops'] / ms / 1e9:.0f} | "
              f"{r['rel_error']:.1e} |", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--lib", required=True, help="liboverlap_dualgemm_capi.so")
    p.add_argument("--out", help="write the report as JSON here")
    p.add_argument("--variants", default="", help="comma-separated (default: every variant)")
    p.add_argument("--shapes", default="", help="M,N,K;... (default: SPEC's benchmark shapes)")
    p.add_argument("--formats", default="bf16,fp8")
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    add_pad_argument(p)
    add_flush_argument(p)
    args = p.parse_args()
    lib = OverlapLib(args.lib)
    variants = [v for v in args.variants.split(",") if v] or lib.variants()
    shapes = [tuple(int(x) for x in s.split(",")) for s in args.shapes.split(";") if s] or SHAPES
    flush, bw, rate, report = start_report(args.flush, pad_us=args.pad_us)
    rates = {"bf16": rate, "fp8": fp8_rate(flush)}
    report["fp8_tensor_TFLOPs"] = rates["fp8"] / 1e12
    print(f"# fp8 _scaled_mm {rates['fp8'] / 1e12:.0f} TFLOP/s", flush=True)
    for fmt_name in args.formats.split(","):
        for shape in shapes:
            entry = bench_shape(shape, fmt_name, lib, variants, args, flush, bw, rates)
            report["shapes"].append(entry)
            print_table(entry)
            torch.cuda.empty_cache()
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
