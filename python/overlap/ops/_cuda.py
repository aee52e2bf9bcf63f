"""The CUDA kernels' extension module (overlap._cuda_ops), imported on the first op that runs on
a GPU: `import overlap` and `import overlap.ops` never load a CUDA library themselves."""
import warnings

import torch

_module = None
_missing = None  # why the module cannot be imported, once known


def available():
    """True when this build of overlap has the CUDA kernels and they import."""
    global _module, _missing
    if _module is None and _missing is None:
        try:
            from .. import _cuda_ops
            _module = _cuda_ops
        except ImportError as e:
            _missing = str(e)
    return _module is not None


def kernels(op, variant):
    """The extension module, or a RuntimeError saying why `variant` of `op` cannot run."""
    if not available():
        raise RuntimeError(f"{op}: variant='{variant}' needs overlap's CUDA kernels, which this build does not have "
                           f"({_missing}); install overlap where nvcc exists, or pass variant='torch'")
    return _module


_warned = set()


def warn_once(key, message):
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, stacklevel=3)


def stream_of(device):
    """The current CUDA stream of `device` as the integer the C entry points take."""
    return torch.cuda.current_stream(device).cuda_stream


def address(t):
    """A tensor's device pointer, or 0 (null) for None."""
    return 0 if t is None else t.data_ptr()
