"""overlap.ops.dual_gemm: the gated dual GEMM of SPEC section 4 on our kernels, registered as the
custom op overlap::dual_gemm with a fake implementation."""
from typing import Optional

import torch

from . import _checks, _common, _cuda, _general, _plan

OP = "dual_gemm"


def dual_gemm(a, b1, b2, *, scale_a=None, scale_b1=None, scale_b2=None, variant=None):
    """C = silu(a b1^T) * (a b2^T), a SwiGLU-style gate: a [..., K]; b1, b2 nn.Linear(K, N).weight
    [N, K]. bf16 / fp16 operands give C in their dtype; float8_e4m3fn operands take fp32 scales
    (scale_a: shape () or [M], the rows of a; scale_b1, scale_b2: () or [N]) and give fp16 C.

    variant=None runs the fastest kernel measured for the shape (tile128x64_stages6_ws where
    M <= 256, else tile128x128_stages4_ws_tmastore; docs/results/dualgemm_h100.md) where K is a
    multiple of 256 and N of 8 on a CUDA device, else the general torch path in fp32; variant=
    names any kernel of `overlap list` for dualgemm, or "torch".
    """
    _common.require_tensors(OP, a=a, b1=b1, b2=b2, scale_a_=scale_a, scale_b1_=scale_b1, scale_b2_=scale_b2)
    _common.refuse_grad(OP, a=a, b1=b1, b2=b2)
    return _op(*_common.contiguous(a, b1, b2, scale_a, scale_b1, scale_b2), variant or "")


def _dims(a, b1, b2, scale_a, scale_b1, scale_b2):
    facts = (_common.facts(x) for x in (a, b1, b2, scale_a, scale_b1, scale_b2))
    return _checks.dual_gemm(*facts)


def _out_dtype(a):
    return torch.float16 if a.dtype == torch.float8_e4m3fn else a.dtype


@torch.library.custom_op("overlap::dual_gemm", mutates_args=())
def _op(a: torch.Tensor, b1: torch.Tensor, b2: torch.Tensor, scale_a: Optional[torch.Tensor],
        scale_b1: Optional[torch.Tensor], scale_b2: Optional[torch.Tensor], variant: str) -> torch.Tensor:
    M, N, K, fp8 = _dims(a, b1, b2, scale_a, scale_b1, scale_b2)
    dims = (M, N, K, int(fp8))
    chosen = _plan.dual_gemm(dims, _common.facts(a).dtype, a.device.type, variant or None, _cuda.kernels(),
                             _common.model_variants("dualgemm"))
    if chosen == _plan.TORCH:
        return _general.dual_gemm(a, b1, b2, scale_a, scale_b1, scale_b2).to(_out_dtype(a))
    return _kernel(chosen, dims, a, b1, b2, scale_a, scale_b1, scale_b2)


@_op.register_fake
def _fake(a, b1, b2, scale_a, scale_b1, scale_b2, variant):
    M, N, K, fp8 = _dims(a, b1, b2, scale_a, scale_b1, scale_b2)
    return a.new_empty(tuple(a.shape[:-1]) + (N,), dtype=_out_dtype(a))


_common.register_no_backward(_op, OP)


def _kernel(variant, dims, a, b1, b2, scale_a, scale_b1, scale_b2):
    M, N, K, fmt = dims
    addr = _cuda.address
    with torch.cuda.device(a.device):
        stream = _cuda.stream_of(a.device)
        if fmt:
            ops = (a, b1, b2)
            # The kernels take one fp32 scale per row; a tensor-wide scale is that for every row.
            scales = [s.float().reshape(-1).expand(rows).contiguous() for s, rows in
                      ((scale_a, M), (scale_b1, N), (scale_b2, N))]
        else:
            ops = tuple(_cuda.to_kernel_dtype(x) for x in (a, b1, b2))
            scales = [None, None, None]
        c = _cuda.output((M, N), torch.float16, a.device)
        _cuda.kernels().m.dualgemm_forward(variant, fmt, M, N, K, *(addr(x) for x in ops), *(addr(s) for s in scales),
                                           addr(c), stream)
    return c.view(tuple(a.shape[:-1]) + (N,)).to(_out_dtype(a))
