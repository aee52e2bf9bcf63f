"""What every GPU benchmark script shares: event timing with the L2 flushed before each call,
and the two hardware ceilings a floor is computed from (device-to-device copy bandwidth and a
large bf16 matmul's rate), measured in the same run as the kernels they judge.

    from bench_common import l2_flush_buffer, time_calls, copy_bandwidth, tensor_rate, rel_error
"""
import ctypes
import datetime
import statistics
import sys

import torch


def l2_flush_buffer(mib=256):
    """A buffer larger than any Hopper L2 (50-60 MB); zeroing it before a call evicts the
    previous call's data, so every timed call reads its inputs from HBM."""
    return torch.empty(mib << 20, dtype=torch.uint8, device="cuda")


def time_calls(fn, n_sets, reps, warmup, flush):
    """(median, min, max) milliseconds of fn(i % n_sets), CUDA events around each call, L2
    flushed before each call. fn(i) rotates over n_sets input sets (never zeros)."""
    for i in range(warmup):
        fn(i % n_sets)
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        flush.zero_()
        starts[i].record()
        fn(i % n_sets)
        ends[i].record()
    torch.cuda.synchronize()
    times = [s.elapsed_time(e) for s, e in zip(starts, ends)]
    return statistics.median(times), min(times), max(times)


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


def start_report(**extra):
    """Measures this run's floors and opens its report: (flush buffer, copy bandwidth in bytes/s,
    tensor rate in FLOP/s, report dict with the GPU, date, versions, floors, command, `extra` and
    an empty "shapes" list). Prints the header line every benchmark's log starts with."""
    flush = l2_flush_buffer()
    bw = copy_bandwidth(flush)
    rate = tensor_rate(flush)
    props = torch.cuda.get_device_properties(0)
    report = {"gpu": props.name, "sms": props.multi_processor_count,
              "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "torch": torch.__version__, "cuda": torch.version.cuda, "copy_bandwidth_GBps": bw / 1e9,
              "tensor_TFLOPs": rate / 1e12, "command": " ".join(sys.argv), **extra, "shapes": []}
    print(f"# {props.name}, copy bandwidth {bw / 1e9:.0f} GB/s (read+write), bf16 matmul {rate / 1e12:.0f} TFLOP/s",
          flush=True)
    return flush, bw, rate, report


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
