"""The CUDA kernels' extension module (overlap._cuda_ops), imported on the first op call:
`import overlap` and `import overlap.ops` never load a CUDA library themselves. Also what the
ops need around a launch: the caller's stream, device pointers, and output allocation."""
import torch

_kernels = None
_missing = None  # why the module cannot be imported, once known

# Tests set this: outputs start as NaN instead of uninitialized memory, so a kernel that leaves
# an element unwritten fails the comparison instead of passing on a previous call's result that
# the caching allocator handed back.
poison_outputs = False


class Kernels:
    """What ops/_plan.py asks of the CUDA build, per workload."""

    def __init__(self, module):
        self.m = module

    def variants(self, workload):
        return tuple(getattr(self.m, f"{workload}_variants")())

    def cannot_implement(self, workload, variant, dims):
        return getattr(self.m, f"{workload}_cannot_implement")(variant, *dims, *_shape_flags(workload))

    def default(self, workload, dims):
        if workload == "gla":
            return self.m.gla_default_variant(*dims, False, False)
        preferred = _PREFERRED[workload]
        if callable(preferred):
            preferred = preferred(dims)
        return next((v for v in preferred if not self.cannot_implement(workload, v, dims)), None)


def _shape_flags(workload):
    # gla and linrnn take has_h0 / want_hT in their shapes; no limit depends on them (dualgemm's
    # dims end in its format already).
    return (False, False) if workload in ("gla", "linrnn") else ()


# Defaults, fastest first (docs/results/*_h100.md). linrnn's chunk_fused is faster still but is
# only ever run when asked for: its persistent CTAs wait on each other and can hang while kernels
# of other streams (a data-parallel all-reduce, say) hold some of the GPU's SMs.
def _dualgemm_preferred(dims):
    # Fastest measured (docs/results/dualgemm_h100.md, both formats): at M <= 256 128x64 tiles with
    # six stages (twice the CTAs of 128x128), above that 128x128 with the TMA-store epilogue.
    small = ("tile128x64_stages6_ws", "tile128x128_stages4_ws_tmastore", "tile128x128_stages4_ws")
    return small if dims[0] <= 256 else (small[1], small[0], small[2])


_PREFERRED = {
    "linrnn": ("semi_fused", "three_kernel"),
    "projchain": ("epilogue_fused", "wide_gemm", "unfused"),
    "dualgemm": _dualgemm_preferred,
}


def kernels():
    """The CUDA build's Kernels, or None where this build of overlap has none."""
    global _kernels, _missing
    if _kernels is None and _missing is None:
        try:
            from .. import _cuda_ops
            _kernels = Kernels(_cuda_ops)
        except ImportError as e:
            _missing = str(e)
    return _kernels


def stream_of(device):
    """The current CUDA stream of `device` as the integer the C entry points take."""
    return torch.cuda.current_stream(device).cuda_stream


def address(t):
    """A tensor's device pointer, or 0 (null) for None."""
    return 0 if t is None else t.data_ptr()


def output(shape, dtype, device):
    """An output buffer (NaN-filled when poison_outputs is set)."""
    if poison_outputs:
        return torch.full(shape, float("nan"), dtype=dtype, device=device)
    return torch.empty(shape, dtype=dtype, device=device)


def workspace(nbytes, device):
    """Scratch from torch's caching allocator (stream-ordered like the kernels), or None for 0 bytes."""
    return torch.empty(nbytes, dtype=torch.uint8, device=device) if nbytes > 0 else None


def to_kernel_dtype(t):
    """The kernels read bf16: fp16 and fp32 are rounded to it (no copy when already bf16)."""
    return t.to(torch.bfloat16).contiguous()
