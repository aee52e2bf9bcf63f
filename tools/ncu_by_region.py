#!/usr/bin/env python3
"""Where a kernel's warps wait, by marked source region: Nsight Compute's per-instruction warp
stall samples (`ncu --section SourceCounters --page source --print-source sass --csv`) joined
with tools/sass_mix.py's attribution of the same cubin's instructions to regions.

    python3 tools/ncu_by_region.py --csv NCU.csv --cubin K.cubin --source KERNEL.cuh [--source ...] --kernel REGEX

The cubin must be the code ncu profiled (same source and flags); the join checks that the
opcodes agree instruction by instruction. Prints, per region: share of all samples, of
not-issued samples, and its three largest stall reasons.
"""
import argparse
import csv
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(__file__))
import sass_mix  # noqa: E402


def read_samples(path):
    with open(path) as f:
        lines = f.read().splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith('"Address","Source"'))
    rows = list(csv.DictReader(lines[start:]))
    base = int(rows[0]["Address"], 16)
    return [(int(r["Address"], 16) - base, r) for r in rows]


def stall_columns(row):
    """The per-reason sample columns of a row (all samples, not the not-issued duplicates)."""
    return [c for c in row if c.startswith("stall_") and "Not Issued" not in c]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--csv", required=True)
    ap.add_argument("--cubin", required=True)
    ap.add_argument("--source", required=True, action="append", help="marked source (repeatable)")
    ap.add_argument("--kernel", required=True, help="regex selecting exactly one function")
    ap.add_argument("--nvdisasm", default=None)
    args = ap.parse_args()
    funcs = sass_mix.attribute(args.cubin, args.source, args.kernel, sass_mix.find_tool("nvdisasm", args.nvdisasm))
    if len(funcs) != 1:
        sys.exit(f"ncu_by_region: '{args.kernel}' matches {len(funcs)} functions")
    code = {off: (op, region) for off, op, region in next(iter(funcs.values()))}
    stall_cols = None
    total = defaultdict(float)
    reasons = defaultdict(lambda: defaultdict(float))
    mismatched = 0
    for off, row in read_samples(args.csv):
        if off not in code:
            sys.exit(f"ncu_by_region: offset {off:#x} is not an instruction of the cubin (other code?)")
        op, region = code[off]
        if row["Source"].split()[0].lstrip("@!P0123456789UT ") and not row["Source"].strip().split()[-1]:
            pass
        src_op = row["Source"].strip().split()
        src_op = src_op[1] if src_op and src_op[0].startswith("@") else (src_op[0] if src_op else "")
        if src_op.split(".")[0] != op.split(".")[0]:
            mismatched += 1
        stall_cols = stall_cols or stall_columns(row)
        total[region] += float(row["Warp Stall Sampling (All Samples)"] or 0)
        total[region + " (not issued)"] += float(row["Warp Stall Sampling (Not-issued Samples)"] or 0)
        for c in stall_cols:
            reasons[region][c[6:]] += float(row[c] or 0)
    if mismatched:
        sys.exit(f"ncu_by_region: {mismatched} opcodes differ between the csv and the cubin: not the same code")
    all_samples = sum(v for k, v in total.items() if not k.endswith("(not issued)"))
    print(f"{'region':18s} {'samples':>8s} {'share':>6s}  top stall reasons (share of the region's samples)")
    for region in sorted((r for r in total if not r.endswith("(not issued)")), key=lambda r: -total[r]):
        n = total[region]
        top = sorted(reasons[region].items(), key=lambda kv: -kv[1])[:3]
        shown = ", ".join(f"{k} {v / n:.0%}" for k, v in top if v > 0)
        print(f"{region:18s} {n:8.0f} {n / all_samples:6.1%}  {shown}")


if __name__ == "__main__":
    main()
