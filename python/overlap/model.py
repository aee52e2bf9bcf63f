"""The model from Python: predict, compare, sweep and trace call the C++ simulator (sim/api.hpp)
with the command line's names and syntax; nothing here recomputes what the model computed."""
import json
import os
import tempfile

from . import _core
from .profiles import HwArgument


def _shape_text(shape):
    """'B=4,T=4096' as given, or built from a dict {"B": 4, "T": 4096} (the C++ parser then
    checks each value, so a bad one gets its message)."""
    if isinstance(shape, dict):
        return ",".join(f"{k}={v}" for k, v in shape.items())
    if isinstance(shape, str):
        return shape
    raise TypeError(f"shape={shape!r}: expected text like 'B=4,T=4096' or a dict of keys")


def _name(value, what):
    """A workload or variant name; anything else is a TypeError naming the argument."""
    if not isinstance(value, str):
        raise TypeError(f"{what}={value!r}: expected a name (see overlap.workloads() and overlap.variants())")
    return value


def _names_text(names, what):
    """'all', 'a,b' or a list of names -> the comma text the C++ takes."""
    if isinstance(names, str):
        return names
    if isinstance(names, (list, tuple)) and all(isinstance(n, str) for n in names):
        return ",".join(names)
    raise TypeError(f"{what}={names!r}: expected 'all', a comma list or a list of names")


def parse_shape_text(text):
    """'B=4,T=63' -> {"B": 4, "T": 63} (the canonical text the model returns)."""
    return {k: int(v) for k, v in (item.split("=") for item in text.split(",") if item)}


class Prediction:
    """One variant on one GPU: `time_us`, `bottleneck`, `busy` (unit -> busy fraction, GPU
    average), `busy_active_sms`, `hbm_bytes`, `flops`, `tensor_flops`, `achieved_GBps`,
    `achieved_TFLOPs`, `load_hidden_fraction`, `sm_fill`, `explanation`, `kernels` (one dict
    per launch). `str()` is the command line's table; `to_dict()` its JSON."""

    def __init__(self, data):
        data = dict(data)
        self._text = data.pop("text", None)
        self._data = data
        self.workload = data["workload"]
        self.variant = data["variant"]
        self.hw = data["hw"]
        self.shape = data["shape"]
        self.shape_keys = parse_shape_text(self.shape)
        self.time_us = data["time_us"]
        self.bottleneck = data["bottleneck"]
        self.busy = dict(data["units"])
        self.busy_active_sms = dict(data["units_active_sms"])
        self.hbm_bytes = data["hbm_bytes"]
        self.flops = data["flops"]
        self.tensor_flops = data["tensor_flops"]
        self.achieved_GBps = data["achieved_GBps"]
        self.achieved_TFLOPs = data["achieved_TFLOPs"]
        self.load_hidden_fraction = data["load_hidden_fraction"]
        self.sm_fill = data["sm_fill"]
        self.explanation = data["explanation"]
        self.kernels = data["kernels"]

    def to_dict(self):
        return json.loads(json.dumps(self._data))

    def __str__(self):
        return self._text if self._text is not None else repr(self)

    def __repr__(self):
        busiest = sorted(((v, k) for k, v in self.busy.items() if k != "launch"), reverse=True)[:3]
        busy = ", ".join(f"{k} {100 * v:.0f}%" for v, k in busiest)
        return (f"<Prediction {self.workload} {self.variant} on {self.hw} ({self.shape}): {self.time_us:.2f} us, "
                f"bound by {self.bottleneck}; busy {busy}; {self.hbm_bytes / 1e6:.1f} MB HBM, "
                f"{self.flops / 1e9:.3g} GFLOP, {len(self.kernels)} launch{'es' if len(self.kernels) != 1 else ''}>")


class Comparison:
    """Variant b against variant a: `speedup` = time(a) / time(b) (> 1: b is faster), `reason`
    (one line from the model), and both predictions `a` and `b`."""

    def __init__(self, data):
        self._text = data.get("text")
        self.a = Prediction(data["a"])
        self.b = Prediction(data["b"])
        self.speedup = data["speedup"]
        self.reason = data["reason"]

    def to_dict(self):
        return {"a": self.a.to_dict(), "b": self.b.to_dict(), "speedup": self.speedup, "reason": self.reason}

    def __str__(self):
        return self._text or repr(self)

    def __repr__(self):
        return (f"<Comparison {self.a.workload} on {self.a.hw} ({self.a.shape}): {self.b.variant} is "
                f"{self.speedup:.2f}x {self.a.variant}; {self.reason}>")


def workloads():
    """['gla', 'linrnn', 'projchain', 'dualgemm']"""
    return list(_core.workload_names())


def variants(workload=None):
    """The modelled variants: a list of dicts (workload, name, description, aliases)."""
    return json.loads(_core.variants_json(workload or ""))


_variant_list = variants  # sweep()'s parameter `variants` hides the function there


def reference_shape(workload):
    """The reference shape SPEC names for the workload, as shape text."""
    return _core.reference_shape(workload)


def predict(workload, variant, shape="", hw="H100"):
    """Predicts one variant on one hardware profile (a name, a profile file or a Profile).
    Shape keys left out take the workload's defaults. A variant that cannot run the shape is
    an OverlapError saying why."""
    hw_arg = HwArgument(hw, single=True)
    return Prediction(json.loads(_core.predict_json(_name(workload, "workload"), _name(variant, "variant"),
                                                    _shape_text(shape), hw_arg.text)))


