"""Argument checks shared by the ops: each refusal names the op, the argument and its value, so
the message says what to fix without reading the source."""
import math

import torch

FLOAT_DTYPES = (torch.bfloat16, torch.float16, torch.float32)


def tensor(op, name, x):
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{op}: {name} must be a torch.Tensor, got {type(x).__name__}")
    return x


def dims(op, name, x, layout):
    """x must have as many dims as `layout` names, e.g. "[B, T, H, K]"."""
    n = layout.count(",") + 1
    if x.dim() != n:
        raise ValueError(f"{op}: {name} must be {layout} ({n} dims), got shape {tuple(x.shape)}")


def shape(op, name, x, expected, why):
    if tuple(x.shape) != tuple(expected):
        raise ValueError(f"{op}: {name} has shape {tuple(x.shape)}, expected {tuple(expected)} ({why})")


def nonempty(op, name, x):
    if x.numel() == 0:
        raise ValueError(f"{op}: {name} has a zero-size dimension, shape {tuple(x.shape)}")


def float_dtype(op, name, x, allowed=FLOAT_DTYPES):
    if x.dtype not in allowed:
        raise TypeError(f"{op}: {name} has dtype {x.dtype}; expected one of "
                        f"{', '.join(str(d).replace('torch.', '') for d in allowed)}")


def contiguous(op, name, x):
    if not x.is_contiguous():
        raise ValueError(f"{op}: {name} is not contiguous (shape {tuple(x.shape)}, stride {x.stride()}); "
                         f"pass {name}.contiguous()")


def same_device(op, tensors):
    """Every tensor of {name: tensor or None} on the device of the first."""
    present = [(n, t) for n, t in tensors.items() if t is not None]
    first_name, first = present[0]
    for name, t in present[1:]:
        if t.device != first.device:
            raise ValueError(f"{op}: {name} is on {t.device} but {first_name} is on {first.device}")


def positive_scale(op, scale):
    if scale is None:
        return
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale) or scale <= 0:
        raise ValueError(f"{op}: scale={scale!r} must be a positive finite number (or None for the default)")


def variant_name(op, variant, known):
    if variant is None:
        return
    if not isinstance(variant, str) or variant not in known:
        raise ValueError(f"{op}: unknown variant={variant!r} (known: None = the fastest that runs the shape, "
                         f"{', '.join(known)})")


def input_tensor(op, name, x, layout, allowed=FLOAT_DTYPES):
    """The checks every input takes: a tensor, its rank, a float dtype, no zero-size dim, contiguous."""
    tensor(op, name, x)
    dims(op, name, x, layout)
    float_dtype(op, name, x, allowed)
    nonempty(op, name, x)
    contiguous(op, name, x)
