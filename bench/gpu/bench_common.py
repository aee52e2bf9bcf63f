"""What every GPU benchmark script shares: event timing with the L2 flushed before each call,
and the two hardware ceilings a floor is computed from (device-to-device copy bandwidth and a
large bf16 matmul's rate), measured in the same run as the kernels they judge.

    from bench_common import L2Flush, time_calls, copy_bandwidth, tensor_rate, rel_error
    from bench_common import time_rows, clock_line, add_pad_argument   # rows compared at the same clocks
"""
import ctypes
import datetime
import os
import statistics
import subprocess
import sys
import time

import torch


class L2Flush:
    """Called before every timed call: evicts the previous call's data from L2, so the timed call
    reads its inputs from HBM. Two ways:
    "read" (default): reads a buffer five times an H100's L2. L2 is left holding clean lines, which
        the timed call's misses replace without writing anything to HBM: the HBM traffic the
        call is timed with is its own, as in the floor it is compared with.
    "write": zeroes the buffer (Triton's do_bench does this). L2 is left holding up to its size in
        dirty lines, which the timed call's misses write back to HBM as they evict them: a call
        that reads R bytes moves up to R + 50 MB through HBM.
    Measured on the lent H100 (2026-11-26, same code, `bench_dualgemm.py --flush write|read`):
    dualgemm fp8 (256,4096,7168) tile128x64_stages6_ws 39.9 us after a write flush, 32.7 us after
    a read flush (Nsight Compute, which invalidates L2 itself: 34.8 us at its 1.41 GHz SM clock);
    torch's fp8 path 52.9 / 46.7 us. Kernels that read a few tens of MB lose most; the floors
    (a 1 GiB copy) hardly move."""

    MODES = ("read", "write")

    def __init__(self, mode="read", mib=256):
        if mode not in self.MODES:
            raise ValueError(f"L2 flush mode must be one of {self.MODES}, got {mode!r}")
        self.mode = mode
        self.buf = torch.ones(mib << 20, dtype=torch.uint8, device="cuda")
        self.words = self.buf.view(torch.int64)

    def __call__(self):
        if self.mode == "write":
            self.buf.zero_()
        else:
            self.words.sum()  # a reduction kernel: every byte read, nothing written but one word


# The GPU spin before each timed call's start event (time_interleaved's pad_us). Each turn (flush,
# spin, call) must keep the GPU busy longer than the host takes to enqueue it, so that the host
# runs ahead and no call waits on the GPU for its own enqueue. With 20 us it did not always: on a
# lent H100 (2026-11-28, `bench_dualgemm.py`), torch's fp8 path at fp8 (256,3072,4096), about
# 65 us of enqueue (tools/device/enqueue_probe.py) for 28 us of GPU work, timed 39.4 us median
# (min 27.9) in one run where others gave 30.3-31.7; with 200 us, 31.4 (min 28.6).
DEFAULT_PAD_US = 200.0


def add_pad_argument(parser):
    parser.add_argument("--pad-us", type=float, default=DEFAULT_PAD_US,
                        help="GPU spin before each timed call, so the host's enqueue stays outside the timed "
                             "window (0: none)")


def add_flush_argument(parser):
    parser.add_argument("--flush", choices=L2Flush.MODES, default="read",
                        help="how L2 is emptied before each timed call (bench_common.L2Flush)")


def time_calls(fn, n_sets, reps, warmup, flush):
    """(median, min, max) milliseconds of fn(i % n_sets), CUDA events around each call, L2
    flushed before each call. fn(i) rotates over n_sets input sets (never zeros)."""
    for i in range(warmup):
        fn(i % n_sets)
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        flush()
        starts[i].record()
        fn(i % n_sets)
        ends[i].record()
    torch.cuda.synchronize()
    times = [s.elapsed_time(e) for s, e in zip(starts, ends)]
    return statistics.median(times), min(times), max(times)