def compare(workload, a, b, shape="", hw="H100"):
    """The predicted speedup of variant b over variant a on one GPU."""
    hw_arg = HwArgument(hw, single=True)
    return Comparison(json.loads(_core.compare_json(_name(workload, "workload"), _name(a, "a"), _name(b, "b"),
                                                    _shape_text(shape), hw_arg.text)))


class Tuning:
    """Every variant of a workload at one shape, ranked by predicted time: `pick` (the fastest
    variant's name, None when none can run), `ranked` (dicts with variant, time_us and
    bottleneck, or cannot_run: the reason), `str()` the command line's table."""

    def __init__(self, data):
        data = dict(data)
        self._text = data.pop("text", None)
        self._data = data
        self.workload, self.hw, self.shape = data["workload"], data["hw"], data["shape"]
        self.pick = data["pick"]
        self.ranked = [dict(r) for r in data["ranked"]]

    def to_dict(self):
        return json.loads(json.dumps(self._data))

    def __str__(self):
        return self._text

    def __repr__(self):
        return f"<Tuning {self.workload} on {self.hw} at {self.shape}: pick {self.pick}>"


def tune(workload, shape="", hw="H100"):
    """`overlap tune`: every variant of `workload` predicted at `shape` on one GPU, fastest first."""
    hw_arg = HwArgument(hw, single=True)
    return Tuning(json.loads(_core.tune_json(_name(workload, "workload"), _shape_text(shape), hw_arg.text)))


def trace(workload, variant, shape="", hw="H100", path=None):
    """The Chrome trace-event timeline (opens in Perfetto) of one SM for this prediction, as a
    dict; also written to `path` when given. Returns (trace, Prediction)."""
    hw_arg = HwArgument(hw, single=True)
    fd, temp = tempfile.mkstemp(prefix="overlap-trace-", suffix=".json")
    os.close(fd)
    try:
        p = Prediction(json.loads(_core.predict_json(_name(workload, "workload"), _name(variant, "variant"),
                                                     _shape_text(shape), hw_arg.text, temp)))
        with open(temp) as f:
            text = f.read()
    finally:
        os.unlink(temp)
    if path is not None:
        with open(path, "w") as f:
            f.write(text)
    return json.loads(text), p


def sweep(workload, variants="all", shape="", sweep=(), hw="H100"):
    """Predicts every combination of GPU x variant x swept shape (in parallel, in C++) and
    returns a pandas DataFrame, one row per prediction: hw, workload, variant, shape, one
    integer column per shape key, time_us, bottleneck, busy_<unit> columns, hbm_bytes, flops,
    achieved_GBps, achieved_TFLOPs, load_hidden_fraction, sm_fill, launches, and error (the
    reason a variant cannot run that shape, with time_us NaN; missing, df["error"].isna(), where
    it was predicted).

    variants and hw: "all", a comma list or a list; sweep: the command line's syntax,
    "T=1024:16384:x2" (geometric), "T=512:4096:+512" (arithmetic) or "T=512/1024/4096", or a
    list of them (a cartesian product over the base shape)."""
    import pandas as pd  # only sweeps need pandas

    axes = [sweep] if isinstance(sweep, str) else list(sweep) if isinstance(sweep, (list, tuple)) else None
    if axes is None or not all(isinstance(a, str) for a in axes):
        raise TypeError(f"sweep={sweep!r}: expected text like 'T=1024:16384:x2' or a list of them")
    hw_arg = HwArgument(hw)
    rows = json.loads(_core.sweep_json(_name(workload, "workload"), _names_text(variants, "variants"),
                                       _shape_text(shape), axes, hw_arg.text))
    # A row that cannot run names its profile and variant as given (a file, an alias): give it
    # the names the predicted rows carry, so that grouping by hw or variant keeps them together.
    refused_on = {r["hw"] for r in rows if "error" in r}
    hw_names = {hw: json.loads(_core.profile_json(hw))["name"] for hw in refused_on}
    variant_names = {alias: v["name"] for v in _variant_list(workload) for alias in v["aliases"]}
    df = pd.DataFrame.from_records([_sweep_record(workload, r, hw_names, variant_names) for r in rows])
    keys = list(parse_shape_text(df["shape"].iloc[0])) if len(df) else []
    first = ["hw", "workload", "variant", "shape"] + keys + ["time_us"]
    return df[first + [c for c in df.columns if c not in first]]


def _sweep_record(workload, row, hw_names, variant_names):
    if "error" in row:
        rec = {"hw": hw_names[row["hw"]], "workload": workload,
               "variant": variant_names.get(row["variant"], row["variant"]),
               "shape": _core.canonical_shape(workload, row["shape"]), "time_us": float("nan"), "error": row["error"]}
    else:
        p = Prediction(row)
        rec = {"hw": p.hw, "workload": p.workload, "variant": p.variant, "shape": p.shape, "time_us": p.time_us,
               "bottleneck": p.bottleneck, "hbm_bytes": p.hbm_bytes, "flops": p.flops,
               "achieved_GBps": p.achieved_GBps, "achieved_TFLOPs": p.achieved_TFLOPs,
               "load_hidden_fraction": p.load_hidden_fraction, "sm_fill": p.sm_fill, "launches": len(p.kernels),
               "error": None}
        rec.update({f"busy_{unit}": v for unit, v in p.busy.items()})
    rec.update(parse_shape_text(rec["shape"]))
    return rec
