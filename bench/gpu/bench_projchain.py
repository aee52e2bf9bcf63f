#!/usr/bin/env python3
"""Times every projchain variant beside its peers, in one run, on the same inputs.

    python3 bench/gpu/bench_projchain.py --lib BUILD/cuda/projchain/liboverlap_projchain_capi.so [--out r.json]

Per shape (B, T, d, H, dk) it times, through the C entry points:
  unfused                      5 cuBLAS GEMMs + 3 activation kernels
  wide_gemm                    1 cuBLAS GEMM on the packed weight + q/v copies + 3 activation kernels
  epilogue_fused               1 CUTLASS sm90 GEMM, activations in the epilogue
  epilogue_fused+pack          the same, packing [W_q|W_k|W_v|W_g|W_alpha] inside every call
  cluster_fused                (refuses: not implemented; the row shows the reason)
The wide variants' main rows use a weight packed once beforehand (as a model packs at load time); only
the "+pack" row pays the packing copy. Peers, same inputs, same run:
  torch_wide_matmul            torch.matmul(x, W_cat) alone (cuBLAS wide GEMM, no activations)
  torch_unfused                PyTorch: five matmuls, F.normalize per head, F.silu, torch.sigmoid
And the hardware floor: max(bytes that must move / measured D2D copy bandwidth, FLOPs /
measured bf16 tensor rate of a large torch.matmul), both measured in this run.
Timing: warm-up, CUDA events around each call, L2 flushed before each call, median of many
calls, rotating over several random input sets (never zeros). All rows of a shape are timed
interleaved (the implementations take turns, 5 calls each; the median is over the 2nd-5th calls,
the first call of each turn is reported apart), so they see the same GPU clocks, and each call
starts behind a short GPU spin (--pad-us) so that the host's enqueue time stays outside the
timed window. The SM clock, power and throttle reasons are sampled (nvidia-smi) during that loop.
--strips G,...: extra epilogue_fused rows with an explicit tile order (column tiles per strip).
--compare-lib LABEL=PATH: an extra epilogue_fused row "epilogue_fused[LABEL]" from another build of
the C API library (e.g. compiled with different flags), checked and timed in the same turns.
--diagnostic-lib LABEL=PATH: the same for builds whose outputs are wrong by design (a diagnostic
that skips part of the work): timed, not checked, and labelled "[LABEL, unchecked]".
Before timing, each variant's outputs are compared with an fp32 PyTorch reference (relative
Frobenius error per output, at most 1e-2, no NaN: outputs are NaN-filled first), so a broken
kernel cannot post a time.
"""
import argparse
import ctypes
import json
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
from bench_common import (L2Flush, add_flush_argument, add_pad_argument, call_capi, clock_line, rel_error,  # noqa: E402
                          start_report, time_rows)

SHAPES = [(4, 512, 2048, 16, 128), (4, 1024, 2048, 16, 128), (4, 2048, 2048, 16, 128), (4, 4096, 2048, 16, 128),
          (8, 4096, 2048, 16, 128)]
VARIANTS = ["unfused", "wide_gemm", "epilogue_fused", "epilogue_fused+pack", "cluster_fused"]
OUTPUTS = ["q", "k", "v", "g", "alpha"]
INPUT_SETS = 3


