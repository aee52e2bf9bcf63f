#!/usr/bin/env python3
"""Summarize Nsight Compute's per-instruction warp-stall samples (a `--page source --csv
--print-source sass` export): the instructions that hold the most samples, with their leading
stall reasons, and the samples by instruction kind (SYNCS waits, wgmma waits, TMA, ...).

    tools/ncu_stall_summary.py SASS_CSV [--top N]
"""
import csv
import re
import sys
from collections import Counter


def number(s):
    try:
        return float(str(s).replace(",", ""))
    except ValueError:
        return 0.0


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    top = int(argv[argv.index("--top") + 1]) if "--top" in argv else 25
    with open(argv[1], newline="") as f:
        lines = f.read().splitlines()
    # Skip any preamble before the header row (the one naming the SASS source column).
    start = next((i for i, l in enumerate(lines) if "Source" in l and "Address" in l), 0)
    rows = list(csv.DictReader(lines[start:]))
    if not rows:
        print("no rows")
        return 1
    cols = list(rows[0].keys())
    total_col = next((c for c in cols if c.startswith("Warp Stall Sampling (All")), None)
    reason_cols = [c for c in cols if c.startswith("stall_") or "Stall " in c and c != total_col and "Sampling" not in c]
    if total_col is None:
        print("columns:", cols)
        return 1
    total = sum(number(r[total_col]) for r in rows)
    print(f"{len(rows)} instructions, {total:.0f} stall samples ({total_col}); reason columns: {len(reason_cols)}")
    kinds = Counter()
    for r in rows:
        op = r.get("Source", "").split()
        op = [t for t in op if not t.startswith("@")]
        kinds[op[0].split(".")[0] if op else "?"] += number(r[total_col])
    print("by opcode:", ", ".join(f"{k} {100 * v / total:.1f}%" for k, v in kinds.most_common(12)))
    for r in sorted(rows, key=lambda r: -number(r[total_col]))[:top]:
        n = number(r[total_col])
        reasons = sorted(((number(r[c]), c) for c in reason_cols), reverse=True)[:3]
        why = ", ".join(f"{re.sub('^stall_', '', c)} {v:.0f}" for v, c in reasons if v > 0)
        print(f"{100 * n / total:5.1f}%  {r.get('Address', '')}  {r.get('Source', '')[:70]:<70}  {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
