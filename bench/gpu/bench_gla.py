#!/usr/bin/env python3
"""Times every gla variant beside its peers, in one run, on the same inputs.

    python3 bench/gpu/bench_gla.py --lib BUILD/cuda/gla/liboverlap_gla_capi.so [--out results.json]

Per shape (B, T, H, K, V) it times: each overlap variant (through the C entry point
overlap_gla_forward), flash-linear-attention `chunk_gla` forward (bf16, same q, k, v, g),
PyTorch SDPA causal attention at the same shape, and the hardware floor: the larger of the
bytes that must move (q, k, v, g read once, o written once) over the device-to-device copy
bandwidth and the chunked form's tensor-core FLOPs over a large bf16 matmul's rate, both
measured in this run. Timing: warm-up, CUDA events around each call, L2 flushed before each call,
median of many calls, rotating over several random input sets (never zeros). Before timing,
each variant's o is compared with chunk_gla's (relative Frobenius error) so a broken kernel
cannot post a time. Without chunk_gla (--no-peers, or flash-linear-attention missing) only NaN /
unwritten elements are checked, and the row says so ("checked"); the GPU tests are then the
correctness evidence.
"""
import argparse
import ctypes
import json
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
from bench_common import (add_flush_argument, call_capi, kernel_times, rel_error, start_report,  # noqa: E402
                          time_calls)

SHAPES = [(4, 1024, 32, 64, 64), (4, 4096, 32, 64, 64), (8, 4096, 16, 128, 128), (2, 16384, 16, 128, 128)]
VARIANTS = ["sequential_fused", "sequential_materialized", "pipelined_fused", "pipelined_materialized",
            "pingpong_fused", "pingpong_materialized"]
INPUT_SETS = 3


class OverlapLib:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.overlap_gla_forward.restype = ctypes.c_int
        self.lib.overlap_gla_forward.argtypes = [ctypes.c_char_p] + [ctypes.c_void_p] * 8 + [ctypes.c_int] * 5 + [
            ctypes.c_double, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
        self.lib.overlap_gla_workspace_bytes.restype = ctypes.c_longlong
        self.lib.overlap_gla_workspace_bytes.argtypes = [ctypes.c_char_p] + [ctypes.c_int] * 5 + [
            ctypes.c_char_p, ctypes.c_int]

    def workspace_bytes(self, variant, shape):
        return call_capi(self.lib.overlap_gla_workspace_bytes, variant.encode(), *shape)

    def forward(self, variant, q, k, v, g, o, workspace, scale):
        B, T, H, K = q.shape
        V = v.shape[-1]
        call_capi(self.lib.overlap_gla_forward, variant.encode(), q.data_ptr(), k.data_ptr(), v.data_ptr(),
                  g.data_ptr(), None, o.data_ptr(), None, workspace.data_ptr() if workspace is not None else None,
                  B, T, H, K, V, scale, torch.cuda.current_stream().cuda_stream)


def make_inputs(shape, seed):
    B, T, H, K, V = shape
    gen = torch.Generator(device="cuda").manual_seed(seed)
    q = torch.randn(B, T, H, K, device="cuda", dtype=torch.bfloat16, generator=gen)
    k = torch.randn(B, T, H, K, device="cuda", dtype=torch.bfloat16, generator=gen)
    v = torch.randn(B, T, H, V, device="cuda", dtype=torch.bfloat16, generator=gen)
    # The usual GLA gate: logsigmoid(x) / 16.
    g = F.logsigmoid(torch.randn(B, T, H, K, device="cuda", dtype=torch.float32, generator=gen)) / 16
    return q, k, v, g


def min_flops(B, T, H, K, V, C=64):
    """Tensor-core FLOPs the chunked form cannot avoid at chunk C: per token and head, the causal
    half of q k^T and of A v (C (K + V)), the inter-chunk q S and the state update (2 x 2KV)."""
    return B * T * H * (C * (K + V) + 4 * K * V)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--out", default=None)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--profile", action="store_true", help="also print per-kernel times of one call")
    ap.add_argument("--variants", default=",".join(VARIANTS),
                    help="overlap variants, comma-separated; or separated by ';' where one is a launch form "
                    "name@key=value,... (keys: units_per_cta, block_v, segments), e.g. "
                    "'pingpong_fused;pingpong_fused@segments=1'")
    ap.add_argument("--no-peers", action="store_true", help="skip chunk_gla and SDPA (e.g. under ncu)")
    ap.add_argument("--shapes", default=None, help="B,T,H,K,V;... (default: the issue's four)")
    add_flush_argument(ap)
    args = ap.parse_args()

    lib = OverlapLib(args.lib)
    variants = args.variants.split(";") if ";" in args.variants else args.variants.split(",")
    chunk_gla = None
    if not args.no_peers:
        try:
            from fla.ops.gla import chunk_gla
        except Exception as e:  # the peer is reported as missing, never silently skipped
            print(f"flash-linear-attention not importable: {e!r}", file=sys.stderr)
    shapes = SHAPES if not args.shapes else [tuple(int(x) for x in s.split(",")) for s in args.shapes.split(";")]

    extra = {}
    if chunk_gla is not None:
        import fla
        extra["fla"] = fla.__version__
    flush, bw, rate, report = start_report(args.flush, **extra)

    for shape in shapes:
        B, T, H, K, V = shape
        scale = K ** -0.5
        sets = [make_inputs(shape, 1000 + i) for i in range(INPUT_SETS)]
        floor_bytes = B * T * H * (2 * K + 2 * K + 4 * K + 2 * V + 2 * V)
        flops = min_flops(B, T, H, K, V)
        # The floor is the larger of the two: bytes over copy bandwidth, FLOPs over tensor rate.
        bytes_ms, flops_ms = floor_bytes / bw * 1e3, flops / rate * 1e3
        floor_ms = max(bytes_ms, flops_ms)
        entry = {"shape": dict(B=B, T=T, H=H, K=K, V=V), "floor_ms": floor_ms, "floor_bytes": floor_bytes,
                 "floor_bytes_ms": bytes_ms, "floor_flops": flops, "floor_flops_ms": flops_ms, "rows": []}
        ref_o = None
        if chunk_gla is not None:
            ref_o = [chunk_gla(*s, scale=scale)[0] for s in sets]
            ms = time_calls(lambda i: chunk_gla(*sets[i], scale=scale), INPUT_SETS, args.reps, args.warmup, flush)
            entry["rows"].append({"name": "fla_chunk_gla", "ms": ms[0], "min_ms": ms[1], "max_ms": ms[2]})
        if not args.no_peers:
            qkv_t = [(q.transpose(1, 2).contiguous(), k.transpose(1, 2).contiguous(),
                      v.transpose(1, 2).contiguous()) for q, k, v, _ in sets]
            ms = time_calls(lambda i: F.scaled_dot_product_attention(*qkv_t[i], is_causal=True), INPUT_SETS,
                            args.reps, args.warmup, flush)
            entry["rows"].append({"name": "torch_sdpa_causal", "ms": ms[0], "min_ms": ms[1], "max_ms": ms[2]})
            del qkv_t

        outs = [torch.empty(B, T, H, V, device="cuda", dtype=torch.bfloat16) for _ in range(INPUT_SETS)]
        for variant in variants:
            row = {"name": variant}
            try:
                ws_bytes = lib.workspace_bytes(variant, shape)
                ws = torch.empty(max(ws_bytes, 1), dtype=torch.uint8, device="cuda") if ws_bytes else None
                run = lambda i: lib.forward(variant, *sets[i], outs[i], ws, scale)
                for i in range(INPUT_SETS):
                    outs[i].fill_(float("nan"))
                    run(i)
                torch.cuda.synchronize()
                if ref_o is not None:
                    row["rel_error_vs_fla"] = max(rel_error(outs[i], ref_o[i]) for i in range(INPUT_SETS))
                else:  # no chunk_gla (--no-peers, e.g. under a profiler): say what was checked
                    row["checked"] = "NaN / unwritten only (no chunk_gla to compare with)"
                if any(torch.isnan(o).any().item() for o in outs):
                    row["error"] = "NaN or unwritten element in o"
                elif ref_o is not None and row["rel_error_vs_fla"] > 1e-2:
                    row["error"] = f"o differs from chunk_gla (rel error {row['rel_error_vs_fla']:.2e})"
                else:
                    ms = time_calls(run, INPUT_SETS, args.reps, args.warmup, flush)
                    row.update(ms=ms[0], min_ms=ms[1], max_ms=ms[2])
                del ws
            except RuntimeError as e:
                row["error"] = str(e)
            entry["rows"].append(row)
        if args.profile:
            profile_kernels(entry, lib, chunk_gla, sets[0], outs[0], scale)
        del outs, sets, ref_o
        torch.cuda.empty_cache()
        report["shapes"].append(entry)
        print_table(entry, flush=True)

    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)


