#!/usr/bin/env python3
"""Times every linrnn variant beside its peers, in one run, on the same inputs.

    python3 bench/gpu/bench_linrnn.py --lib BUILD/cuda/linrnn/liboverlap_linrnn_capi.so [--out results.json]

Per shape (B, T, d, dv) it times: each overlap variant end to end (through the C entry point
overlap_linrnn_forward: for three_kernel / semi_fused that is the cuBLAS GEMM plus our
kernels), and the peers: the cuBLAS GEMM of the same projection alone (torch.matmul, bf16 out)
and the PyTorch three-op path (torch.matmul, then the scan and gate in a simple Triton kernel
with tl.associative_scan over 64-step blocks). Hardware floors from this run: the bytes that
must move (x and W read, y written, bf16) over the measured device-to-device copy bandwidth,
and the projection's FLOPs over the measured bf16 tensor rate (an 8192^3 torch.matmul).
Timing: warm-up, CUDA events around each call, L2 flushed (256 MB write) before each call,
median of many calls, rotating over several random input sets (never zeros). The rows of a shape
take turns (bench_common.time_interleaved: 5 calls each, the first call of each turn reported
apart, a GPU spin before each call), so they are compared at the same GPU clocks; the SM clock
is sampled meanwhile. full_fused (tens of ms per call) is timed on its own. Before timing,
every implementation's y is compared with a float64 reference of the same inputs (relative
Frobenius error); above 1e-2 or with any NaN it is reported and not timed.
chunk_fused reads W packed once per input set before timing (overlap_linrnn_pack_weight, what a
model does at load time); "chunk_fused+pack" passes no packed weight, so every timed call packs
W first (pack + run).
"""
import argparse
import ctypes
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
from bench_common import (add_flush_argument, add_pad_argument, call_capi, clock_line, rel_error, start_report,  # noqa: E402
                          time_calls, time_rows)

SHAPES = [(4, 2048, 256, 64), (16, 2048, 256, 64), (8, 4096, 1024, 1024)]
VARIANTS = ["three_kernel", "semi_fused", "full_fused", "chunk_fused", "chunk_fused+pack"]
INPUT_SETS = 3


