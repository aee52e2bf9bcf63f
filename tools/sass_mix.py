#!/usr/bin/env python3
"""Counts a kernel's SASS instructions by source region: the instruction mix the model charges.

    python3 tools/sass_mix.py --cubin K.cubin --source cuda/gla/gla_pingpong_fused.cuh \
        [--kernel REGEX] [--json OUT.json] [--cpp OUT.hpp --cpp-name NAME]

`--source` may be given more than once (a kernel whose regions lie in its .cu file and in a header
it includes); a function's anonymous-namespace path hash is left out of its name, so that a table
written in one checkout matches a compile in another.

Regions are marked in the kernel's source with comments: a line containing `sass:NAME {` opens
region NAME, a line containing `} sass:NAME` closes it, `sass:NAME {}` marks one line (a region
may have several spans; one line may close one region and open another). `nvdisasm -gi` gives every instruction its chain of
inlined source frames; the instruction belongs to the innermost marked region that contains the
first frame (innermost first) lying in any region. Instructions in no region are counted under
`(other)`. A call site marked `sass:@CONTEXT` (a function or lambda called from more than one
place, compiled once per call) suffixes the regions of the code inlined there: `NAME@CONTEXT`. The code inside a region that sits in a loop body runs once per iteration: the
counts are per chunk for the per-chunk regions. Only the hot path is counted: the out-of-line
blocks past a function's last unconditional EXIT (mbarrier retry loops, diverged-warp fallbacks)
are left out, and so is what ptxas hoists out of a region's loop: where most of a region's
instructions lie in one loop (a label and the backward branch to it), only those count (its
loop-invariant address arithmetic runs once per CTA; Nsight Compute's executed counts per chunk
agree within 20% for pingpong_fused's regions this way, where the whole region counted up to 1.7x).

A region whose name ends in `.loop` marks a loop whose trip count is a run-time value (ptxas
unrolls it and adds remainder copies that run only for the last few trips): it is counted over
the longest loop body inside it, the instructions from a label to the branch back to it, so its
counts and cycles are per pass of that unrolled body (the model divides by the work one pass
does, e.g. its fp32 count, and multiplies by the trips).
A region whose name ends in `.loops` marks code that holds loops with a compile-time trip count
which ptxas keeps rolled at some template arguments and unrolls at others (an unrolled outer
loop around `#pragma unroll N` inner ones): where it finds loops, every loop body in the region
counts once (the passes of all of them, which share one trip count; the code between them is
left out), and where it finds none, the whole region counts (the model derives the trips from
the work one pass does, which then gives 1).

Classes (per warp, static counts): mufu, hgmma (+ hgmma_flops from each instruction's shape),
hmma (+ hmma_flops), lds_bytes / sts_bytes (per warp: 32 lanes x access width; ldmatrix /
stmatrix by their matrix count), fp32 (FADD/FMUL/FFMA/...), alu (integer, conversion, select,
move: the other FMA/ALU-pipe work), uniform (U* datapath), sync (BAR, SYNCS, fences, warpgroup
arrive/wait), tma (bulk tensor copies), control (branches), other; `issue` is every
instruction but NOP; `cycles` / `cycles_loaded` the in-order issue time of the region's role
(tools/sass_timing.py, from each instruction's control bits: `nvdisasm -hex` prints them as the
top 23 bits of its second 64-bit word) with the profile's latencies / with shared loads as slow as beside a
wgmma stream (lds_latency_beside_wgmma_cycles).

A source line `sass-beside: NAME=TIMED/OTHER/...` (or `--beside NAME=TIMED/OTHER/...`) adds rows NAME and NAME.alone for code that shares its schedulers
with other roles: TIMED and each OTHER are regions joined by `+` (a role's code for one chunk, in
address order). Both rows count TIMED's instructions. NAME's cycles are the TIMED role's
steady-state time per chunk with its warps-per-scheduler warps on a scheduler beside one warp of
each OTHER, every warp running its chunk's code once a round (sass_timing.SchedulerShare);
NAME.alone's the same without the OTHERs. Their ratio is how much the other roles' issue slots
and SFU use stretch the role's chain where they collide with it.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sass_timing  # noqa: E402

ONE_LINE = re.compile(r"sass:([\w.]+)\s*\{\}")
OPEN = re.compile(r"sass:([\w.]+)\s*\{(?!\})")
CLOSE = re.compile(r"\}\s*sass:([\w.]+)")
CONTEXT = re.compile(r"sass:@(\w+)")
FRAME = re.compile(r'"([^"]+)", line (\d+)')
LABEL = re.compile(r"^\s*(\.L\w+):")
BRANCH_TARGET = re.compile(r"`\((\.L\w+)\)")
INSTR = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Za-z0-9_.]*)(.*?);")
FUNC = re.compile(r"^\.text\.(\S+):")
CONTROL_WORD = re.compile(r"^\s*/\* (0x[0-9a-f]{16}) \*/\s*$")
PREDICATED = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+@")

FP32 = {"FADD", "FMUL", "FFMA", "FMNMX", "FSETP", "FSEL", "FCHK", "FRND", "FSWZADD", "FMNMX3"}
CONTROL = {"BRA", "BRX", "BRXU", "JMP", "JMX", "CALL", "RET", "EXIT", "BSSY", "BSYNC", "BREAK", "YIELD", "KILL",
           "WARPSYNC", "ACQBULK", "ELECT", "NANOSLEEP", "BPT"}
SYNC_PREFIX = ("BAR", "SYNCS", "MEMBAR", "FENCE", "WARPGROUP", "DEPBAR", "CCTL", "ERRBAR", "USETMAXREG")
TMA_PREFIX = ("UTMALDG", "UTMASTG", "UTMAPF", "UBLKCP", "UTMACCTL", "UTMACMDFLUSH", "UBLKPF")
MEM_OTHER = ("LDG", "STG", "LDL", "STL", "LD", "ST", "ATOM", "RED", "LDGSTS", "LDC", "ULDC", "S2R", "S2UR", "CS2R")
CLASSES = ["issue", "mufu", "hgmma", "hgmma_flops", "hmma", "hmma_flops", "lds_bytes", "sts_bytes", "fp32", "alu",
           "uniform", "sync", "tma", "control", "other", "cycles", "cycles_loaded"]


def read_regions(source):
    """{name: [(first_line, last_line), ...]} from the source's markers (1-based, inclusive), and
    under the key None, {line: context} for the marked call sites."""
    regions, open_at, contexts = {}, {}, {}
    with open(source) as f:
        for number, line in enumerate(f, 1):
            for name in CONTEXT.findall(line):
                contexts[number] = name
            for name in ONE_LINE.findall(line):
                regions.setdefault(name, []).append((number, number))
            for name in CLOSE.findall(line):
                if name not in open_at:
                    sys.exit(f"sass_mix: {source}:{number}: region '{name}' closed but not open")
                regions.setdefault(name, []).append((open_at.pop(name), number))
            for name in OPEN.findall(line):
                if name in open_at:
                    sys.exit(f"sass_mix: {source}:{number}: region '{name}' opened twice")
                open_at[name] = number
    if open_at:
        sys.exit(f"sass_mix: {source}: region(s) never closed: {', '.join(sorted(open_at))}")
    if not regions:
        sys.exit(f"sass_mix: {source}: no `sass:NAME {{` markers")
    regions[None] = contexts
    return regions


# An anonymous namespace mangles with a hash of the source's path (`_GLOBAL__N__36222aba_...`):
# left out, so that a table written in one checkout matches a kernel compiled in another.
ANON_HASH = re.compile(r"_GLOBAL__N__[0-9a-f]{8}_")


def stable_name(mangled):
    return ANON_HASH.sub("_GLOBAL__N__", mangled)


def sources_of(source):
    """The kernel's marked source files: one path, or a list (a kernel whose regions lie in its
    .cu file and in a header it includes)."""
    return [source] if isinstance(source, str) else list(source)


def read_all_regions(source):
    """{file name: read_regions(path)} for each of the kernel's marked sources."""
    return {os.path.basename(path): read_regions(path) for path in sources_of(source)}