class OverlapLib:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        vp, ci, cc = ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p
        self.lib.overlap_projchain_forward.restype = ci
        self.lib.overlap_projchain_forward.argtypes = [cc] + [vp] * 13 + [ci] * 6 + [vp, cc, ci]
        self.lib.overlap_projchain_pack.restype = ci
        self.lib.overlap_projchain_pack.argtypes = [cc] + [vp] * 6 + [ci] * 5 + [vp, cc, ci]
        self.lib.overlap_projchain_workspace_bytes.restype = ctypes.c_longlong
        self.lib.overlap_projchain_workspace_bytes.argtypes = [cc] + [ci] * 6 + [cc, ci]
        self.lib.overlap_projchain_packed_ld.restype = ctypes.c_longlong
        self.lib.overlap_projchain_packed_ld.argtypes = [ci] * 5 + [cc, ci]

    def packed_ld(self, shape):
        return call_capi(self.lib.overlap_projchain_packed_ld, *shape)

    def workspace_bytes(self, variant, shape, packed):
        return call_capi(self.lib.overlap_projchain_workspace_bytes, variant.encode(), *shape, int(packed))

    def pack(self, variant, s, shape, key=None):
        """Packs into s["packed"][key or variant] (each build packs its own: the layout may differ)."""
        call_capi(self.lib.overlap_projchain_pack, variant.encode(),
                  *(s[w].data_ptr() for w in ("W_q", "W_k", "W_v", "W_g", "W_alpha")),
                  s["packed"][key or variant].data_ptr(), *shape, torch.cuda.current_stream().cuda_stream)

    def forward(self, variant, s, outs, workspace, shape, prepacked, strip_n=0, key=None):
        """strip_n: epilogue_fused's tile order (column tiles per strip); 0: the tiling header's.
        key: which packed weight of s["packed"] to use (default: the variant's)."""
        call_capi(self.lib.overlap_projchain_forward, variant.encode(), s["x"].data_ptr(),
                  *(s[w].data_ptr() for w in ("W_q", "W_k", "W_v", "W_g", "W_alpha")),
                  s["packed"][key or variant].data_ptr() if prepacked else None, *(outs[o].data_ptr() for o in OUTPUTS),
                  workspace.data_ptr() if workspace is not None else None, *shape, strip_n,
                  torch.cuda.current_stream().cuda_stream)


def make_inputs(shape, seed):
    B, T, d, H, dk = shape
    gen = torch.Generator(device="cuda").manual_seed(seed)
    N, HD = B * T, H * dk
    s = {"x": torch.randn(N, d, device="cuda", generator=gen).to(torch.bfloat16)}
    for name, width in (("W_q", HD), ("W_k", HD), ("W_v", HD), ("W_g", HD), ("W_alpha", H)):
        s[name] = (torch.randn(d, width, device="cuda", generator=gen) / d ** 0.5).to(torch.bfloat16)
    # The peer's concatenated weight (the same values as our packed one, without stride padding).
    s["W_cat"] = torch.cat([s[w] for w in ("W_q", "W_k", "W_v", "W_g", "W_alpha")], dim=1).contiguous()
    return s


def torch_unfused(s, H, dk):
    x = s["x"]
    q = x @ s["W_q"]
    k = F.normalize((x @ s["W_k"]).view(x.shape[0], H, dk), dim=-1).view(x.shape[0], H * dk)
    v = x @ s["W_v"]
    g = F.silu(x @ s["W_g"])
    alpha = torch.sigmoid(x @ s["W_alpha"])
    return {"q": q, "k": k, "v": v, "g": g, "alpha": alpha}


def fp32_reference(s, H, dk):
    f = {k: t.float() for k, t in s.items() if k.startswith("W_") or k == "x"}
    return torch_unfused(f, H, dk)