class OverlapLib:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.overlap_linrnn_forward.restype = ctypes.c_int
        self.lib.overlap_linrnn_forward.argtypes = [ctypes.c_char_p] + [ctypes.c_void_p] * 7 + [
            ctypes.c_int] * 4 + [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
        self.lib.overlap_linrnn_packed_weight_bytes.restype = ctypes.c_longlong
        self.lib.overlap_linrnn_packed_weight_bytes.argtypes = [ctypes.c_int] * 4 + [ctypes.c_char_p, ctypes.c_int]
        self.lib.overlap_linrnn_pack_weight.restype = ctypes.c_int
        self.lib.overlap_linrnn_pack_weight.argtypes = [ctypes.c_void_p] * 2 + [ctypes.c_int] * 4 + [
            ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
        self.lib.overlap_linrnn_workspace_bytes.restype = ctypes.c_longlong
        self.lib.overlap_linrnn_workspace_bytes.argtypes = [ctypes.c_char_p] + [ctypes.c_int] * 4 + [
            ctypes.c_char_p, ctypes.c_int]

    def workspace_bytes(self, variant, shape):
        return call_capi(self.lib.overlap_linrnn_workspace_bytes, variant.encode(), *shape)

    def packed_weight(self, W, shape):
        """W packed for chunk_fused (enqueued on the current stream)."""
        out = torch.empty(call_capi(self.lib.overlap_linrnn_packed_weight_bytes, *shape), dtype=torch.uint8,
                          device="cuda")
        call_capi(self.lib.overlap_linrnn_pack_weight, W.data_ptr(), out.data_ptr(), *shape,
                  torch.cuda.current_stream().cuda_stream)
        return out

    def forward(self, variant, x, W, w_packed, y, workspace):
        B, T, d = x.shape
        dv = y.shape[-1]
        call_capi(self.lib.overlap_linrnn_forward, variant.encode(), x.data_ptr(), W.data_ptr(),
                  w_packed.data_ptr() if w_packed is not None else None, None, y.data_ptr(), None,
                  workspace.data_ptr() if workspace is not None else None, B, T, d, dv,
                  torch.cuda.current_stream().cuda_stream)


def make_peer_scan():
    """The PyTorch path's scan + gate: a simple Triton kernel (one program per batch row and
    16 channels, 64-step blocks scanned with tl.associative_scan, carry in registers)."""
    import triton
    import triton.language as tl

    @triton.jit
    def combine(a1, b1, a2, b2):
        return a1 * a2, a2 * b1 + b2

    @triton.jit
    def scan_gate(P, Y, T, dv, BLOCK_T: tl.constexpr, BLOCK_C: tl.constexpr):
        b = tl.program_id(0)
        ch = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
        cm = ch < dv
        h = tl.zeros([BLOCK_C], dtype=tl.float32)
        for t0 in range(0, T, BLOCK_T):
            t = t0 + tl.arange(0, BLOCK_T)
            m = (t < T)[:, None] & cm[None, :]
            row = (b * T + t)[:, None].to(tl.int64)
            base = P + row * 3 * dv + ch[None, :]
            u = tl.load(base, mask=m, other=0.0).to(tl.float32)
            ap = tl.load(base + dv, mask=m, other=0.0).to(tl.float32)
            z = tl.load(base + 2 * dv, mask=m, other=0.0).to(tl.float32)
            a = tl.sigmoid(ap)
            a_s = tl.where(m, a, 1.0)
            b_s = tl.where(m, (1.0 - a) * u, 0.0)
            A, Bc = tl.associative_scan((a_s, b_s), 0, combine)
            hh = A * h[None, :] + Bc
            tl.store(Y + row * dv + ch[None, :], (hh * z * tl.sigmoid(z)).to(tl.bfloat16), mask=m)
            last = (tl.arange(0, BLOCK_T) == BLOCK_T - 1)[:, None]
            h = tl.sum(tl.where(last, hh, 0.0), axis=0)

    def run(P, y, B, T, dv):
        scan_gate[(B, triton.cdiv(dv, 16))](P, y, T, dv, BLOCK_T=64, BLOCK_C=16)

    return run


def make_inputs(shape, seed):
    B, T, d, dv = shape
    gen = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(B, T, d, device="cuda", dtype=torch.float32, generator=gen).to(torch.bfloat16)
    W = (torch.randn(d, 3 * dv, device="cuda", dtype=torch.float32, generator=gen) / d ** 0.5).to(torch.bfloat16)
    return x, W


def reference_y(x, W):
    """float64 on the GPU, straight from the definition (one step at a time)."""
    B, T, d = x.shape
    dv = W.shape[1] // 3
    P = (x.double().reshape(B * T, d) @ W.double()).reshape(B, T, 3 * dv)
    u, ap, z = P[..., :dv], P[..., dv:2 * dv], P[..., 2 * dv:]
    a = torch.sigmoid(ap)
    b = (1 - a) * u
    h = torch.zeros(B, dv, dtype=torch.float64, device=x.device)
    ys = torch.empty(B, T, dv, dtype=torch.float64, device=x.device)
    for t in range(T):
        h = a[:, t] * h + b[:, t]
        ys[:, t] = h
    return ys * z * torch.sigmoid(z)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--out", default=None)
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated overlap variants")
    ap.add_argument("--shapes", default=None, help="B,T,d,dv;... (default: the issue's three)")
    ap.add_argument("--slow-reps", type=int, default=5, help="reps for full_fused (tens of ms per call)")
    ap.add_argument("--no-peers", action="store_true", help="our kernels only (e.g. under a profiler)")
    add_pad_argument(ap)
    add_flush_argument(ap)
    args = ap.parse_args()

    lib = OverlapLib(args.lib)
    variants = args.variants.split(",")
    shapes = SHAPES if not args.shapes else [tuple(int(v) for v in s.split(",")) for s in args.shapes.split(";")]
    try:
        peer_scan = make_peer_scan()
    except Exception as e:  # the peer is reported as missing, never silently skipped
        print(f"Triton peer unavailable: {e!r}", file=sys.stderr)
        peer_scan = None

    flush, bw, rate, report = start_report(args.flush)

    for shape in shapes:
        B, T, d, dv = shape
        sets = [make_inputs(shape, 1000 + i) for i in range(INPUT_SETS)]
        refs = [reference_y(*s) for s in sets[:1]]  # float64 check on the first set
        floor_bytes = 2 * (B * T * d + d * 3 * dv + B * T * dv)
        flops = 2 * B * T * d * 3 * dv
        entry = {"shape": dict(B=B, T=T, d=d, dv=dv), "floor_bytes": floor_bytes, "flops": flops,
                 "floor_bytes_ms": floor_bytes / bw * 1e3, "floor_flops_ms": flops / rate * 1e3, "rows": []}
        entry["floor_ms"] = max(entry["floor_bytes_ms"], entry["floor_flops_ms"])
        outs = [torch.empty(B, T, dv, device="cuda", dtype=torch.bfloat16) for _ in range(INPUT_SETS)]
        projs = [torch.empty(B * T, 3 * dv, device="cuda", dtype=torch.bfloat16) for _ in range(INPUT_SETS)]

        def gemm(i):
            torch.matmul(sets[i][0].view(B * T, d), sets[i][1], out=projs[i])

        timed = [({"name": "cublas_gemm_alone"}, gemm)]  # (row, fn): timed together below
        entry["rows"].append(timed[0][0])
        peer_scan_here = None if args.no_peers else peer_scan

        def check_and_time(name, run, alone_reps=None):
            """Checks y; a passing row joins the interleaved timing, or with alone_reps is timed on
            its own now (full_fused: one of its calls takes as long as hundreds of the others)."""
            row = {"name": name}
            try:
                for i in range(INPUT_SETS):
                    outs[i].fill_(float("nan"))
                    run(i)
                torch.cuda.synchronize()
                row["rel_error_vs_f64"] = rel_error(outs[0], refs[0])
                if any(torch.isnan(o).any().item() for o in outs):
                    row["error"] = "NaN or unwritten element in y"
                elif row["rel_error_vs_f64"] > 1e-2:
                    row["error"] = f"y differs from the float64 reference (rel error {row['rel_error_vs_f64']:.2e})"
                elif alone_reps:
                    ms = time_calls(run, INPUT_SETS, alone_reps, min(args.warmup, alone_reps), flush)
                    row.update(ms=ms[0], min_ms=ms[1], max_ms=ms[2], timed_alone=True)
                else:
                    timed.append((row, run))
            except RuntimeError as e:
                row["error"] = str(e)
            entry["rows"].append(row)

        if peer_scan_here is not None:
            def torch_path(i):
                gemm(i)
                peer_scan_here(projs[i], outs[i], B, T, dv)
            check_and_time("torch_matmul_triton_scan", torch_path)
        else:
            entry["rows"].append({"name": "torch_matmul_triton_scan",
                                  "error": "peers off (--no-peers)" if args.no_peers else "Triton unavailable"})

        packed = None
        workspaces = []  # alive until the timing is done
        for impl in variants:
            # "variant[+pack]": +pack = no packed weight given, the call packs W itself.
            variant, _, pack = impl.partition("+")
            try:
                ws_bytes = lib.workspace_bytes(variant, shape)
                if variant == "chunk_fused" and packed is None:
                    packed = [lib.packed_weight(s[1], shape) for s in sets]  # untimed, once per input set
            except RuntimeError as e:
                entry["rows"].append({"name": impl, "error": str(e)})
                continue
            ws = torch.zeros(max(ws_bytes, 1), dtype=torch.uint8, device="cuda") if ws_bytes else None
            workspaces.append(ws)
            # Bound now (the rows run later): only chunk_fused without "+pack" takes the packed weight.
            wp = packed if variant == "chunk_fused" and not pack else None
            run = lambda i, variant=variant, ws=ws, wp=wp: lib.forward(
                variant, sets[i][0], sets[i][1], None if wp is None else wp[i], outs[i], ws)
            check_and_time(impl, run, args.slow_reps if variant == "full_fused" else None)

        entry["clocks"] = time_rows(timed, INPUT_SETS, args.reps, args.warmup, flush, args.pad_us)
        del packed, workspaces
        del outs, projs, sets, refs
        torch.cuda.empty_cache()
        report["shapes"].append(entry)
        print_table(entry)

    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)


def print_table(entry):
    s = entry["shape"]
    rows = {r["name"]: r for r in entry["rows"]}
    gemm = rows.get("cublas_gemm_alone", {}).get("ms")
    peer = rows.get("torch_matmul_triton_scan", {}).get("ms")
    print(f"\n## B={s['B']} T={s['T']} d={s['d']} dv={s['dv']}  floor {entry['floor_ms'] * 1e3:.1f} us "
          f"(bytes {entry['floor_bytes_ms'] * 1e3:.1f} us, flops {entry['floor_flops_ms'] * 1e3:.1f} us)")
    if entry.get("clocks"):
        print(clock_line(entry["clocks"]))
    print("| implementation | median us | min us | floor/time | time / cuBLAS GEMM | speedup vs torch path | rel err vs f64 "
          "| first call of a turn us |")
    print("|---|---|---|---|---|---|---|---|")
    for r in entry["rows"]:
        if "ms" not in r:
            print(f"| {r['name']} | - | - | - | - | - | {r.get('error', '')} | - |")
            continue
        ms = r["ms"]
        err = r.get("rel_error_vs_f64")
        first = "timed alone" if r.get("timed_alone") else f"{r['first_call_ms'] * 1e3:.1f}"
        print(f"| {r['name']} | {ms * 1e3:.1f} | {r['min_ms'] * 1e3:.1f} | {entry['floor_ms'] / ms:.2f} | "
              f"{ms / gemm:.2f}x | {(peer / ms) if peer else float('nan'):.2f}x | "
              f"{'' if err is None else f'{err:.1e}'} | {first} |", flush=True)


if __name__ == "__main__":
    main()