def time_interleaved(fns, n_sets, reps, warmup, flush, pad_us, block=5):
    """Per fn: (median ms of its warm calls, min, max, median ms of its first call in a block, median
    microseconds the host spent in it: its enqueue, and, once the host has run ahead of the GPU, the
    waits for room in the launch queue). The fns take turns in blocks of `block` calls
    (the first fn of each round rotates), the L2 flushed and CUDA events around each call, calls
    rotating over n_sets input sets.
    Why interleaved: timing the rows one after the other compared them at different clocks; under
    the H100's power cap (throttle reason "SW power cap") single clock samples taken during the rows
    of one run ranged from 1500 to 1920 MHz, and cuBLAS's wide GEMM timed on each input set in turn
    took 1450, then 1552, then 1648 us (median of 15 calls each, reference shape).
    Why blocks: a call right after another implementation's was slower than the same call repeated
    (epilogue_fused at N = 2048: 110-112 us after wide_gemm, 102-106 us after itself, L2 flushed
    both times; plausibly its instructions no longer cached), so one call per turn made a row's
    time depend on its neighbour in the list. The first call of each block is reported apart.
    pad_us: a GPU spin of that long after the flush and before the start event, so the GPU is still
    busy when the host has enqueued the call: the window between the events then holds the call's
    GPU work only, not the host's enqueue time."""
    pad_cycles = int(pad_us * 2000)  # GPU clock cycles at 2 GHz, about the H100's top SM clock
    for i in range(warmup):
        for fn in fns:
            fn(i % n_sets)
    torch.cuda.synchronize()
    rounds = max(1, reps // block)
    events = [[[(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(block)]
               for _ in fns] for _ in range(rounds)]
    host = [[] for _ in fns]
    for r in range(rounds):
        for j in range(len(fns)):
            k = (j + r) % len(fns)
            for b in range(block):
                flush()
                if pad_cycles:
                    torch.cuda._sleep(pad_cycles)
                events[r][k][b][0].record()
                t0 = time.perf_counter()
                fns[k]((r * block + b) % n_sets)
                host[k].append((time.perf_counter() - t0) * 1e6)
                events[r][k][b][1].record()
    torch.cuda.synchronize()
    out = []
    for k in range(len(fns)):
        t = [[events[r][k][b][0].elapsed_time(events[r][k][b][1]) for b in range(block)] for r in range(rounds)]
        warm = [x for per in t for x in per[1:]] or [per[0] for per in t]
        first = [per[0] for per in t]
        out.append((statistics.median(warm), min(warm), max(warm), statistics.median(first),
                    statistics.median(host[k])))
    return out


class ClockMonitor:
    """Samples the SM clock, power and active throttle reasons with nvidia-smi every 20 ms while
    a shape's rows are timed, so a slow run can be told apart from a slowed-down GPU."""

    QUERY = "clocks.sm,power.draw,clocks_throttle_reasons.active"

    def __enter__(self):
        try:
            self.proc = subprocess.Popen(["nvidia-smi", f"--query-gpu={self.QUERY}", "--format=csv,noheader,nounits",
                                          "-lms", "20", "-i", str(torch.cuda.current_device())],
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        except OSError:
            self.proc = None
        time.sleep(0.3)  # nvidia-smi's first sample
        return self

    def __exit__(self, *exc):
        self.summary = None
        if self.proc is None:
            return False
        self.proc.terminate()
        out, _ = self.proc.communicate()
        clocks, powers, reasons = [], [], set()
        for line in out.splitlines():
            parts = [p.strip() for p in line.split(",")]
            try:
                clocks.append(float(parts[0]))
                powers.append(float(parts[1]))
                reasons.add(parts[2])
            except (ValueError, IndexError):
                continue
        if clocks:
            self.summary = {"samples": len(clocks), "sm_clock_mhz_min": min(clocks),
                            "sm_clock_mhz_median": statistics.median(clocks), "sm_clock_mhz_max": max(clocks),
                            "power_w_max": max(powers), "throttle_reasons": sorted(reasons)}
        return False


def time_rows(timed, n_sets, reps, warmup, flush, pad_us):
    """Times the (row dict, fn) pairs of one shape interleaved (time_interleaved) while a
    ClockMonitor samples the GPU; fills each row's ms, min_ms, max_ms, first_call_ms and host_us,
    and returns the clock summary (None without nvidia-smi)."""
    with ClockMonitor() as mon:
        results = time_interleaved([fn for _, fn in timed], n_sets, reps, warmup, flush, pad_us)
    for (row, _), (med, lo, hi, first, host_us) in zip(timed, results):
        row.update(ms=med, min_ms=lo, max_ms=hi, first_call_ms=first, host_us=host_us)
    return mon.summary


def clock_line(summary):
    """One line for people: the SM clock, power and throttle reasons a ClockMonitor saw."""
    c = summary
    return (f"SM clock during the timed calls: {c['sm_clock_mhz_min']:.0f}-{c['sm_clock_mhz_max']:.0f} MHz "
            f"(median {c['sm_clock_mhz_median']:.0f}, {c['samples']} samples), power up to {c['power_w_max']:.0f} W, "
            f"throttle reasons {', '.join(c['throttle_reasons'])}")


def copy_bandwidth(flush):
    """Device-to-device copy bandwidth in bytes/s, counting bytes read plus written (1 GiB)."""
    n = 1 << 30
    src = torch.empty(n, dtype=torch.uint8, device="cuda").random_(0, 255)
    dst = torch.empty_like(src)
    ms, _, _ = time_calls(lambda i: dst.copy_(src), 1, 20, 5, flush)
    return 2 * n / (ms * 1e-3)


def tensor_rate(flush):
    """bf16 tensor-core rate in FLOP/s: an 8192^3 torch.matmul on random data (fp32 accumulation)."""
    n = 8192
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    ms, _, _ = time_calls(lambda i: torch.matmul(a, b), 1, 20, 5, flush)
    return 2 * n ** 3 / (ms * 1e-3)


def command_line():
    """This run's command, so that a report names no machine's directories: absolute paths
    inside the working directory made relative to it, those outside reduced to their file name."""
    def shown(a):
        if not os.path.isabs(a):
            return a
        rel = os.path.relpath(a)
        return os.path.basename(a) if rel.startswith("..") else rel
    return " ".join(shown(a) for a in sys.argv)


def start_report(flush_mode="read", **extra):
    """Measures this run's floors and opens its report: (L2Flush of `flush_mode`, copy bandwidth in bytes/s,
    tensor rate in FLOP/s, report dict with the GPU, date, versions, floors, command, `extra` and
    an empty "shapes" list). Prints the header line every benchmark's log starts with."""
    flush = L2Flush(flush_mode)
    bw = copy_bandwidth(flush)
    rate = tensor_rate(flush)
    props = torch.cuda.get_device_properties(0)
    report = {"gpu": props.name, "sms": props.multi_processor_count,
              "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "torch": torch.__version__, "cuda": torch.version.cuda, "copy_bandwidth_GBps": bw / 1e9,
              "tensor_TFLOPs": rate / 1e12, "l2_flush": flush_mode, "command": command_line(), **extra, "shapes": []}
    print(f"# {props.name}, copy bandwidth {bw / 1e9:.0f} GB/s (read+write), bf16 matmul {rate / 1e12:.0f} TFLOP/s, "
          f"L2 flushed by {flush_mode}",
          flush=True)
    return flush, bw, rate, report


def kernel_times(fn):
    """[(kernel name, device ms)] of one call of fn, after one warm call (torch profiler),
    longest first."""
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    kernels = [(e.key, e.device_time_total / 1e3) for e in prof.key_averages() if e.device_time_total > 0]
    return sorted(kernels, key=lambda x: -x[1])


def rel_error(out, ref):
    """Relative Frobenius error of out against ref, in float64."""
    out, ref = out.double(), ref.double()
    return (torch.linalg.vector_norm(out - ref) / torch.linalg.vector_norm(ref).clamp_min(1e-30)).item()


def call_capi(fn, *args):
    """Calls a C entry point whose last two arguments are an error buffer and its length. Status
    functions (restype c_int) fail on non-zero, size functions (c_longlong) on a negative value;
    either way RuntimeError carries the library's message."""
    err = ctypes.create_string_buffer(1024)
    rc = fn(*args, err, len(err))
    failed = rc < 0 if fn.restype is ctypes.c_longlong else rc != 0
    if failed:
        raise RuntimeError(err.value.decode() or f"C entry point returned {rc}")
    return rc
