"""overlap from Python: the load/compute overlap model, the CPU references and the test vectors.

    import overlap
    p = overlap.predict("gla", "pingpong_fused", "B=8,T=4096,H=16,K=128,V=128", hw="H100")
    p.time_us, p.bottleneck, p.busy["tensor"]
    df = overlap.sweep("gla", variants="all", shape="B=4,H=32,K=64,V=64", sweep="T=1024:16384:x2")
    overlap.plot.sweep_plot(df, x="T", path="sweep.png")

Importing this package loads the C++ model only: no CUDA library, no torch, no pandas, no
matplotlib (sweeps import pandas, overlap.plot imports matplotlib).
"""
from ._core import OverlapError
from .model import (Comparison, Prediction, Tuning, compare, predict, reference_shape, sweep, trace, tune,
                    variants, workloads)
from .profiles import Profile, load_profile, profiles
from . import vectors

__all__ = ["OverlapError", "Prediction", "Comparison", "Tuning", "predict", "compare", "sweep", "tune", "trace", "variants",
           "workloads", "reference_shape", "Profile", "profiles", "load_profile", "vectors", "plot"]


def __getattr__(name):
    # `overlap.plot` needs matplotlib: imported on first use only.
    if name == "plot":
        import importlib
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'overlap' has no attribute '{name}'")
