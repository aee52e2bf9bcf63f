"""overlap.ops.projchain: the GLA input projections (SPEC section 3) on our kernels, registered as
the custom op overlap::projchain with a fake implementation."""
from typing import Tuple

import torch

from . import _caches, _checks, _common, _cuda, _general, _plan

OP = "projchain"
WEIGHTS = ("w_q", "w_k", "w_v", "w_g", "w_alpha")


def projchain(x, w_q, w_k, w_v, w_g, w_alpha, *, variant=None):
    """q = x W_q^T, k = l2normalize per head (x W_k^T), v = x W_v^T, g = silu(x W_g^T),
    alpha = sigmoid(x W_alpha^T), each W an nn.Linear(d, ·, bias=False).weight: w_q, w_k, w_v, w_g
    [H dk, d], w_alpha [H, d] (H is read from it). x [N, d] or [B, T, d]. Returns (q, k, v, g,
    alpha) in x's dtype: q, k, v, g [..., H, dk] (chunk_gla's [B, T, H, K] for 3-D x), alpha [..., H].

    variant=None runs epilogue_fused (one GEMM, activations in its epilogue; dk in {64, 128}, d a
    multiple of 8), else wide_gemm, unfused, for bf16 / fp16 on a CUDA device, else the general
    torch path in fp32. Weights are transposed / packed once per weight and kept
    (overlap.ops.clear_caches).
    """
    weights = dict(zip(WEIGHTS, (w_q, w_k, w_v, w_g, w_alpha)))
    _common.require_tensors(OP, x=x, **weights)
    _common.refuse_grad(OP, x=x, **weights)
    return _op(*_common.contiguous(x, w_q, w_k, w_v, w_g, w_alpha), variant or "")


def _dims(x, *weights):
    return _checks.projchain(_common.facts(x), *(_common.facts(w) for w in weights))


def _shapes(x, H, dk):
    lead = tuple(x.shape[:-1])
    return [lead + (H, dk)] * 4 + [lead + (H,)]


@torch.library.custom_op("overlap::projchain", mutates_args=())
def _op(x: torch.Tensor, w_q: torch.Tensor, w_k: torch.Tensor, w_v: torch.Tensor, w_g: torch.Tensor,
        w_alpha: torch.Tensor, variant: str) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    weights = (w_q, w_k, w_v, w_g, w_alpha)
    N, d, H, dk = _dims(x, *weights)
    # The kernels take B and T only through N = B T.
    dims = (1, N, d, H, dk)
    chosen = _plan.projchain(dims, _common.facts(x).dtype, x.device.type, variant or None, _cuda.kernels(),
                             _common.model_variants("projchain"))
    if chosen == _plan.TORCH:
        return _general.projchain(x, *weights, H, dk)
    return _kernel(chosen, dims, x, weights)


@_op.register_fake
def _fake(x, w_q, w_k, w_v, w_g, w_alpha, variant):
    N, d, H, dk = _dims(x, w_q, w_k, w_v, w_g, w_alpha)
    return tuple(x.new_empty(s) for s in _shapes(x, H, dk))


_common.register_no_backward(_op, OP)


def _kernel(variant, dims, x, weights):
    _, N, d, H, dk = dims
    device = x.device
    m = _cuda.kernels().m
    a = _cuda.address
    with torch.cuda.device(device):
        stream = _cuda.stream_of(device)
        xb = _cuda.to_kernel_dtype(x)
        # The kernels' layout, [d, out] bf16, once per weight.
        wt = [_caches.weights.get("projchain.Wt", [w], lambda w=w: _cuda.to_kernel_dtype(w.t())) for w in weights]
        packed = None
        if variant in ("wide_gemm", "epilogue_fused"):
            def pack():
                buf = torch.empty(m.projchain_packed_ld(*dims) * d, dtype=torch.bfloat16, device=device)
                m.projchain_pack(variant, *(a(w) for w in wt), a(buf), *dims, stream)
                return buf

            # The packing depends on d, H, dk only, which the weights' shapes fix.
            packed = _caches.weights.get(f"projchain.packed.{variant}", list(weights), pack)
        outs = [_cuda.output(s, torch.bfloat16, device) for s in _shapes(x, H, dk)]
        ws = _cuda.workspace(m.projchain_workspace_bytes(variant, *dims, packed is not None), device)
        m.projchain_forward(variant, a(xb), *(a(w) for w in wt), a(packed), *(a(o) for o in outs), a(ws), *dims,
                            stream)
    return tuple(o.to(x.dtype) for o in outs)
