"""Plots a user would otherwise write by hand, with matplotlib (no pyplot, no display needed):
a sweep plot (time or speedup against a shape key, one line per variant or GPU) and a
predicted-vs-measured plot from a validation report (docs/validation/*/report.json). Each returns
the matplotlib Figure and saves it when `path` is given (the extension picks PNG or SVG)."""
import json
import math
import os

from matplotlib.figure import Figure

_IDENTITY = ("hw", "variant")


def sweep_plot(df, x="T", y="time_us", by="variant", baseline=None, path=None, title=None, logx=None, logy=None):
    """`df` is overlap.sweep's DataFrame. One line per value of `by` ("variant" or "hw"), one panel
    per value of the other ("hw" or "variant"). y="time_us" plots predicted time; y="speedup"
    plots time(baseline) / time(line) at the same shape, where `baseline` is a variant (by=
    "variant") or a GPU (by="hw"). Every shape key except `x` must be fixed within a line."""
    if by not in _IDENTITY:
        raise ValueError(f"by='{by}' is not 'variant' or 'hw'")
    if x not in df.columns:
        raise ValueError(f"x='{x}' is not a column of the sweep (shape keys: {', '.join(_shape_keys(df))})")
    if y not in ("time_us", "speedup"):
        raise ValueError(f"y='{y}' is not 'time_us' or 'speedup'")
    panel_key = _IDENTITY[1 - _IDENTITY.index(by)]
    data = df[df["error"].isna()] if "error" in df.columns else df
    if data.empty:
        raise ValueError("the sweep has no predicted rows to plot (every configuration was refused)")
    _require_one_row_per_point(data, x, by, panel_key)
    if y == "speedup":
        if baseline is None:
            raise ValueError(f"y='speedup' needs baseline= (a {by} of the sweep: "
                             f"{', '.join(map(str, data[by].unique()))})")
        data = _speedups(data, x, by, panel_key, baseline)
    panels = list(data[panel_key].unique())
    fig = Figure(figsize=(6.4 * len(panels), 4.4), layout="constrained")
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    xs = sorted(data[x].unique())
    logx = _wide(xs) if logx is None else logx
    for ax, panel in zip(axes, panels):
        rows = data[data[panel_key] == panel]
        for line, part in rows.groupby(by, sort=False):
            part = part.sort_values(x)
            ax.plot(part[x], part[y], marker="o", label=str(line))
        if logx:
            ax.set_xscale("log", base=2)
        if (logy if logy is not None else (y == "time_us" and _wide(list(rows[y])))):
            ax.set_yscale("log")
        if y == "speedup":
            ax.axhline(1.0, color="0.6", linewidth=0.8)
        ax.set_xlabel(x)
        ax.set_ylabel("predicted time (us)" if y == "time_us" else f"predicted speedup over {baseline}")
        ax.set_title(f"{rows['workload'].iloc[0]} on {panel}" if panel_key == "hw" else f"{panel}")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
    fixed = _fixed_keys(data, x)
    fig.suptitle(title or f"{data['workload'].iloc[0]}: " + ", ".join(f"{k}={v}" for k, v in fixed.items()))
    _save(fig, path)
    return fig


def validation_plot(report, path=None, title=None):
    """Predicted against measured time per row of a validation report (a report.json path or its
    dict), log-log, one colour per workload, with the y = x line and the +-10% / +-30% bands
    (the accuracy goal's two bounds). Rows that failed their correctness check are left out."""
    if isinstance(report, (str, os.PathLike)):
        with open(report) as f:
            report = json.load(f)
    if report.get("format") != "overlap-validation-report":
        raise ValueError(f"not a validation report (format={report.get('format')!r}, "
                         "expected 'overlap-validation-report')")
    rows = [r for r in report["rows"] if r.get("passed") and r.get("measured_us") and r.get("predicted_us")]
    if not rows:
        raise ValueError("the report has no passed, timed rows to plot")
    fig = Figure(figsize=(6.4, 6.0), layout="constrained")
    ax = fig.subplots()
    for workload in sorted({r["workload"] for r in rows}):
        part = [r for r in rows if r["workload"] == workload]
        ax.scatter([r["measured_us"] for r in part], [r["predicted_us"] for r in part], label=workload, s=18)
    values = [r[k] for r in rows for k in ("measured_us", "predicted_us")]
    lo, hi = min(values) / 1.5, max(values) * 1.5
    line = [lo, hi]
    ax.plot(line, line, color="black", linewidth=0.8, label="predicted = measured")
    for err, style in ((0.1, ":"), (0.3, "--")):
        ax.plot(line, [v * (1 + err) for v in line], color="0.5", linestyle=style, linewidth=0.8,
                label=f"+-{err:.0%}")
        ax.plot(line, [v * (1 - err) for v in line], color="0.5", linestyle=style, linewidth=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("measured time (us)")
    ax.set_ylabel("predicted time (us)")
    s = report.get("summary", {})
    default_title = f"{report.get('gpu', '?')} (profile {report.get('profile', '?')}): {len(rows)} runs"
    if "median_abs_error" in s:
        default_title += f", median |error| {s['median_abs_error']:.1%}, max {s['max_abs_error']:.1%}"
    ax.set_title(title or default_title, fontsize="medium")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    _save(fig, path)
    return fig


def _shape_keys(df):
    fixed = {"hw", "workload", "variant", "shape", "time_us", "bottleneck", "hbm_bytes", "flops", "achieved_GBps",
             "achieved_TFLOPs", "load_hidden_fraction", "sm_fill", "launches", "error"}
    return [c for c in df.columns if c not in fixed and not c.startswith("busy_")]


def _fixed_keys(df, x):
    return {k: df[k].iloc[0] for k in _shape_keys(df) if k != x and df[k].nunique() == 1}


def _require_one_row_per_point(df, x, by, panel_key):
    counts = df.groupby([panel_key, by, x]).size()
    if (counts > 1).any():
        varying = [k for k in _shape_keys(df) if k != x and df[k].nunique() > 1]
        raise ValueError(f"several rows per point of the plot: shape keys other than x='{x}' vary "
                         f"({', '.join(varying)}); filter the DataFrame to one value of each first")


def _speedups(df, x, by, panel_key, baseline):
    if baseline not in set(df[by]):
        raise ValueError(f"baseline='{baseline}' is not a {by} of the sweep "
                         f"({', '.join(map(str, df[by].unique()))})")
    base = df[df[by] == baseline][[panel_key, x, "time_us"]].rename(columns={"time_us": "baseline_us"})
    out = df.merge(base, on=[panel_key, x], how="inner")
    out["speedup"] = out["baseline_us"] / out["time_us"]
    return out


def _wide(values):
    values = [float(v) for v in values if v and not math.isnan(float(v))]
    return bool(values) and min(values) > 0 and max(values) / min(values) >= 8


def _save(fig, path):
    if path is not None:
        fig.savefig(os.fspath(path), dpi=120)