def region_of(frames, regions_by_file):
    found, context = None, ""
    for file, line in frames:
        regions = regions_by_file.get(os.path.basename(file))
        if regions is None:
            continue
        contexts = regions[None]
        if found is None:
            best = None
            for name, spans in regions.items():
                for first, last in spans if name is not None else ():
                    if first <= line <= last and (best is None or last - first < best[0]):
                        best = (last - first, name)
            found = best[1] if best else None
        if line in contexts:
            context = "@" + contexts[line]
    return found + context if found else "(other)"


def mma_flops(opcode, operands):
    m = re.search(r"(\d+)x(\d+)x(\d+)", opcode)
    if m:
        return 2 * int(m.group(1)) * int(m.group(2)) * int(m.group(3))
    if opcode.startswith("HMMA.16816"):
        return 2 * 16 * 8 * 16
    if opcode.startswith("HMMA.1688"):
        return 2 * 16 * 8 * 8
    return 0


def classify(opcode, operands, counts):
    base = opcode.split(".")[0]
    if base == "NOP":
        return
    counts["issue"] += 1
    if base == "MUFU":
        counts["mufu"] += 1
    elif base == "HGMMA":
        counts["hgmma"] += 1
        counts["hgmma_flops"] += mma_flops(opcode, operands)
    elif base == "HMMA":
        counts["hmma"] += 1
        counts["hmma_flops"] += mma_flops(opcode, operands)
    elif base in ("LDS", "LDSM"):
        counts["lds_bytes"] += sass_timing.access_bytes(opcode)
    elif base in ("STS", "STSM"):
        counts["sts_bytes"] += sass_timing.access_bytes(opcode)
    elif base.startswith(TMA_PREFIX):
        counts["tma"] += 1
    elif base.startswith(SYNC_PREFIX):
        counts["sync"] += 1
    elif base in CONTROL:
        counts["control"] += 1
    elif base in FP32:
        counts["fp32"] += 1
    elif base in MEM_OTHER:
        counts["other"] += 1
    elif base.startswith("U"):
        counts["uniform"] += 1
    else:
        counts["alu"] += 1


