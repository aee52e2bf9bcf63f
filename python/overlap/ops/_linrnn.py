"""overlap.ops.linrnn: projection -> gated scan -> SiLU gate (SPEC section 2) on our kernels,
registered as the custom op overlap::linrnn with a fake implementation."""
from typing import Optional, Tuple

import torch

from . import _caches, _checks, _common, _cuda, _general, _plan

OP = "linrnn"


def linrnn(x, weight, initial_state=None, output_final_state=False, *, variant=None):
    """y_t = h_t * silu(z_t), h_t = a_t h_{t-1} + (1 - a_t) u_t, a_t = sigmoid(a_pre_t), where
    [u | a_pre | z] = x_t W^T and `weight` is nn.Linear(d, 3 dv, bias=False).weight, [3 dv, d],
    rows u, a, z. x [B, T, d]; initial_state [B, dv] fp32. Returns (y [B, T, dv] in x's dtype,
    final_state [B, dv] fp32 or None).

    variant=None runs semi_fused (cuBLAS + one scan kernel) for bf16 / fp16 on a CUDA device where
    it runs the shape (d, dv multiples of 8), else the general torch path in fp32. The weight is
    transposed (and for chunk_fused packed) once per weight and kept (overlap.ops.clear_caches).
    variant="chunk_fused" is faster but needs the GPU to itself: its persistent CTAs wait on each
    other and can hang while another stream's kernels hold SMs.
    """
    _common.require_tensors(OP, x=x, weight=weight, initial_state_=initial_state)
    _common.refuse_grad(OP, x=x, weight=weight, initial_state_=initial_state)
    x, weight, initial_state = _common.contiguous(x, weight, initial_state)
    y, final_state = _op(x, weight, initial_state, bool(output_final_state), variant or "")
    return y, (final_state if output_final_state else None)


def _dims(x, weight, initial_state):
    f = _common.facts
    return _checks.linrnn(f(x), f(weight), f(initial_state))


@torch.library.custom_op("overlap::linrnn", mutates_args=())
def _op(x: torch.Tensor, weight: torch.Tensor, initial_state: Optional[torch.Tensor], output_final_state: bool,
        variant: str) -> Tuple[torch.Tensor, torch.Tensor]:
    dims = _dims(x, weight, initial_state)
    chosen = _plan.linrnn(dims, _common.facts(x).dtype, x.device.type, variant or None, _cuda.kernels(),
                          _common.model_variants("linrnn"))
    if chosen == _plan.TORCH:
        y, hT = _general.linrnn(x, weight, initial_state, output_final_state)
    else:
        y, hT = _kernel(chosen, dims, x, weight, initial_state, output_final_state)
    return y, (hT if output_final_state else x.new_empty(0, dtype=torch.float32))


@_op.register_fake
def _fake(x, weight, initial_state, output_final_state, variant):
    B, T, d, dv = _dims(x, weight, initial_state)
    return x.new_empty(B, T, dv), x.new_empty((B, dv) if output_final_state else (0,), dtype=torch.float32)


_common.register_no_backward(_op, OP)


def _weight(m, variant, weight, dims, stream):
    """W [d, 3 dv] bf16 (the kernels' layout) and, for chunk_fused, W packed; both kept per weight."""
    B, T, d, dv = dims
    W = _caches.weights.get("linrnn.W", [weight], lambda: _cuda.to_kernel_dtype(weight.t()))
    if variant != "chunk_fused":
        return W, None

    def pack():
        packed = torch.empty(m.linrnn_packed_weight_bytes(B, T, d, dv), dtype=torch.uint8, device=weight.device)
        m.linrnn_pack_weight(W.data_ptr(), packed.data_ptr(), B, T, d, dv, stream)
        return packed

    # The packing depends on d and dv only, which the weight's shape fixes.
    return W, _caches.weights.get("linrnn.packed", [weight], pack)


def _workspace(m, variant, dims, device, stream):
    """The kernels' workspace: zero-filled once, then reused by calls on the same stream and shape
    (it holds the look-back's flags, which each launch leaves ready for the next; linrnn_forward.hpp)."""
    key = (str(device), stream, variant) + tuple(dims)
    ws = _caches.workspaces.get(key)
    if ws is None:
        ws = _caches.workspaces.put(key, torch.zeros(max(m.linrnn_workspace_bytes(variant, *dims), 1),
                                                     dtype=torch.uint8, device=device))
    return ws


def _kernel(variant, dims, x, weight, h0, want_hT):
    B, T, d, dv = dims
    device = x.device
    m = _cuda.kernels().m
    with torch.cuda.device(device):
        stream = _cuda.stream_of(device)
        xb = _cuda.to_kernel_dtype(x)
        W, packed = _weight(m, variant, weight, dims, stream)
        h0 = h0.contiguous() if h0 is not None else None
        y = _cuda.output((B, T, dv), torch.bfloat16, device)
        hT = _cuda.output((B, dv), torch.float32, device) if want_hT else None
        ws = _workspace(m, variant, dims, device, stream)
        a = _cuda.address
        m.linrnn_forward(variant, a(xb), a(W), a(packed), a(h0), a(y), a(hT), a(ws), B, T, d, dv, stream)
    return y.to(x.dtype), hT
