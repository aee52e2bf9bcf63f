#!/usr/bin/env python3
"""Split dualgemm kernels' measured times into a k-loop rate and a fixed cost, beside the model's.

A K sweep (`tools/device/dualgemm_ksweep.sh`: the same variants at one M and N and several K)
times each call; a least-squares line through time against K separates what grows with the
k-loop (µs per 1024 of K) from what does not (the intercept: launch, first load, epilogue).
With the `overlap` binary the same line is fitted through the model's predictions at the same
shapes, so a miss shows up as the model's slope or its intercept.

    python3 tools/ksweep_fit.py KSWEEP.json [build/app/overlap --hw H100] [--json | --by-variant]

--by-variant (with the binary) prints one row a variant instead: the model's k-loop rate against
the measured one, model / measured - 1 over the variant's shapes and formats (median and range),
and its fixed cost's difference in µs (a ratio of two small intercepts says little), with the
median and 90th percentile of |rate error| over every row below.
"""
import argparse
import json
import subprocess
import sys
from statistics import median

from rescore_validation import predict

FORMATS = {"bf16": 0, "fp8": 1}


def line_fit(xs, ys):
    """Least squares y = slope * x + intercept."""
    n = len(xs)
    if n < 2 or len(set(xs)) < 2:
        raise ValueError(f"a line needs two distinct K, got {sorted(set(xs))}")
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return slope, my - slope * mx


def measured_series(report):
    """{(format, M, N, variant): [(K, µs), ...]} of our kernels' rows (peers left out)."""
    series = {}
    for entry in report["shapes"]:
        s = entry["shape"]
        for row in entry["rows"]:
            if not row["name"].startswith("tile") or "ms" not in row:
                continue
            key = (entry["format"], s["M"], s["N"], row["name"])
            series.setdefault(key, []).append((s["K"], row["ms"] * 1e3))
    return series


def predicted_us(overlap, hw, fmt, m, n, k, variant):
    shape = f"L=1,M={m},N={n},K={k},fmt={FORMATS[fmt]}"
    try:
        return predict(overlap, hw, "dualgemm", variant, shape)["time_us"]
    except subprocess.CalledProcessError as e:
        raise RuntimeError(f"overlap predict {variant} {shape}: {e.stderr.strip()}") from e


def fit_all(report, overlap=None, hw="H100"):
    rows = []
    for (fmt, m, n, variant), points in sorted(measured_series(report).items()):
        points.sort()
        ks = [k for k, _ in points]
        if len(set(ks)) < 2:
            continue  # one K: nothing to separate
        slope, fixed = line_fit([k / 1024 for k in ks], [t for _, t in points])
        row = {"format": fmt, "M": m, "N": n, "variant": variant, "K": ks,
               "measured_us": [t for _, t in points], "us_per_1024_k": slope, "fixed_us": fixed}
        if overlap:
            model = [predicted_us(overlap, hw, fmt, m, n, k, variant) for k in ks]
            row["model_us"] = model
            row["model_us_per_1024_k"], row["model_fixed_us"] = line_fit([k / 1024 for k in ks], model)
        rows.append(row)
    return rows


def by_variant(rows):
    """{variant: {"slope_error": [...], "fixed_diff_us": [...]}}: the model's k-loop rate against
    the measured one (model / measured - 1) and its fixed cost's difference (model - measured, µs),
    one entry per shape and format."""
    out = {}
    for r in rows:
        if "model_us" not in r:
            raise ValueError("the errors by variant need the model's fits (give the overlap binary)")
        v = out.setdefault(r["variant"], {"slope_error": [], "fixed_diff_us": []})
        v["slope_error"].append(r["model_us_per_1024_k"] / r["us_per_1024_k"] - 1)
        v["fixed_diff_us"].append(r["model_fixed_us"] - r["fixed_us"])
    return out


def print_by_variant(rows):
    summary = by_variant(rows)
    print("| variant | rows | k-loop rate: model / measured - 1, median (range) | fixed cost: model - measured, µs |")
    print("|---|---|---|---|")
    for name, v in sorted(summary.items()):
        s, f = v["slope_error"], v["fixed_diff_us"]
        print(f"| {name} | {len(s)} | {median(s):+.1%} ({min(s):+.1%} .. {max(s):+.1%}) | "
              f"{median(f):+.1f} ({min(f):+.1f} .. {max(f):+.1f}) |")
    every = sorted(abs(x) for v in summary.values() for x in v["slope_error"])
    print(f"\nk-loop rate over all {len(every)} rows: median |error| {median(every):.1%}, "
          f"90th percentile {every[int(0.9 * (len(every) - 1))]:.1%}, max {every[-1]:.1%}")


def print_table(rows):
    with_model = any("model_us" in r for r in rows)
    head = "| format | M,N | variant | K | measured µs | µs per 1024 K | fixed µs |"
    head += " model µs | µs per 1024 K | fixed µs |" if with_model else ""
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for r in rows:
        line = (f"| {r['format']} | {r['M']},{r['N']} | {r['variant']} | {'/'.join(map(str, r['K']))} | "
                f"{' / '.join(f'{t:.1f}' for t in r['measured_us'])} | {r['us_per_1024_k']:.2f} | {r['fixed_us']:.1f} |")
        if "model_us" in r:
            line += (f" {' / '.join(f'{t:.1f}' for t in r['model_us'])} | {r['model_us_per_1024_k']:.2f} | "
                     f"{r['model_fixed_us']:.1f} |")
        print(line)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("report", help="bench_dualgemm.py --out JSON of a K sweep")
    p.add_argument("overlap", nargs="?", help="the overlap binary, to fit the model's predictions too")
    p.add_argument("--hw", default="H100", help="profile the model predicts with (default H100)")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print the fits as JSON instead of a table")
    out.add_argument("--by-variant", action="store_true",
                     help="one row a variant: the model's k-loop rate and fixed cost against the measured")
    args = p.parse_args(argv)
    with open(args.report) as f:
        report = json.load(f)
    try:
        rows = fit_all(report, args.overlap, args.hw)
    except (ValueError, RuntimeError, KeyError) as e:
        print(f"ksweep_fit: {e}", file=sys.stderr)
        return 1
    if not rows:
        print("ksweep_fit: no kernel was timed at two or more K", file=sys.stderr)
        return 1
    if args.by_variant and not args.overlap:
        print("ksweep_fit: --by-variant compares with the model: give the overlap binary", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(rows, indent=1))
    elif args.by_variant:
        print_by_variant(rows)
    else:
        print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