def find_tool(name, given):
    path = given or shutil.which(name)
    if not path:
        sys.exit(f"sass_mix: {name} not found (PATH, or --{name}); tools/install_deps.sh installs it")
    return path


def disassemble(cubin, source, kernel_filter, nvdisasm, hot_only=True, labels=None):
    """{function: [(offset, opcode, operands, region), ...]} in address order, for every function
    whose mangled name matches kernel_filter: its hot path (up to its last unconditional EXIT),
    or with hot_only=False every instruction. With `labels` (a dict), also {function: {label:
    index of the instruction it precedes}}."""
    regions_by_file = read_all_regions(source)
    text = subprocess.run([nvdisasm, "-gi", "-hex", cubin], check=True, capture_output=True, text=True).stdout
    result, hot_end, func, frames, pending = {}, {}, None, [], True
    for line in text.splitlines():
        m = FUNC.match(line)
        if m:
            name = stable_name(m.group(1))
            func = name if re.search(kernel_filter, name) else None
            frames = []
            if func:
                result[func] = []
            continue
        if func is None:
            continue
        m = LABEL.match(line)
        if m and labels is not None:
            labels.setdefault(func, {})[m.group(1)] = len(result[func])
            continue
        if "//##" in line:
            # An instruction's inlined chain comes as consecutive annotations, innermost first,
            # each naming one frame (and its call site): their first frames, in order.
            frame = FRAME.findall(line)[0]
            frames = ([] if pending else frames) + [(frame[0], int(frame[1]))]
            pending = False
            continue
        m = CONTROL_WORD.match(line)
        if m and result[func] and result[func][-1][4] is None:
            # The instruction's second 64-bit word: its scheduling control bits (sass_timing.control).
            result[func][-1] = result[func][-1][:4] + (int(m.group(1), 16) >> 41,)
            continue
        m = INSTR.match(line)
        if not m:
            continue
        pending = True
        offset = int(re.match(r"^\s*/\*([0-9a-f]+)\*/", line).group(1), 16)
        result[func].append((offset, m.group(1), m.group(2), region_of(frames, regions_by_file), None))
        if m.group(1) == "EXIT" and not PREDICATED.match(line):
            hot_end[func] = len(result[func])
    # Past a function's last unconditional EXIT the compiler keeps its out-of-line blocks: the
    # retry loops of mbarrier waits (run only while a wait waits, which the model charges as a
    # wait) and the fallbacks of warp-collective code for a diverged warp (BRA.DIV; never run,
    # since our roles' branches are warp-uniform). Counting them would charge work that does not
    # run once per chunk.
    if not hot_only:
        return result
    return {func: instrs[:hot_end.get(func, len(instrs))] for func, instrs in result.items()}


