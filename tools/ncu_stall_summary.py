#!/usr/bin/env python3
"""Summarize Nsight Compute's per-instruction warp-stall samples (a `--page source --csv
--print-source sass` export) without a cubin to attribute them to regions (for that,
tools/ncu_by_region.py): the samples by opcode, and the instructions that hold the most samples
with their leading stall reasons.

    tools/ncu_stall_summary.py SASS_CSV [--top N]
"""
import os
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(__file__))
from ncu_by_region import read_samples, stall_columns  # noqa: E402

ALL = "Warp Stall Sampling (All Samples)"


def opcode(source):
    """The instruction's opcode without its predicate and modifiers."""
    words = [w for w in source.split() if not w.startswith("@")]
    return words[0].split(".")[0] if words else "?"


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    top = int(argv[argv.index("--top") + 1]) if "--top" in argv else 25
    rows = [row for _, row in read_samples(argv[1])]
    reasons = stall_columns(rows[0])
    samples = [float(r[ALL] or 0) for r in rows]
    total = sum(samples)
    if total == 0:
        print(f"{len(rows)} instructions, no stall samples")
        return 1
    print(f"{len(rows)} instructions, {total:.0f} stall samples")
    kinds = Counter()
    for r, n in zip(rows, samples):
        kinds[opcode(r["Source"])] += n
    print("by opcode:", ", ".join(f"{k} {100 * v / total:.1f}%" for k, v in kinds.most_common(12)))
    for n, r in sorted(zip(samples, rows), key=lambda nr: -nr[0])[:top]:
        why = sorted(((float(r[c] or 0), c[len("stall_"):]) for c in reasons), reverse=True)[:3]
        shown = ", ".join(f"{name} {v:.0f}" for v, name in why if v > 0)
        print(f"{100 * n / total:5.1f}%  {r['Address']}  {r['Source'][:70]:<70}  {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
