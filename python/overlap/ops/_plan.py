"""Which code runs an op call: one of the CUDA kernels (and, for gla, the padding that lets a kernel
run a head size it has no tile for) or the general torch path ("torch"). Without torch, so CI tests
the choice (tests/python/test_ops_checks.py).

`kernels` is what the CUDA build offers (ops/_cuda.py's Kernels, or None without one): per workload,
the variant names, a default for a shape, and why a variant cannot run a shape ("" when it can).

The rules, for every op:
- variant=None: a kernel where the tensors are on a CUDA device, the build has the kernels, the
  dtype is bf16 or fp16 (the kernels read bf16; fp16 is rounded to it), and a kernel can run the
  shape; otherwise "torch", which computes in fp32 on any device. fp32 inputs go to "torch" too:
  a caller who passes fp32 asks for fp32 accuracy, which bf16 kernels do not give.
- variant="<kernel>": that kernel or an exception saying why it cannot run the call (fp32 inputs
  are rounded to bf16).
- variant="torch": the general path.
"""
from collections import namedtuple

from . import _checks

TORCH = "torch"
KERNEL_DTYPES = ("bfloat16", "float16")

# gla's kernels have tiles for K in {64, 128} and V in multiples of 64 up to 256. Other head sizes
# up to those run on zero-padded copies: a zero key channel (gate 0) adds nothing to the state and
# a zero value column gives a zero output column, both cut off again.
GLA_MAX_K, GLA_MAX_V = 128, 256

GlaPlan = namedtuple("GlaPlan", "variant K V")  # K, V: the sizes the kernel runs (padded)


def _explicit_kernel(op, variant, device, kernels):
    """Refusals common to every op when the caller named a kernel."""
    if device != "cuda":
        raise ValueError(f"{op}: variant={variant!r} is a CUDA kernel; the tensors are on {device} "
                         f"(use variant=None or 'torch')")
    if kernels is None:
        raise RuntimeError(f"{op}: variant={variant!r} needs overlap's CUDA kernels, which this build of "
                           "overlap does not have (install it where nvcc exists), or pass variant=None")


def _wants_kernel(device, dtype, kernels, kernel_dtypes=KERNEL_DTYPES):
    return device == "cuda" and kernels is not None and dtype in kernel_dtypes


def known_variants(workload, kernels, model_variants):
    """Every name variant= takes: the kernels' (the model's names where the build has none) and "torch"."""
    names = kernels.variants(workload) if kernels is not None else model_variants
    return tuple(names) + (TORCH,)


def gla(dims, dtype, device, variant, kernels, model_variants=()):
    B, T, H, K, V = dims
    _checks.variant_name("chunk_gla", variant, known_variants("gla", kernels, model_variants))
    if variant == TORCH:
        return GlaPlan(TORCH, K, V)
    Kp = 64 if K <= 64 else 128
    Vp = -(-V // 64) * 64
    padded = (B, T, H, Kp, Vp)
    fits = K <= GLA_MAX_K and V <= GLA_MAX_V
    if variant is None:
        if not (_wants_kernel(device, dtype, kernels) and fits):
            return GlaPlan(TORCH, K, V)
        chosen = kernels.default("gla", padded)
        return GlaPlan(TORCH, K, V) if kernels.cannot_implement("gla", chosen, padded) else GlaPlan(chosen, Kp, Vp)
    _explicit_kernel("chunk_gla", variant, device, kernels)
    if not fits:
        raise ValueError(f"chunk_gla: variant={variant!r} runs K <= {GLA_MAX_K} and V <= {GLA_MAX_V} "
                         f"(K = {K}, V = {V}); use variant=None or 'torch' for larger heads")
    why = kernels.cannot_implement("gla", variant, padded)
    if why:
        raise ValueError(f"chunk_gla: variant={variant!r} cannot run B={B}, T={T}, H={H}, K={K}, V={V}: {why}")
    return GlaPlan(variant, Kp, Vp)


# Head sizes (after padding) the backward kernels have tiles for (cuda/gla/gla_backward.hpp).
GLA_BACKWARD_SIZES = (64, 128)


def gla_backward_on_kernels(plan):
    """Whether the gradients of a call the plan ran on a kernel run on the backward kernels (else
    on the general path): its padded heads must have backward tiles."""
    return plan.variant != TORCH and plan.K in GLA_BACKWARD_SIZES and plan.V in GLA_BACKWARD_SIZES


def linrnn(dims, dtype, device, variant, kernels, model_variants=()):
    return _unpadded("linrnn", dims, dtype, device, variant, kernels, model_variants)


def projchain(dims, dtype, device, variant, kernels, model_variants=()):
    return _unpadded("projchain", dims, dtype, device, variant, kernels, model_variants)


def dual_gemm(dims, dtype, device, variant, kernels, model_variants=()):
    """dims (M, N, K, fmt); the kernels also take fp8 (e4m3) operands."""
    return _unpadded("dualgemm", dims, dtype, device, variant, kernels, model_variants, op_name="dual_gemm",
                     kernel_dtypes=KERNEL_DTYPES + ("float8_e4m3fn",))


def _unpadded(op, dims, dtype, device, variant, kernels, model_variants, op_name=None, kernel_dtypes=KERNEL_DTYPES):
    """linrnn, projchain, dualgemm: the kernel that can run the shape as it is, else torch. `op` is
    the workload's name in the kernels' build; `op_name` the op's, where it differs; kernel_dtypes
    the input dtypes its kernels read."""
    name = op_name or op
    _checks.variant_name(name, variant, known_variants(op, kernels, model_variants))
    if variant == TORCH:
        return TORCH
    if variant is None:
        if not _wants_kernel(device, dtype, kernels, kernel_dtypes):
            return TORCH
        chosen = kernels.default(op, dims)
        return TORCH if chosen is None else chosen
    _explicit_kernel(name, variant, device, kernels)
    why = kernels.cannot_implement(op, variant, dims)
    if why:
        raise ValueError(f"{name}: variant={variant!r} cannot run {_dims_text(op, dims)}: {why}")
    return variant


def _dims_text(op, dims):
    keys = {"linrnn": ("B", "T", "d", "dv"), "projchain": ("B", "T", "d", "H", "dk"),
            "dualgemm": ("M", "N", "K", "fmt")}[op]
    return ", ".join(f"{k}={v}" for k, v in zip(keys, dims))