def attribute(cubin, source, kernel_filter, nvdisasm):
    """{function: [(offset, opcode, region), ...]} in address order, every instruction (stall
    samples land in the out-of-line blocks too)."""
    return {func: [(offset, opcode, region) for offset, opcode, _, region, _ in instrs]
            for func, instrs in disassemble(cubin, source, kernel_filter, nvdisasm, hot_only=False).items()}


def loop_bodies(instrs, labels):
    """{region: [(first, last), ...]}: for each `.loop` region, the longest label-to-backward-branch
    span of instruction indices that lies wholly inside it; for each `.loops` region, every span
    nine tenths inside it and not inside another."""
    spans = {}
    for j, (_, opcode, operands, region, _) in enumerate(instrs):
        target = BRANCH_TARGET.search(operands)
        kind = region.split("@")[0].rsplit(".", 1)[-1]
        if not opcode.startswith("BRA") or not target or kind not in ("loop", "loops"):
            continue
        i = labels.get(target.group(1))
        if i is None or i > j:
            continue
        # A `.loop` body lies wholly in its region; ptxas may schedule a few instructions of the
        # code around a `.loops` body into it (counted where they belong).
        outside = sum(instrs[k][3] != region for k in range(i, j + 1))
        if outside > (0 if kind == "loop" else 0.1 * (j + 1 - i)):
            continue
        spans.setdefault(region, []).append((i, j))
    bodies = {}
    for region, found in spans.items():
        if region.split("@")[0].endswith(".loop"):
            bodies[region] = [max(found, key=lambda s: s[1] - s[0])]
        else:
            bodies[region] = [s for s in found if not any(o != s and o[0] <= s[0] and s[1] <= o[1] for o in found)]
    return bodies


BESIDE = re.compile(r"sass-beside:\s*(\S+)")


HOT = re.compile(r"sass-hot:\s*(\S+)")


def read_hot(source):
    """The regions a kernel source declares hot (`sass-hot: A+B+...`: the code a scheduler's warps
    run each chunk), or None where it declares none (every marked region)."""
    found = [m.group(1) for path in sources_of(source) for m in HOT.finditer(open(path).read())]
    return {r for spec in found for r in spec.split("+") if r} if found else None


def read_beside(source):
    """The `sass-beside:` specs a kernel source declares, parsed (parse_beside)."""
    return [parse_beside(m.group(1)) for path in sources_of(source) for m in BESIDE.finditer(open(path).read())]


def parse_beside(spec):
    """NAME=A+B/C/D+E -> (NAME, [[A, B], [C], [D, E]])."""
    name, _, groups = spec.partition("=")
    parts = [[r for r in g.split("+") if r] for g in groups.split("/")] if groups else []
    if not name or len(parts) < 2 or not all(parts):
        raise ValueError(f"--beside wants NAME=TIMED/OTHER[/OTHER...] (regions joined by +), got '{spec}'")
    return name, parts


