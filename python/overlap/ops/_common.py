"""What every torch op shares: tensors described for the torch-free checks, the refusals made
before the op is entered (wrong types, gradients), the autograd stub, and the model's variant
names for builds without the kernels."""
import functools

import torch

from . import _checks


def facts(t):
    """The torch-free description of a tensor (or None) that ops/_checks.py checks."""
    if t is None:
        return None
    return _checks.Facts(tuple(t.shape), str(t.dtype).replace("torch.", ""), str(t.device), t.is_contiguous())


def require_tensors(op, **tensors):
    """Each named argument a torch.Tensor (None where the name ends in '?')."""
    for name, t in tensors.items():
        optional = name.endswith("_")
        if t is None and optional:
            continue
        if not isinstance(t, torch.Tensor):
            shown = name.rstrip("_")
            raise TypeError(f"{op}: {shown} must be a torch.Tensor{' or None' if optional else ''}, "
                            f"got {type(t).__name__}")


def refuse_grad(op, **tensors):
    """Gradients arrive with issue 18: refuse before computing anything, rather than fail in backward."""
    if not torch.is_grad_enabled():
        return
    for name, t in tensors.items():
        if t is not None and t.requires_grad:
            _checks.not_implemented(op, name.rstrip("_"), "requires_grad=True (the backward pass); call the op "
                                    "under torch.no_grad() or torch.inference_mode(), or pass detached tensors")


def contiguous(*tensors):
    """The wrappers' inputs made contiguous (no copy where they are), as flash-linear-attention's
    ops do: a model's q, k, v are often strided views of one projection's output."""
    return tuple(t.contiguous() if t is not None else None for t in tensors)


def register_no_backward(op_object, op):
    """Calls of torch.ops.overlap.* that bypass the Python wrapper get a clear error in backward."""
    def backward(ctx, *grads):
        _checks.not_implemented(op, "backward", "the backward pass")

    op_object.register_autograd(backward, setup_context=lambda ctx, inputs, output: None)


@functools.lru_cache(maxsize=None)
def model_variants(workload):
    """The model's variant names: what variant= may name in a build without the CUDA kernels."""
    from ..model import variants
    return tuple(v["name"] for v in variants(workload))
