#!/usr/bin/env python3
"""Times the gla training step (forward + backward) beside flash-linear-attention, in one run.

    python3 bench/gpu/bench_gla_train.py --lib BUILD/cuda/gla/liboverlap_gla_capi.so [--out results.json]

Per shape (B, T, H, K, V), rows (issue 18's names):
  fla_chunk_gla_fwd_bwd  chunk_gla forward, then torch.autograd.grad of o for q, k, v, g
  fla_chunk_gla_bwd      the autograd.grad alone, on a forward kept from before
  overlap_fwd_bwd        our forward (pingpong_fused) saving every chunk's state, then our
                         saved_states backward
  overlap_bwd            the saved_states backward alone (states from an earlier forward)
  overlap_fwd_bwd_materialized, overlap_bwd_materialized
                         the same with the forward saving nothing and the materialized backward,
                         which walks the chunks for the states itself
  overlap_fwd_bwd_saved_states_ws, overlap_bwd_saved_states_ws
                         saved_states with its chunk pass warp-specialized (a persistent CTA an SM,
                         a producer warpgroup loading the next chunk's inputs)
floor_ms is the backward's: the larger of the bytes it must move (q, k, v, g, do read; dq, dk, dv,
dg written) over the copy bandwidth and its tensor-core FLOPs over the bf16 matmul rate, both
measured in this run. Before timing, our dq, dk, dv, dg are compared with chunk_gla's (relative
Frobenius error, each must be under 1e-2), so a broken kernel cannot post a time. Timing: rows
interleaved (bench_common.time_rows), L2 emptied before each call, rotating over input sets.
"""
import argparse
import ctypes
import json
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
from bench_common import (add_flush_argument, add_pad_argument, call_capi, clock_line, kernel_times, rel_error,  # noqa: E402
                          start_report, time_rows)

SHAPES = [(8, 4096, 16, 128, 128), (4, 4096, 32, 64, 64)]
INPUT_SETS = 2
FORWARD_VARIANT = "pingpong_fused"
BACKWARD_VARIANTS = ("saved_states", "materialized", "saved_states_ws")