def per_pass(instrs, labels):
    """{region: set of instruction indices that run once per pass of the loop the region lives in}
    for each region most of whose instructions lie in one loop (a label and the backward branch to
    it) but not all: ptxas hoists a region's loop-invariant work (e.g. address arithmetic) out of
    the loop, and debug line info still gives it to the region, though it runs once per CTA."""
    spans = []
    for j, (_, opcode, operands, _, _) in enumerate(instrs):
        target = BRANCH_TARGET.search(operands)
        if opcode.startswith("BRA") and target and labels.get(target.group(1), j + 1) <= j:
            spans.append((labels[target.group(1)], j))
    members = {}
    for k, (_, _, _, region, _) in enumerate(instrs):
        members.setdefault(region, []).append(k)
    out = {}
    for region, idx in members.items():
        if region == "(other)" or region.split("@")[0].rsplit(".", 1)[-1] in ("loop", "loops"):
            continue
        inside = [(sum(i <= k <= j for k in idx), -(j - i), (i, j)) for i, j in spans]
        if not inside:
            continue
        n, _, (i, j) = max(inside)
        if 2 * n >= len(idx) and n < len(idx):
            out[region] = {k for k in idx if i <= k <= j}
    return out


def count(cubin, source, kernel_filter, nvdisasm, latencies=None, warps_per_scheduler=None, beside=(), hot=None):
    """Counts per function and region; with latencies, the `cycles` of each region's role (the
    region name's first part) with its warps_per_scheduler[role] warps (default 1) per scheduler,
    and `cycles_loaded`, the same with shared loads as slow as beside a wgmma stream; and a row
    for each (name, groups) of `beside` (parse_beside). `hot`: the regions whose code a
    scheduler's warps run each chunk (default: every marked region); where that code outgrows the
    instruction cache, every region's code streams in at the profile's fetch-limited rate
    (sass_timing.fetch_interval)."""
    warps_per_scheduler = warps_per_scheduler or {}
    result, labels = {}, {}
    made, skipped = set(), {}  # beside rows made / left out, by name
    for func, instrs in disassemble(cubin, source, kernel_filter, nvdisasm, labels=labels).items():
        result[func], clocks = {}, {}
        bodies = loop_bodies(instrs, labels.get(func, {}))
        loops = {r for _, _, _, r, _ in instrs if r.split("@")[0].endswith(".loop")}
        if loops - set(bodies):
            sys.exit(f"sass_mix: {func}: no loop body found in region(s) {', '.join(sorted(loops - set(bodies)))}")
        counted = set()  # indices of the counted instructions, for the beside rows
        in_loop = per_pass(instrs, labels.get(func, {}))
        for index, (_, opcode, operands, region, _) in enumerate(instrs):
            if region in bodies and not any(first <= index <= last for first, last in bodies[region]):
                continue  # a .loop(s) region counts its unrolled bodies only
            if region in in_loop and index not in in_loop[region]:
                continue  # hoisted out of the region's loop: once per CTA, not per pass
            counted.add(index)
        code_KiB = 16 * sum(1 for i in counted if instrs[i][3] != "(other)" and (hot is None or instrs[i][3] in hot)
                            and instrs[i][1] != "NOP") / 1024
        lat_f = dict(latencies, fetch_interval=sass_timing.fetch_interval(latencies, code_KiB)) if latencies else None
        for index in sorted(counted):
            _, opcode, operands, region, ctrl = instrs[index]
            counts = result[func].setdefault(region, dict.fromkeys(CLASSES, 0))
            classify(opcode, operands, counts)
            if latencies:
                warps = warps_per_scheduler.get(region.split(".")[0], 1)
                # A rolled loop's body, once fetched, runs its later passes from the nearest cache.
                lat_r = latencies if region in bodies else lat_f
                for field, lat in (("cycles", lat_r), ("cycles_loaded", sass_timing.loaded(lat_r))):
                    clock = clocks.setdefault((region, field), sass_timing.WarpClock(lat, warps))
                    clock.issue(opcode, operands, ctrl)
                    counts[field] = clock.cycles
        for name, groups in beside:
            missing = [r for g in groups for r in g if r not in result[func]]
            if missing:
                # A kernel template compiles some roles only at some arguments (a pass without
                # outputs): the row exists where all its regions do.
                skipped.setdefault(name, []).append(f"{func}: {', '.join(missing)}")
                continue
            made.add(name)
            in_group = lambda g: [(op, ops, c) for i, (_, op, ops, r, c) in enumerate(instrs) if r in g and i in counted]
            row = dict.fromkeys(CLASSES, 0)
            for r in groups[0]:
                for field in CLASSES:
                    row[field] += result[func][r][field]
            alone = dict(row)
            if latencies:
                timed, others = in_group(groups[0]), [in_group(g) for g in groups[1:]]
                warps = warps_per_scheduler.get(groups[0][0].split(".")[0], 1)
                for field, lat in (("cycles", lat_f), ("cycles_loaded", sass_timing.loaded(lat_f))):
                    row[field] = sass_timing.SchedulerShare(lat, timed, warps, others).cycles
                    alone[field] = sass_timing.SchedulerShare(lat, timed, warps).cycles
            result[func][name] = row
            result[func][name + ".alone"] = alone
    if not result:
        sys.exit(f"sass_mix: no function of {cubin} matches '{kernel_filter}'")
    for name, where in skipped.items():
        if name not in made:
            sys.exit(f"sass_mix: --beside {name}: no function has all its regions ({'; '.join(where)})")
    return result


