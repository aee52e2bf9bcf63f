#!/usr/bin/env python3
"""Nsight Compute's --csv metrics of a validate pass, one line per call or per kernel.

    tools/ncu_kernel_lines.py NCU_CSV [--units]

Without --units: one line per call, its kernels in launch order with their durations (µs); a
call ends at its L2 flush (`read_all`). With --units: one line per kernel launch, its duration
and every unit's busy percentage, busiest first (the flush kernels left out).
"""
import argparse
import csv

UNITS = {  # metric name prefix -> the unit's name in the bottleneck table
    "dram__throughput": "DRAM",
    "lts__t_sectors": "L2",
    "l1tex__throughput": "L1/TEX",
    "sm__throughput": "SM",
    "sm__inst_issued": "issue",
    # On Hopper the hmma pipe's cycles count wgmma as well (a wgmma kernel reads 90% here); the
    # gmma metric, where this Nsight Compute has it, counts wgmma alone.
    "sm__pipe_tensor_op_hmma": "tensor",
    "sm__pipe_tensor_op_gmma": "tensor (wgmma)",
    "sm__pipe_fma": "FMA",
    "sm__pipe_alu": "ALU",
    "sm__pipe_xu": "XU",
    "sm__pipe_shared": "shared pipe",
}


def short_name(kernel):
    return kernel.split("(")[0].replace("void ", "").split("::")[-1][:48]


def launches(path):
    """[(kernel name, {metric: value})] in launch order."""
    rows = [r for r in csv.reader(open(path)) if len(r) > 10]
    head, rows = rows[0], rows[1:]
    ident, name = head.index("ID"), head.index("Kernel Name")
    metric, value = head.index("Metric Name"), head.index("Metric Value")
    out, index = [], {}
    for r in rows:
        if r[ident] not in index:
            index[r[ident]] = len(out)
            out.append((short_name(r[name]), {}))
        out[index[r[ident]]][1][r[metric]] = float(r[value].replace(",", ""))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--units", action="store_true")
    args = ap.parse_args()
    line = []
    for kernel, metrics in launches(args.csv):
        us = metrics.get("gpu__time_duration.sum", 0) / 1e3
        if not args.units:
            line.append(f"{kernel} {us:.1f}")
            if "read_all" in kernel:
                print(" | ".join(line))
                line = []
            continue
        if "read_all" in kernel:
            continue
        busy = sorted(((v, unit) for m, v in metrics.items() for prefix, unit in UNITS.items() if m.startswith(prefix)),
                      reverse=True)
        print(f"{kernel} {us:.1f} us: " + ", ".join(f"{unit} {v:.0f}%" for v, unit in busy))
    if line:
        print(" | ".join(line))


if __name__ == "__main__":
    main()