def bench_shape(shape, lib, args, flush, bw, rate):
    B, T, d, H, dk = shape
    N, wide = B * T, 4 * H * dk + H
    sets = [make_inputs(shape, 1000 + i) for i in range(INPUT_SETS)]
    ld = lib.packed_ld(shape)

    def pack_all():
        for s in sets:
            s["packed"] = {}
            for v in ("wide_gemm", "epilogue_fused"):
                s["packed"][v] = torch.empty(d * ld, device="cuda", dtype=torch.bfloat16)
                lib.pack(v, s, shape)
        torch.cuda.synchronize()

    pack_all()
    ref = fp32_reference(sets[0], H, dk)
    floor_bytes = 2 * N * d + 2 * d * wide + 2 * N * wide
    flops = 2 * N * d * wide
    entry = {"shape": dict(B=B, T=T, d=d, H=H, dk=dk), "N": N, "floor_bytes": floor_bytes, "flops": flops,
             "floor_mem_ms": floor_bytes / bw * 1e3, "floor_flop_ms": flops / rate * 1e3, "rows": []}
    entry["floor_ms"] = max(entry["floor_mem_ms"], entry["floor_flop_ms"])

    timed = []  # (row, fn) of every row whose outputs passed the check, timed together below

    def add_row(name, fn, check=None):
        row = {"name": name}
        entry["rows"].append(row)
        try:
            if check is not None:
                errs = check()
                row["rel_error"] = errs
                bad = {o: e for o, e in errs.items() if not e <= 1e-2}  # NaN fails too
                if bad:
                    row["error"] = f"wrong outputs before timing: {bad}"
                    return
            fn(0)  # fails here (not inside the timed loop) if the call is refused
            timed.append((row, fn))
        except Exception as e:  # noqa: BLE001 -- one broken row must not lose the others
            row["error"] = f"{type(e).__name__}: {e}"

    # Peers.
    add_row("torch_wide_matmul", lambda i: torch.matmul(sets[i]["x"], sets[i]["W_cat"]),
            lambda: {"q": rel_error(torch.matmul(sets[0]["x"], sets[0]["W_cat"])[:, :H * dk], ref["q"])})
    add_row("torch_unfused", lambda i: torch_unfused(sets[i], H, dk),
            lambda: {o: rel_error(t, ref[o]) for o, t in torch_unfused(sets[0], H, dk).items()})

    outs = {o: torch.empty(N, H if o == "alpha" else H * dk, device="cuda", dtype=torch.bfloat16) for o in OUTPUTS}

    def checked(run):
        def check():
            for t in outs.values():
                t.fill_(float("nan"))
            run(0)
            torch.cuda.synchronize()
            return {o: rel_error(outs[o], ref[o]) if not torch.isnan(outs[o]).any().item() else float("nan")
                    for o in OUTPUTS}
        return check

    workspaces = []  # alive until the timing is done
    for variant in args.variants.split(","):
        base, pack_per_call = variant.removesuffix("+pack"), variant.endswith("+pack")
        prepacked = base in ("wide_gemm", "epilogue_fused") and not pack_per_call
        try:
            ws_bytes = lib.workspace_bytes(base, shape, prepacked)
        except RuntimeError as e:
            entry["rows"].append({"name": variant, "error": str(e)})
            continue
        ws = torch.empty(ws_bytes, dtype=torch.uint8, device="cuda") if ws_bytes else None
        workspaces.append(ws)
        run = lambda i, base=base, ws=ws, prepacked=prepacked: lib.forward(base, sets[i], outs, ws, shape, prepacked)
        add_row(variant, run, checked(run))
        if base == "epilogue_fused" and not pack_per_call:
            for strip in (int(g) for g in args.strips.split(",") if g):
                run_strip = lambda i, g=strip, ws=ws: lib.forward("epilogue_fused", sets[i], outs, ws, shape, True, g)
                add_row(f"{variant}@strip={strip}", run_strip, checked(run_strip))

    # Other builds of the library: the same kernel entry point and outputs; each build packs its
    # own weight (the packed layout may differ between builds).
    for spec, checked_row in [(c, True) for c in args.compare_lib] + [(c, False) for c in args.diagnostic_lib]:
        label, path = spec.split("=", 1)
        other = OverlapLib(path)
        key = f"epilogue_fused[{label}]"
        try:
            for st in sets:
                st["packed"][key] = torch.empty(d * other.packed_ld(shape), device="cuda", dtype=torch.bfloat16)
                other.pack("epilogue_fused", st, shape, key)
            ws_bytes = other.workspace_bytes("epilogue_fused", shape, True)
        except RuntimeError as e:
            entry["rows"].append({"name": key, "error": str(e)})
            continue
        ws = torch.empty(ws_bytes, dtype=torch.uint8, device="cuda") if ws_bytes else None
        workspaces.append(ws)
        run = lambda i, other=other, ws=ws, key=key: other.forward("epilogue_fused", sets[i], outs, ws, shape, True,
                                                                   key=key)
        if checked_row:
            add_row(f"epilogue_fused[{label}]", run, checked(run))
        else:
            add_row(f"epilogue_fused[{label}, unchecked]", run)

    entry["clocks"] = time_rows(timed, INPUT_SETS, args.reps, args.warmup, flush, args.pad_us)
    del sets, ref, outs, workspaces
    torch.cuda.empty_cache()
    return entry