def emit_cpp(mix, name, out, command):
    """A header with one table: (function, region, counts...), for the model."""
    rows = []
    for func in sorted(mix):
        for region in sorted(mix[func]):
            c = mix[func][region]
            rows.append("    {\"%s\", \"%s\", {%s}}," % (func, region, ", ".join(str(c[k]) for k in CLASSES)))
    fields = ", ".join(CLASSES)
    body = f"""#pragma once
// Generated by tools/sass_mix.py; do not edit. Regenerate with:
//   {command}
// Static SASS instruction counts per warp of each kernel instantiation, by marked source region
// (per chunk for the `.chunk`, `.fast` and `.slow` regions). Fields: {fields}.
#include "sim/sass_mix.hpp"

namespace overlap::sim::generated {{

inline constexpr SassRegionMix {name}[] = {{
{chr(10).join(rows)}
}};

}}  // namespace overlap::sim::generated
"""
    with open(out, "w") as f:
        f.write(body)


# The fields the models charge, and the drift each may show before the check fails: a relative
# tolerance, or a few instructions (a few warp-wide 16-byte accesses) for small regions.
CHECKED = {"issue": 4, "mufu": 4, "hgmma_flops": 0, "hmma_flops": 0, "lds_bytes": 4 * 512, "sts_bytes": 4 * 512,
           "cycles": 16, "cycles_loaded": 16}
ROW = re.compile(r'\{"([^"]+)", "([^"]+)", \{([-0-9., ]+)\}\}')


def read_table(header):
    """{function: {region: counts}} from a header emit_cpp wrote."""
    table = {}
    with open(header) as f:
        for func, region, numbers in ROW.findall(f.read()):
            table.setdefault(func, {})[region] = dict(zip(CLASSES, (float(x) for x in numbers.split(","))))
    if not table:
        sys.exit(f"sass_mix: no table rows in {header}")
    return table


