"""overlap's kernels as torch ops (issue 17), registered with torch.library so that
torch.compile traces models that call them:

    from overlap.ops import chunk_gla          # instead of: from fla.ops.gla import chunk_gla
    o, final_state = chunk_gla(q, k, v, g, initial_state=h0, output_final_state=True)
    y, h = overlap.ops.linrnn(x, layer.weight)                   # nn.Linear(d, 3 dv) weight
    q, k, v, g, alpha = overlap.ops.projchain(x, w_q, w_k, w_v, w_g, w_alpha)
    c = overlap.ops.dual_gemm(a, gate.weight, up.weight)          # silu(a W1^T) * (a W2^T)

Also torch.ops.overlap.chunk_gla / linrnn / projchain / dual_gemm (the registered ops, all
arguments given).
chunk_gla differentiates (q, k, v, g, initial_state; torch.ops.overlap.chunk_gla_train and
chunk_gla_backward are its training forward and its backward kernels); linrnn, projchain and
dual_gemm are forward only and refuse inputs that require grad. chunk_gla takes fla's packed
batches (cu_seqlens) and runs each sequence as its own call (no variable-length kernel yet).

Importing this module needs no torch: the ops (and torch) load on first use, and
overlap.ops._checks / _plan (the argument checks and the choice of kernel) run without torch.
"""
import importlib

_OPS = {"chunk_gla": "._gla", "linrnn": "._linrnn", "projchain": "._projchain", "dual_gemm": "._dualgemm"}

__all__ = list(_OPS) + ["clear_caches", "kernels_available"]


def clear_caches():
    """Drops the transposed / packed weights and the workspaces the ops keep between calls."""
    from . import _caches
    _caches.clear_caches()


def kernels_available():
    """True when this build of overlap has the CUDA kernels and they import (else the ops run
    their general torch path)."""
    from . import _cuda
    return _cuda.kernels() is not None


def __getattr__(name):
    if name in _OPS:
        return getattr(importlib.import_module(_OPS[name], __name__), name)
    raise AttributeError(f"module 'overlap.ops' has no attribute '{name}'")
