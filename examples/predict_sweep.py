"""Notebook-style: predict gla's variants over sequence length on two GPUs, print the table, and
plot time and speedup. CPU only (the model), no GPU needed:

    python examples/predict_sweep.py [OUT_DIR]        # writes sweep_time.png, sweep_speedup.png
"""
import os
import sys

import overlap

out = sys.argv[1] if len(sys.argv) > 1 else "."
os.makedirs(out, exist_ok=True)

# %% One row per (GPU, variant, T): the command line's sweep syntax, a pandas DataFrame back.
df = overlap.sweep("gla", variants="all", shape="B=4,H=32,K=64,V=64", sweep="T=1024:16384:x2",
                   hw=["H100", "H200"])
print(df[["hw", "variant", "T", "time_us", "bottleneck"]].to_string(index=False))

# %% Time against T, one panel per GPU; then each variant's speedup over sequential_fused.
overlap.plot.sweep_plot(df, x="T", path=os.path.join(out, "sweep_time.png"))
overlap.plot.sweep_plot(df, x="T", y="speedup", baseline="sequential_fused",
                        path=os.path.join(out, "sweep_speedup.png"))

# %% Why the fastest wins at the longest T, on the H100.
# (df["T"], not df.T: a DataFrame's .T is its transpose.)
longest = df[(df["hw"] == "H100") & (df["T"] == df["T"].max())]
best = longest.sort_values("time_us").iloc[0]
T = int(best["T"])
print(f"\nfastest at T={T} on H100: {best['variant']}, {best['time_us']:.1f} us")
print(overlap.compare("gla", "sequential_fused", best["variant"], f"B=4,T={T},H=32,K=64,V=64").reason)
