#!/usr/bin/env python3
"""Markdown tables of a bench_dualgemm.py report, one per operand format: every implementation
(rows) at every shape (columns), median microseconds, with the floor, time/floor of the best of
ours, and our best against the PyTorch path of the same run.

    python3 bench/gpu/dualgemm_tables.py docs/results/dualgemm_h100.json
"""
import json
import sys


def tables(report):
    out = []
    for fmt in dict.fromkeys(e["format"] for e in report["shapes"]):
        entries = [e for e in report["shapes"] if e["format"] == fmt]
        cols = [f"({e['shape']['M']},{e['shape']['N']},{e['shape']['K']})" for e in entries]
        names = list(dict.fromkeys(r["name"] for e in entries for r in e["rows"]))
        ms = [{r["name"]: r.get("ms") for r in e["rows"]} for e in entries]
        best = [min((v, n) for n, v in m.items() if v and n.startswith("tile")) for m in ms]
        peer = "torch_bf16" if fmt == "bf16" else "torch_fp8_scaled_mm"
        out.append(f"#### {fmt}: median µs per call (M,N,K)\n")
        out.append("| implementation | " + " | ".join(cols) + " |")
        out.append("|---|" + "---|" * len(cols))
        out.append("| floor (bytes, FLOPs) | " + " | ".join(
            f"{e['floor_ms'] * 1e3:.1f} ({e['floor_bytes_ms'] * 1e3:.1f}, {e['floor_flops_ms'] * 1e3:.1f})"
            for e in entries) + " |")
        for n in names:
            cells = []
            for m, (bv, bn) in zip(ms, best):
                v = m.get(n)
                cells.append("-" if v is None else (f"**{v * 1e3:.1f}**" if n == bn else f"{v * 1e3:.1f}"))
            out.append(f"| {n} | " + " | ".join(cells) + " |")
        out.append("| best of ours / floor | " + " | ".join(
            f"{bv / e['floor_ms']:.2f}" for (bv, _), e in zip(best, entries)) + " |")
        out.append(f"| {peer} / best of ours | " + " | ".join(
            f"{m[peer] / bv:.2f}x" for (bv, _), m in zip(best, ms)) + " |")
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    print(tables(json.load(open(sys.argv[1]))))
