#!/usr/bin/env python3
"""Times a gla training step on a variable-length batch against the same tokens in equal lengths.

    python3 bench/gpu/bench_gla_varlen.py --lib BUILD/cuda/gla/liboverlap_gla_capi.so [--out results.json]

The batch (issue 18): 64 sequences of 1 to 8192 steps, lengths 8192 (i/63)^3 (at least 1) in a
seeded shuffled order, about 133k steps in all. Per head shape (H, K, V), forward (pingpong_fused,
saving every chunk's state) + backward (saved_states), rows:
  overlap_varlen_fwd_bwd        the packed batch on the variable-length kernels (cu_seqlens)
  overlap_equal_fwd_bwd         the same number of steps as 64 equal sequences (B = 64), dense kernels
  overlap_varlen_equal_fwd_bwd  those equal sequences through the variable-length kernels
  overlap_per_sequence_fwd_bwd  the packed batch as one dense call per sequence (what a caller
                                without variable-length kernels does)
  fla_chunk_gla_varlen_fwd_bwd  flash-linear-attention's chunk_gla with cu_seqlens, forward and
                                autograd.grad (where importable and not --no-peers)
per_token_vs_equal is (ms / steps) of a row over that of overlap_equal_fwd_bwd: issue 18's goal is
at most 1.10 for overlap_varlen_fwd_bwd. floor_ms is the backward's (bench_gla_train.backward_floor
over the steps). Before timing, the variable-length gradients are compared with the per-sequence
dense calls (and fla's where present): relative error under 1e-2, no NaN (outputs NaN-filled first).
"""
import argparse
import ctypes
import json
import os
import random
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
from bench_common import (add_flush_argument, add_pad_argument, call_capi, clock_line, kernel_times, rel_error,  # noqa: E402
                          start_report, time_rows)
from bench_gla_train import FORWARD_VARIANT, OverlapLib, backward_floor, import_chunk_gla, make_inputs  # noqa: E402

HEADS = [(16, 128, 128), (32, 64, 64)]
SEQUENCES, LONGEST = 64, 8192
INPUT_SETS = 2
BACKWARD = "saved_states"


def mixed_lengths(seed=18):
    lengths = [max(1, round(LONGEST * (i / (SEQUENCES - 1)) ** 3)) for i in range(SEQUENCES)]
    random.Random(seed).shuffle(lengths)
    return lengths