def drift(fresh, committed, tolerance, scale=1.0):
    """The (function, region, field, committed, fresh) that differ by more than the tolerance."""
    out = []
    for func in sorted(set(fresh) | set(committed)):
        for region in sorted(set(fresh.get(func, {})) | set(committed.get(func, {}))):
            a, b = committed.get(func, {}).get(region), fresh.get(func, {}).get(region)
            if a is None or b is None:
                out.append((func, region, "(region)", "absent" if a is None else "present",
                            "absent" if b is None else "present"))
                continue
            for field, slack in CHECKED.items():
                ref, now = a[field] * scale, b[field]
                if abs(now - ref) > max(tolerance * max(abs(ref), abs(now)), slack):
                    out.append((func, region, field, ref, now))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cubin", required=True)
    ap.add_argument("--source", required=True, action="append",
                    help="the kernel source with sass:NAME region markers (repeat it for a header with regions too)")
    ap.add_argument("--kernel", default=".", help="regex on the mangled function names to count")
    ap.add_argument("--nvdisasm", default=None)
    ap.add_argument("--json", default=None, help="write {function: {region: counts}} here")
    ap.add_argument("--cpp", default=None, help="write a C++ header with the table for the model")
    ap.add_argument("--cpp-name", default="kSassMix")
    ap.add_argument("--command", default=None, help="the regeneration command quoted in the header")
    ap.add_argument("--profile", default=None,
                    help="hardware profile JSON whose latencies time each region (the cycles field)")
    ap.add_argument("--warps-per-scheduler", action="append", default=[], metavar="ROLE=N",
                    help="warps of a role (region prefix) sharing each scheduler, for the cycles field")
    ap.add_argument("--beside", action="append", default=[], metavar="NAME=TIMED/OTHER/...",
                    help="a row NAME: the TIMED regions' counts, timed beside one warp of each OTHER on its "
                    "schedulers (regions joined by +)")
    ap.add_argument("--check", default=None, metavar="HEADER",
                    help="compare with a committed table; exit 1 where a charged field drifts")
    ap.add_argument("--tolerance", type=float, default=0.10)
    ap.add_argument("--scale-committed", type=float, default=1.0,
                    help="multiply the committed counts first (a test shows a 20%% drift fails)")
    args = ap.parse_args()
    latencies = None
    if args.profile:
        with open(args.profile) as f:
            latencies = sass_timing.latencies_from_profile(json.load(f))
    warps = {}
    for item in args.warps_per_scheduler:
        role, _, n = item.partition("=")
        if not role or not n.isdigit() or int(n) < 1:
            sys.exit(f"sass_mix: --warps-per-scheduler wants ROLE=N with N >= 1, got '{item}'")
        warps[role] = int(n)
    try:
        beside = read_beside(args.source) + [parse_beside(spec) for spec in args.beside]
    except ValueError as e:
        sys.exit(f"sass_mix: {e}")
    mix = count(args.cubin, args.source, args.kernel, find_tool("nvdisasm", args.nvdisasm), latencies, warps, beside,
                read_hot(args.source))
    if args.check:
        bad = drift(mix, read_table(args.check), args.tolerance, args.scale_committed)
        rows = sum(len(r) for r in mix.values())
        if bad:
            print(f"sass_mix: {len(bad)} counts of {args.check} differ from the compiled kernel by more than "
                  f"{args.tolerance:.0%} (regenerate with tools/make_sass_mix.sh):")
            for func, region, field, ref, now in bad:
                print(f"  {func[-48:]} {region} {field}: committed {ref}, compiled {now}")
            sys.exit(1)
        print(f"sass_mix: {rows} region rows of {args.check} match the compiled kernel within {args.tolerance:.0%}")
        return
    if args.json:
        with open(args.json, "w") as f:
            json.dump(mix, f, indent=1, sort_keys=True)
    if args.cpp:
        emit_cpp(mix, args.cpp_name, args.cpp, args.command or " ".join(sys.argv))
    if not args.json and not args.cpp:
        for func, regions in sorted(mix.items()):
            print(func)
            for region, c in sorted(regions.items()):
                shown = " ".join(f"{k}={v}" for k, v in c.items() if v)
                print(f"  {region:16s} {shown}")


if __name__ == "__main__":
    main()