def profile_shape(shape, lib, strips):
    """One call of epilogue_fused (prepacked weight; one per tile order in `strips`, 0 = the tiling
    header's) and one of its peer torch.matmul(x, W_cat), L2 flushed before each, between
    cudaProfilerStart/Stop: `ncu --profile-from-start off` captures exactly these GEMMs, in this
    order (one warm-up call of each runs before, outside the range)."""
    B, T, d, H, dk = shape
    N = B * T
    s = make_inputs(shape, 1000)
    ld = lib.packed_ld(shape)
    s["packed"] = {"epilogue_fused": torch.empty(d * ld, device="cuda", dtype=torch.bfloat16)}
    lib.pack("epilogue_fused", s, shape)
    outs = {o: torch.empty(N, H if o == "alpha" else H * dk, device="cuda", dtype=torch.bfloat16) for o in OUTPUTS}
    ws_bytes = lib.workspace_bytes("epilogue_fused", shape, True)
    ws = torch.empty(ws_bytes, dtype=torch.uint8, device="cuda") if ws_bytes else None
    flush = L2Flush()
    fused = [lambda g=g: lib.forward("epilogue_fused", s, outs, ws, shape, True, g) for g in strips]
    peer = lambda: torch.matmul(s["x"], s["W_cat"])
    for fn in fused + [peer]:
        fn()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    for fn in fused + [peer]:
        flush()
        fn()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
    print(f"profiled epilogue_fused (strips {strips}) and torch_wide_matmul at N={N} d={d} H={H} dk={dk}", flush=True)


def print_table(entry):
    s = entry["shape"]
    rows = {r["name"]: r.get("ms") for r in entry["rows"]}
    print(f"\n## B={s['B']} T={s['T']} d={s['d']} H={s['H']} dk={s['dk']} (N={entry['N']})  floor "
          f"{entry['floor_ms'] * 1e3:.1f} us (memory {entry['floor_mem_ms'] * 1e3:.1f}, "
          f"tensor {entry['floor_flop_ms'] * 1e3:.1f})")
    c = entry.get("clocks")
    if c:
        print(clock_line(c))
    print("| implementation | median us | min-max us | floor/time | TFLOP/s | vs unfused | vs torch_wide_matmul "
          "| max rel err | first call of a block us | host enqueue us |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in entry["rows"]:
        if "ms" not in r:
            print(f"| {r['name']} | - | - | - | - | - | - | {r.get('error', '')[:150]} | - | - |")
            continue
        ms = r["ms"]
        f = lambda x: f"{x:.2f}x" if x else "-"
        err = max(r["rel_error"].values()) if r.get("rel_error") else None
        print(f"| {r['name']} | {ms * 1e3:.1f} | {r['min_ms'] * 1e3:.0f}-{r['max_ms'] * 1e3:.0f} | "
              f"{entry['floor_ms'] / ms:.2f} | {entry['flops'] / ms / 1e9:.0f} | "
              f"{f(rows.get('unfused') / ms if rows.get('unfused') else None)} | "
              f"{f(ms / rows['torch_wide_matmul'] if rows.get('torch_wide_matmul') else None)} (time ratio) | "
              f"{'' if err is None else f'{err:.1e}'} | {r['first_call_ms'] * 1e3:.1f} | {r['host_us']:.0f} |",
              flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--out", default=None)
    ap.add_argument("--reps", type=int, default=40, help="timed calls per row (in turns of 5)")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--shapes", default=None, help="B,T,d,H,dk;... (default: the issue's sweep + reference)")
    ap.add_argument("--strips", default="",
                    help="also time epilogue_fused with these tile orders (column tiles per strip), e.g. 1,11,33")
    ap.add_argument("--compare-lib", action="append", default=[], metavar="LABEL=PATH",
                    help="also time epilogue_fused from this build of the C API library (output checked)")
    ap.add_argument("--diagnostic-lib", action="append", default=[], metavar="LABEL=PATH",
                    help="as --compare-lib, for builds wrong by design: timed, output not checked")
    add_pad_argument(ap)
    ap.add_argument("--profile", action="store_true",
                    help="no timing: one profiled call of epilogue_fused and of torch_wide_matmul per shape (for ncu)")
    add_flush_argument(ap)
    args = ap.parse_args()

    lib = OverlapLib(args.lib)
    shapes = SHAPES if not args.shapes else [tuple(int(x) for x in s.split(",")) for s in args.shapes.split(";")]
    if args.profile:
        for shape in shapes:
            profile_shape(shape, lib, [int(g) for g in (args.strips or "0").split(",")])
        return
    flush, bw, rate, report = start_report(args.flush, pad_us=args.pad_us)
    for shape in shapes:
        entry = bench_shape(shape, lib, args, flush, bw, rate)
        report["shapes"].append(entry)
        print_table(entry)
        if args.out:  # after every shape, so a run cut short keeps what it measured
            with open(args.out, "w") as f:
                json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