def profile_kernels(entry, lib, chunk_gla, inputs, out, scale):
    """Per-kernel device time of one call of each implementation (torch profiler)."""
    calls = [(r["name"], r["name"]) for r in entry["rows"] if "ms" in r and r["name"] in VARIANTS]
    if chunk_gla is not None:
        calls.append(("fla_chunk_gla", None))
    for name, variant in calls:
        ws_bytes = lib.workspace_bytes(variant, tuple(entry["shape"].values())) if variant else 0
        ws = torch.empty(ws_bytes, dtype=torch.uint8, device="cuda") if ws_bytes else None
        fn = (lambda: lib.forward(variant, *inputs, out, ws, scale)) if variant else (
            lambda: chunk_gla(*inputs, scale=scale))
        kernels = kernel_times(fn)
        entry.setdefault("kernels", {})[name] = kernels
        print(f"  {name}: " + "; ".join(f"{k[:60]} {ms:.3f} ms" for k, ms in kernels[:5]))


def print_table(entry, flush=False):
    s = entry["shape"]
    rows = {r["name"]: r for r in entry["rows"]}
    seq = rows.get("sequential_fused", {}).get("ms")
    fla_ms = rows.get("fla_chunk_gla", {}).get("ms")
    sdpa_ms = rows.get("torch_sdpa_causal", {}).get("ms")
    print(f"\n## B={s['B']} T={s['T']} H={s['H']} K={s['K']} V={s['V']}  floor {entry['floor_ms']:.3f} ms "
          f"(bytes {entry['floor_bytes_ms']:.3f} ms, FLOPs {entry['floor_flops_ms']:.3f} ms)")
    print("| kernel | median ms [min, max] | floor/time | vs sequential_fused | vs chunk_gla | vs SDPA | rel err vs fla |")
    print("|---|---|---|---|---|---|---|")
    for r in entry["rows"]:
        if "ms" not in r:
            print(f"| {r['name']} | - | - | - | - | - | {r.get('error', '')} |")
            continue
        ms = r["ms"]
        f = lambda x: f"{x:.2f}x" if x else "-"
        err = r.get("rel_error_vs_fla")
        print(f"| {r['name']} | {ms:.3f} [{r['min_ms']:.3f}, {r['max_ms']:.3f}] | {entry['floor_ms'] / ms:.2f} | "
              f"{f(seq / ms if seq else None)} | {f(fla_ms / ms if fla_ms else None)} | "
              f"{f(sdpa_ms / ms if sdpa_ms else None)} | {'' if err is None else f'{err:.1e}'} |", flush=flush)


if __name__ == "__main__":
    main()