class VarlenLib(OverlapLib):
    def __init__(self, path):
        super().__init__(path)
        f = self.lib.overlap_gla_forward_varlen
        f.restype = ctypes.c_int
        f.argtypes = [ctypes.c_char_p] + [ctypes.c_void_p] * 10 + [ctypes.c_int] * 6 + [
            ctypes.c_double, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
        b = self.lib.overlap_gla_backward_varlen
        b.restype = ctypes.c_int
        b.argtypes = [ctypes.c_char_p] + [ctypes.c_void_p] * 15 + [ctypes.c_int] * 6 + [
            ctypes.c_double, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
        w = self.lib.overlap_gla_varlen_workspace_bytes
        w.restype = ctypes.c_longlong
        w.argtypes = [ctypes.c_char_p] + [ctypes.c_int] * 5 + [ctypes.c_char_p, ctypes.c_int]

    def varlen_workspace(self, variant, n, T, H, K, V):
        size = call_capi(self.lib.overlap_gla_varlen_workspace_bytes, variant.encode() if variant else None, n, T, H,
                         K, V)
        return torch.empty(max(size, 1), dtype=torch.uint8, device="cuda")

    def forward_varlen(self, q, k, v, g, o, states, cu, ws, scale):
        _, T, H, K = q.shape
        call_capi(self.lib.overlap_gla_forward_varlen, FORWARD_VARIANT.encode(), q.data_ptr(), k.data_ptr(),
                  v.data_ptr(), g.data_ptr(), None, o.data_ptr(), None, states.data_ptr(), ws.data_ptr(),
                  cu.data_ptr(), cu.numel() - 1, 1, T, H, K, v.shape[-1], scale,
                  torch.cuda.current_stream().cuda_stream)

    def backward_varlen(self, q, k, v, g, d_o, grads, states, cu, ws, scale):
        _, T, H, K = q.shape
        dq, dk, dv, dg = grads
        call_capi(self.lib.overlap_gla_backward_varlen, BACKWARD.encode(), q.data_ptr(), k.data_ptr(), v.data_ptr(),
                  g.data_ptr(), None, d_o.data_ptr(), None, dq.data_ptr(), dk.data_ptr(), dv.data_ptr(),
                  dg.data_ptr(), None, states.data_ptr(), ws.data_ptr(), cu.data_ptr(), cu.numel() - 1, 1, T, H, K,
                  v.shape[-1], scale, torch.cuda.current_stream().cuda_stream)


def offsets(lengths):
    cu = [0]
    for n in lengths:
        cu.append(cu[-1] + n)
    return cu


def nan_grads(like):
    return [tuple(torch.full_like(x, float("nan")) for x in s[:4]) for s in like]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--out", default=None)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    add_pad_argument(ap)
    ap.add_argument("--heads", default=None, help="H,K,V;... (default: 16,128,128;32,64,64)")
    ap.add_argument("--no-peers", action="store_true", help="skip fla's chunk_gla")
    ap.add_argument("--profile", action="store_true", help="also print per-kernel times of one call of each row")
    add_flush_argument(ap)
    args = ap.parse_args()

    lib = VarlenLib(args.lib)
    chunk_gla, extra = import_chunk_gla(args.no_peers)
    flush, bw, rate, report = start_report(args.flush, **extra)
    lengths = mixed_lengths()
    report["lengths"] = lengths
    heads = HEADS if not args.heads else [tuple(int(x) for x in s.split(",")) for s in args.heads.split(";")]

    for H, K, V in heads:
        entry = bench_heads(lib, chunk_gla, flush, bw, rate, args, lengths, H, K, V)
        report["shapes"].append(entry)
        print_table(entry)
        torch.cuda.empty_cache()

    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)


def bench_heads(lib, chunk_gla, flush, bw, rate, args, lengths, H, K, V):
    """One head shape: the rows' entry (its tensors are freed on return)."""
    total = sum(lengths)
    equal_T = round(total / SEQUENCES)
    scale = K ** -0.5
    cu_list = offsets(lengths)
    cu = torch.tensor(cu_list, dtype=torch.int32, device="cuda")
    cu_equal = torch.arange(0, SEQUENCES * equal_T + 1, equal_T, dtype=torch.int32, device="cuda")
    packed = [make_inputs((1, total, H, K, V), 3000 + i) for i in range(INPUT_SETS)]
    equal = [make_inputs((SEQUENCES, equal_T, H, K, V), 4000 + i) for i in range(INPUT_SETS)]
    flat = [tuple(x.reshape(1, SEQUENCES * equal_T, *x.shape[2:]) for x in s) for s in equal]
    floor_bytes, flops = backward_floor(1, total, H, K, V)
    bytes_ms, flops_ms = floor_bytes / bw * 1e3, flops / rate * 1e3
    entry = {"heads": dict(H=H, K=K, V=V), "steps": total, "equal_shape": dict(B=SEQUENCES, T=equal_T),
             "floor_ms": max(bytes_ms, flops_ms), "floor_bytes_ms": bytes_ms, "floor_flops_ms": flops_ms,
             "rows": []}
    chunks_packed = (total + 63 * SEQUENCES) // 64
    o_packed = [torch.empty_like(s[2]) for s in packed]
    st_packed = [torch.empty(chunks_packed, H, K, V, device="cuda", dtype=torch.bfloat16) for _ in packed]
    g_packed = nan_grads(packed)
    ws_fwd = lib.varlen_workspace(None, SEQUENCES, total, H, K, V)
    ws_bwd = lib.varlen_workspace(BACKWARD, SEQUENCES, total, H, K, V)

    def varlen(i):
        q, k, v, g, d_o = packed[i]
        lib.forward_varlen(q, k, v, g, o_packed[i], st_packed[i], cu, ws_fwd, scale)
        lib.backward_varlen(q, k, v, g, d_o, g_packed[i], st_packed[i], cu, ws_bwd, scale)

    eq_shape = (SEQUENCES, equal_T, H, K, V)
    o_equal = [torch.empty_like(s[2]) for s in equal]
    st_equal = [torch.empty(SEQUENCES, H, (equal_T + 63) // 64, K, V, device="cuda", dtype=torch.bfloat16)
                for _ in equal]
    g_equal = nan_grads(equal)
    ws_equal = lib.backward_workspace(BACKWARD, eq_shape)

    def dense_equal(i):
        q, k, v, g, d_o = equal[i]
        lib.forward(q, k, v, g, o_equal[i], st_equal[i], scale)
        lib.backward(BACKWARD, q, k, v, g, d_o, g_equal[i], st_equal[i], ws_equal, scale)

    o_flat = [x.reshape(1, -1, H, V) for x in o_equal]
    g_flat = [tuple(x.reshape(1, SEQUENCES * equal_T, *x.shape[2:]) for x in gr) for gr in nan_grads(equal)]
    st_flat = [torch.empty((SEQUENCES * equal_T + 63 * SEQUENCES) // 64, H, K, V, device="cuda",
                           dtype=torch.bfloat16) for _ in equal]
    ws_flat_fwd = lib.varlen_workspace(None, SEQUENCES, SEQUENCES * equal_T, H, K, V)
    ws_flat_bwd = lib.varlen_workspace(BACKWARD, SEQUENCES, SEQUENCES * equal_T, H, K, V)

    def varlen_equal(i):
        q, k, v, g, d_o = flat[i]
        lib.forward_varlen(q, k, v, g, o_flat[i], st_flat[i], cu_equal, ws_flat_fwd, scale)
        lib.backward_varlen(q, k, v, g, d_o, g_flat[i], st_flat[i], cu_equal, ws_flat_bwd, scale)

    # One dense call per sequence, on views of the packed tensors (B = 1: a run of steps is
    # contiguous), states and workspace sized for the longest.
    g_seq = nan_grads(packed)
    st_seq = torch.empty(1, H, (LONGEST + 63) // 64, K, V, device="cuda", dtype=torch.bfloat16)
    ws_seq = lib.backward_workspace(BACKWARD, (1, LONGEST, H, K, V))
    o_seq = [torch.empty_like(s[2]) for s in packed]

    def per_sequence(i):
        for s, e in zip(cu_list[:-1], cu_list[1:]):
            q, k, v, g, d_o = (x[:, s:e] for x in packed[i])
            lib.forward(q, k, v, g, o_seq[i][:, s:e], st_seq, scale)
            lib.backward(BACKWARD, q, k, v, g, d_o, tuple(x[:, s:e] for x in g_seq[i]), st_seq, ws_seq, scale)

    timed = []
    for fn in (varlen, dense_equal, varlen_equal, per_sequence):
        for i in range(INPUT_SETS):
            fn(i)
    torch.cuda.synchronize()
    names = ["dq", "dk", "dv", "dg"]
    vs_dense = {n: max(rel_error(g_packed[i][j], g_seq[i][j]) for i in range(INPUT_SETS))
                for j, n in enumerate(names)}
    vs_dense["o"] = max(rel_error(o_packed[i], o_seq[i]) for i in range(INPUT_SETS))
    vs_equal = {n: max(rel_error(g_flat[i][j], g_equal[i][j].reshape(g_flat[i][j].shape))
                       for i in range(INPUT_SETS)) for j, n in enumerate(names)}
    checks = {"overlap_varlen_fwd_bwd": ({"vs_per_sequence": vs_dense}, varlen),
              "overlap_equal_fwd_bwd": ({}, dense_equal),
              "overlap_varlen_equal_fwd_bwd": ({"vs_dense_equal": vs_equal}, varlen_equal),
              "overlap_per_sequence_fwd_bwd": ({}, per_sequence)}
    errors = {"overlap_varlen_fwd_bwd": (g_packed, vs_dense), "overlap_equal_fwd_bwd": (g_equal, {}),
              "overlap_varlen_equal_fwd_bwd": (g_flat, vs_equal), "overlap_per_sequence_fwd_bwd": (g_seq, {})}
    for name, (info, fn) in checks.items():
        row = {"name": name, **info}
        grads, rel = errors[name]
        bad = [n for j, n in enumerate(names) if any(torch.isnan(gr[j]).any().item() for gr in grads)]
        if bad:
            row["error"] = f"NaN or unwritten element in {', '.join(bad)}"
        elif rel and max(rel.values()) > 1e-2:
            row["error"] = f"differs: {rel}"
        else:
            timed.append((row, fn))
        if "error" in row:
            entry["rows"].append(row)
    if chunk_gla is not None:
        cu_long = cu.to(torch.int64)
        leaves = [tuple(x.detach().clone().requires_grad_(True) for x in s[:4]) for s in packed]

        def fla_varlen(i):
            o = chunk_gla(*leaves[i], scale=scale, cu_seqlens=cu_long)[0]
            torch.autograd.grad(o, leaves[i], packed[i][4])

        o = chunk_gla(*leaves[0], scale=scale, cu_seqlens=cu_long)[0]
        ref = torch.autograd.grad(o, leaves[0], packed[0][4])
        for row, _ in timed:
            if row["name"] == "overlap_varlen_fwd_bwd":
                row["rel_error_vs_fla"] = {n: rel_error(g_packed[0][j], ref[j]) for j, n in enumerate(names)}
        timed.append(({"name": "fla_chunk_gla_varlen_fwd_bwd"}, fla_varlen))
    clocks = time_rows(timed, INPUT_SETS, args.reps, args.warmup, flush, args.pad_us)
    if args.profile:
        entry["kernels"] = {row["name"]: kernel_times(lambda: fn(0)) for row, fn in timed
                            if row["name"] != "overlap_per_sequence_fwd_bwd"}
    rows = [row for row, _ in timed]
    steps = {"overlap_equal_fwd_bwd": SEQUENCES * equal_T, "overlap_varlen_equal_fwd_bwd": SEQUENCES * equal_T}
    base = next((r["ms"] / steps["overlap_equal_fwd_bwd"] for r in rows
                 if r["name"] == "overlap_equal_fwd_bwd" and "ms" in r), None)
    for r in rows:
        if "ms" in r and base:
            r["per_token_vs_equal"] = r["ms"] / steps.get(r["name"], total) / base
    entry["rows"] = rows + entry["rows"]
    if clocks:
        entry["clocks"] = clocks
    return entry


def print_table(entry):
    h = entry["heads"]
    print(f"\n## H={h['H']} K={h['K']} V={h['V']}: {entry['steps']} steps in 64 sequences of 1 to {LONGEST} "
          f"(equal: B={entry['equal_shape']['B']}, T={entry['equal_shape']['T']}); backward floor "
          f"{entry['floor_ms']:.3f} ms")
    if "clocks" in entry:
        print(clock_line(entry["clocks"]))
    print("| row | median ms [min, max] | per step vs equal (goal <= 1.10) | checks |")
    print("|---|---|---|---|")
    for r in entry["rows"]:
        if "ms" not in r:
            print(f"| {r['name']} | - | - | {r.get('error', '')} |")
            continue
        checks = {k: v for k, v in r.items() if k.startswith("vs_") or k == "rel_error_vs_fla"}
        text = "; ".join(f"{k}: " + ", ".join(f"{n} {e:.1e}" for n, e in v.items()) for k, v in checks.items())
        ratio = r.get("per_token_vs_equal")
        print(f"| {r['name']} | {r['ms']:.3f} [{r['min_ms']:.3f}, {r['max_ms']:.3f}] | "
              f"{f'{ratio:.3f}' if ratio else '-'} | {text} |", flush=True)
    for name, kernels in entry.get("kernels", {}).items():
        print(f"  {name}: " + "; ".join(f"{k[:50]} {ms:.3f} ms" for k, ms in kernels[:6]))


if __name__ == "__main__":
    main()
