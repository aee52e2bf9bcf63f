#!/usr/bin/env python3
"""Re-predict every row of a validation report.json with the current model, no GPU needed.

    tools/rescore_validation.py REPORT_JSON OVERLAP_BINARY [--hw PROFILE] [--wrong]

The measured times stay as measured; only the predictions are redone, with
`OVERLAP_BINARY predict --json --hw PROFILE --workload W --variant V --shape S`. Prints, per
row, the measured time, the old and new prediction and error, then the median and maximum
|error| old and new, and the speedup-sign check of every pair whose measured speedup exceeds
5% (as `overlap validate` reports it); --wrong lists the pairs whose sign the new model gets
wrong; and, for each tuning group of the report (`overlap validate --tune`), the new model's pick
over the measured best and the Spearman rank correlation of predicted against measured times.
Error = predicted / measured - 1.
"""
import json
import statistics
import subprocess
import sys


def predict(binary, hw, workload, variant, shape):
    out = subprocess.run([binary, "predict", "--json", "--hw", hw, "--workload", workload, "--variant", variant,
                          "--shape", shape], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    report_path, binary = argv[1], argv[2]
    with open(report_path) as f:
        report = json.load(f)
    hw = report.get("profile", "H100")
    if "--hw" in argv:
        hw = argv[argv.index("--hw") + 1]
    rows = [r for r in report["rows"] if r.get("passed") and r.get("measured_us")]
    old_err, new_err, new_time = [], [], {}
    print(f"report {report_path} ({report.get('gpu', '?')}, {report.get('date', '?')}), profile {hw}")
    print(f"{'variant':<26} {'shape':<38} {'meas us':>9} {'old us':>9} {'old err':>8} {'new us':>9} {'new err':>8}  bottleneck")
    for r in rows:
        p = predict(binary, hw, r["workload"], r["variant"], r["shape"])
        m, old, new = r["measured_us"], r["predicted_us"], p["time_us"]
        eo, en = old / m - 1, new / m - 1
        old_err.append(abs(eo))
        new_err.append(abs(en))
        new_time[(r["workload"], r["shape"], r["variant"])] = new
        print(f"{r['variant']:<26} {r['shape']:<38} {m:9.1f} {old:9.1f} {100 * eo:+7.1f}% {new:9.1f} {100 * en:+7.1f}%  "
              f"{p.get('bottleneck', '?')}")
    print()
    print(f"rows: {len(rows)}")
    print(f"median |error|: old {100 * statistics.median(old_err):.1f}%  new {100 * statistics.median(new_err):.1f}%")
    print(f"max |error|:    old {100 * max(old_err):.1f}%  new {100 * max(new_err):.1f}%")
    right = total = 0
    for pair in report.get("pairs", []):
        key_b = (pair.get("workload", "gla"), pair["shape"], pair["baseline"])
        key_c = (pair.get("workload", "gla"), pair["shape"], pair["candidate"])
        measured = pair.get("measured_speedup")
        if measured is None or key_b not in new_time or key_c not in new_time or abs(measured - 1) <= 0.05:
            continue
        predicted = new_time[key_b] / new_time[key_c]
        total += 1
        ok = (predicted > 1) == (measured > 1)
        right += ok
        if not ok and "--wrong" in argv:
            print(f"  wrong sign: {key_b[0]} {key_b[1]} {key_c[2]} over {key_b[2]}: "
                  f"measured {measured:.2f}x, predicted {predicted:.2f}x")
    if total:
        print(f"speedup signs right (|measured-1| > 5%): new {right} / {total}")
    print_tuning(report, rows, new_time)
    return 0


def ranks(values):
    """Ranks from 1, ties sharing their mean rank (as Spearman's rho needs)."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(xs, ys):
    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.mean(rx), statistics.mean(ry)
    num = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    den = (sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry)) ** 0.5
    return num / den if den else 0.0


def print_tuning(report, rows, new_time):
    groups = report.get("tuning", [])
    if not groups:
        return
    print("tune (new model): pick over measured best, Spearman")
    worst = 1.0
    for g in groups:
        measured = {r["variant"]: r["measured_us"] for r in rows
                    if r["workload"] == g["workload"] and r["shape"] == g["shape"]}
        names = [v for v in measured if (g["workload"], g["shape"], v) in new_time]
        if len(names) < 2:
            continue
        predicted = [new_time[(g["workload"], g["shape"], v)] for v in names]
        pick = names[predicted.index(min(predicted))]
        best = min(measured[v] for v in names)
        over = measured[pick] / best
        worst = max(worst, over)
        rho = spearman(predicted, [measured[v] for v in names])
        print(f"  {g['workload']} {g['shape']}: pick {pick} {over:.3f}x the best (old {g['pick_over_best']:.3f}), "
              f"Spearman {rho:.3f} (old {g['spearman']:.3f})")
    print(f"worst pick over best: {worst:.3f}")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