class OverlapLib:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        f = self.lib.overlap_gla_forward_saving_states
        f.restype = ctypes.c_int
        f.argtypes = [ctypes.c_char_p] + [ctypes.c_void_p] * 9 + [ctypes.c_int] * 5 + [
            ctypes.c_double, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
        b = self.lib.overlap_gla_backward
        b.restype = ctypes.c_int
        b.argtypes = [ctypes.c_char_p] + [ctypes.c_void_p] * 14 + [ctypes.c_int] * 5 + [
            ctypes.c_double, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
        w = self.lib.overlap_gla_backward_workspace_bytes
        w.restype = ctypes.c_longlong
        w.argtypes = [ctypes.c_char_p] + [ctypes.c_int] * 6 + [ctypes.c_char_p, ctypes.c_int]

    def forward(self, q, k, v, g, o, states, scale):
        """states: a bf16 [B, H, ceil(T/64), K, V] tensor the forward fills, or None."""
        B, T, H, K = q.shape
        call_capi(self.lib.overlap_gla_forward_saving_states, FORWARD_VARIANT.encode(), q.data_ptr(), k.data_ptr(),
                  v.data_ptr(), g.data_ptr(), None, o.data_ptr(), None,
                  states.data_ptr() if states is not None else None, None, B, T, H, K, v.shape[-1], scale,
                  torch.cuda.current_stream().cuda_stream)

    def backward_workspace(self, variant, shape):
        n = call_capi(self.lib.overlap_gla_backward_workspace_bytes, variant.encode(), *shape, 0)
        return torch.empty(max(n, 1), dtype=torch.uint8, device="cuda")

    def backward(self, variant, q, k, v, g, d_o, grads, states, ws, scale):
        B, T, H, K = q.shape
        dq, dk, dv, dg = grads
        call_capi(self.lib.overlap_gla_backward, variant.encode(), q.data_ptr(), k.data_ptr(),
                  v.data_ptr(), g.data_ptr(), None, d_o.data_ptr(), None, dq.data_ptr(), dk.data_ptr(),
                  dv.data_ptr(), dg.data_ptr(), None, states.data_ptr() if states is not None else None,
                  ws.data_ptr(), B, T, H, K, v.shape[-1], scale, torch.cuda.current_stream().cuda_stream)


def make_inputs(shape, seed):
    B, T, H, K, V = shape
    gen = torch.Generator(device="cuda").manual_seed(seed)
    q = torch.randn(B, T, H, K, device="cuda", dtype=torch.bfloat16, generator=gen)
    k = torch.randn(B, T, H, K, device="cuda", dtype=torch.bfloat16, generator=gen)
    v = torch.randn(B, T, H, V, device="cuda", dtype=torch.bfloat16, generator=gen)
    g = F.logsigmoid(torch.randn(B, T, H, K, device="cuda", dtype=torch.float32, generator=gen)) / 16
    d_o = torch.randn(B, T, H, V, device="cuda", dtype=torch.bfloat16, generator=gen)
    return q, k, v, g, d_o


def import_chunk_gla(no_peers):
    """flash-linear-attention's chunk_gla and its version for the report, or (None, {}) without
    it; a peer that cannot be imported is reported, never silently skipped."""
    if no_peers:
        return None, {}
    try:
        from fla.ops.gla import chunk_gla
        import fla
        return chunk_gla, {"fla": fla.__version__}
    except Exception as e:
        print(f"flash-linear-attention not importable: {e!r}", file=sys.stderr)
        return None, {}


def backward_floor(B, T, H, K, V, C=64):
    """(bytes, FLOPs) the chunked backward cannot avoid. Bytes: q, k, g, do, v read and dq, dk, dv, dg
    written once. FLOPs (tensor core, causal halves): dA = do v^T, A = q k^T, dq and dk intra, dv
    intra (C (3K + 2V)), and the four K x V products per token: dq, dk, dv inter and the dS update."""
    per_token = (2 * K + 2 * K + 4 * K + 2 * V + 2 * V) + (2 * K + 2 * K + 2 * V + 4 * K)
    return B * T * H * per_token, B * T * H * (C * (3 * K + 2 * V) + 8 * K * V)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--out", default=None)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--warmup", type=int, default=3)
    add_pad_argument(ap)
    ap.add_argument("--shapes", default=None, help="B,T,H,K,V;... (default: issue 18's two)")
    ap.add_argument("--no-peers", action="store_true", help="skip chunk_gla (e.g. under ncu)")
    ap.add_argument("--profile", action="store_true", help="also print per-kernel times of one call of each row")
    add_flush_argument(ap)
    args = ap.parse_args()

    lib = OverlapLib(args.lib)
    chunk_gla, extra = import_chunk_gla(args.no_peers)
    flush, bw, rate, report = start_report(args.flush, **extra)
    shapes = SHAPES if not args.shapes else [tuple(int(x) for x in s.split(",")) for s in args.shapes.split(";")]

    for shape in shapes:
        B, T, H, K, V = shape
        scale = K ** -0.5
        sets = [make_inputs(shape, 2000 + i) for i in range(INPUT_SETS)]
        floor_bytes, flops = backward_floor(*shape)
        bytes_ms, flops_ms = floor_bytes / bw * 1e3, flops / rate * 1e3
        entry = {"shape": dict(B=B, T=T, H=H, K=K, V=V), "floor_ms": max(bytes_ms, flops_ms),
                 "floor_bytes": floor_bytes, "floor_bytes_ms": bytes_ms, "floor_flops": flops,
                 "floor_flops_ms": flops_ms, "rows": []}
        outs = [torch.empty(B, T, H, V, device="cuda", dtype=torch.bfloat16) for _ in sets]
        states = [torch.empty(B, H, (T + 63) // 64, K, V, device="cuda", dtype=torch.bfloat16) for _ in sets]
        timed, checked = [], []
        ref = None
        if chunk_gla is not None:
            leaves = [tuple(x.detach().clone().requires_grad_(True) for x in s[:4]) for s in sets]
            kept = [chunk_gla(*lv, scale=scale)[0] for lv in leaves]
            ref = [torch.autograd.grad(kept[i], leaves[i], sets[i][4], retain_graph=True) for i in range(INPUT_SETS)]

            def fla_fwd_bwd(i):
                o = chunk_gla(*leaves[i], scale=scale)[0]
                torch.autograd.grad(o, leaves[i], sets[i][4])

            def fla_bwd(i):
                torch.autograd.grad(kept[i], leaves[i], sets[i][4], retain_graph=True)

            timed += [({"name": "fla_chunk_gla_fwd_bwd"}, fla_fwd_bwd), ({"name": "fla_chunk_gla_bwd"}, fla_bwd)]
        for variant in BACKWARD_VARIANTS:
            saved = variant.startswith("saved_states")
            suffix = "" if variant == "saved_states" else f"_{variant}"
            ws = lib.backward_workspace(variant, shape)
            grads = [(torch.empty_like(q), torch.empty_like(k), torch.empty_like(v), torch.empty_like(g))
                     for q, k, v, g, _ in sets]

            def bwd(i, variant=variant, ws=ws, grads=grads, saved=saved):
                q, k, v, g, d_o = sets[i]
                lib.backward(variant, q, k, v, g, d_o, grads[i], states[i] if saved else None, ws, scale)

            def fwd_bwd(i, bwd=bwd, saved=saved):
                q, k, v, g, _ = sets[i]
                lib.forward(q, k, v, g, outs[i], states[i] if saved else None, scale)
                bwd(i)

            for gr in grads:
                for x in gr:
                    x.fill_(float("nan"))
            for st in states:
                st.fill_(float("nan"))  # saved_states must read what the forward wrote
            for i in range(INPUT_SETS):
                fwd_bwd(i)
            torch.cuda.synchronize()
            ours = {"name": "overlap_bwd" + suffix, "variant": variant}
            both = {"name": "overlap_fwd_bwd" + suffix, "variant": f"{FORWARD_VARIANT} + {variant}"}
            bad = [n for n, x in zip(["dq", "dk", "dv", "dg"], grads[0]) if torch.isnan(x).any().item()]
            if ref is not None:
                ours["rel_error_vs_fla"] = {name: max(rel_error(grads[i][j], ref[i][j]) for i in range(INPUT_SETS))
                                            for j, name in enumerate(["dq", "dk", "dv", "dg"])}
            else:
                ours["checked"] = "NaN / unwritten only (no chunk_gla to compare with)"
            if bad:
                ours["error"] = both["error"] = f"NaN or unwritten element in {', '.join(bad)}"
            elif ref is not None and max(ours["rel_error_vs_fla"].values()) > 1e-2:
                ours["error"] = both["error"] = f"gradients differ from chunk_gla: {ours['rel_error_vs_fla']}"
            else:
                timed += [(both, fwd_bwd), (ours, bwd)]
            if "error" in ours:
                checked += [ours, both]
        clocks = time_rows(timed, INPUT_SETS, args.reps, args.warmup, flush, args.pad_us)
        if args.profile:
            entry["kernels"] = {row["name"]: kernel_times(lambda: fn(0)) for row, fn in timed}
        entry["rows"] = [row for row, _ in timed] + checked
        if clocks:
            entry["clocks"] = clocks
        report["shapes"].append(entry)
        print_table(entry)
        del sets, outs, states, timed
        torch.cuda.empty_cache()

    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)


def print_table(entry):
    s = entry["shape"]
    rows = {r["name"]: r for r in entry["rows"]}
    fla_both = rows.get("fla_chunk_gla_fwd_bwd", {}).get("ms")
    fla_bwd = rows.get("fla_chunk_gla_bwd", {}).get("ms")
    print(f"\n## B={s['B']} T={s['T']} H={s['H']} K={s['K']} V={s['V']}  backward floor {entry['floor_ms']:.3f} ms "
          f"(bytes {entry['floor_bytes_ms']:.3f} ms, FLOPs {entry['floor_flops_ms']:.3f} ms)")
    if "clocks" in entry:
        print(clock_line(entry["clocks"]))
    print("| row | median ms [min, max] | time/floor | fla fwd+bwd / time | fla bwd / time | rel err vs fla |")
    print("|---|---|---|---|---|---|")
    for r in entry["rows"]:
        if "ms" not in r:
            print(f"| {r['name']} | - | - | - | - | {r.get('error', '')} |")
            continue
        ms = r["ms"]
        f = lambda x: f"{x:.2f}x" if x else "-"
        err = r.get("rel_error_vs_fla")
        err_text = ", ".join(f"{k} {v:.1e}" for k, v in err.items()) if err else ""
        print(f"| {r['name']} | {ms:.3f} [{r['min_ms']:.3f}, {r['max_ms']:.3f}] | {ms / entry['floor_ms']:.2f} | "
              f"{f(fla_both / ms if fla_both else None)} | {f(fla_bwd / ms if fla_bwd else None)} | {err_text} |",
              flush=True)
    for name, kernels in entry.get("kernels", {}).items():
        print(f"  {name}: " + "; ".join(f"{k[:50]} {ms:.3f} ms" for k, ms in kernels[:6]))


if __name__ == "__main__":
    main()
