"""overlap.ops.chunk_gla: flash-linear-attention's chunk_gla (forward) on our kernels, registered
as the custom op overlap::chunk_gla with a fake implementation, so torch.compile traces it."""
from typing import Optional, Tuple

import torch
import torch.nn.functional as F

from . import _checks, _common, _cuda, _general, _plan

OP = "chunk_gla"


def chunk_gla(q, k, v, g, scale=None, initial_state=None, output_final_state=False, state_v_first=False,
              cu_seqlens=None, cu_seqlens_cpu=None, *, variant=None):
    """Chunkwise gated linear attention, forward, in flash-linear-attention's layout (fla 0.6's
    `chunk_gla`, whose argument names and order these are).

    q, k, g [B, T, H, K]; v [B, T, H, V]; g the log forget gate (<= 0); scale defaults to K^-1/2;
    initial_state [B, H, K, V] fp32 ([B, H, V, K] with state_v_first=True). Returns (o, final_state):
    o [B, T, H, V] in v's dtype, final_state fp32 like initial_state when output_final_state, else None.

    variant=None runs the fastest of our kernels that runs the call (bf16 / fp16 on a CUDA device;
    head sizes other than K in {64, 128}, V in {64, 128, 192, 256} on zero-padded copies up to
    K 128, V 256), else the general torch path in fp32 ("torch": fp32 inputs, larger heads, CPU).
    variant="pingpong_fused" (or another kernel's name, overlap.variants("gla")) forces one.
    Strided inputs (q, k, v split off one projection) are copied to contiguous ones first, as
    fla does; the registered op, torch.ops.overlap.chunk_gla, refuses them instead. Gradients and
    cu_seqlens are not supported yet (issue 18) and are refused.
    """
    _common.require_tensors(OP, q=q, k=k, v=v, g=g, initial_state_=initial_state)
    if cu_seqlens is not None or cu_seqlens_cpu is not None:
        _checks.not_implemented(OP, "cu_seqlens", "variable-length batches")
    if scale is None:
        scale = q.shape[-1] ** -0.5
    _checks.positive_scale(OP, scale)
    _common.refuse_grad(OP, q=q, k=k, v=v, g=g, initial_state_=initial_state)
    q, k, v, g, initial_state = _common.contiguous(q, k, v, g, initial_state)
    o, final_state = _op(q, k, v, g, float(scale), initial_state, bool(output_final_state), bool(state_v_first),
                         variant or "")
    return o, (final_state if output_final_state else None)


def _dims(q, k, v, g, initial_state, state_v_first):
    f = _common.facts
    return _checks.gla(f(q), f(k), f(v), f(g), f(initial_state), state_v_first)


@torch.library.custom_op("overlap::chunk_gla", mutates_args=())
def _op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor, scale: float,
        initial_state: Optional[torch.Tensor], output_final_state: bool, state_v_first: bool,
        variant: str) -> Tuple[torch.Tensor, torch.Tensor]:
    dims = _dims(q, k, v, g, initial_state, state_v_first)
    plan = _plan.gla(dims, _common.facts(q).dtype, q.device.type, variant or None, _cuda.kernels(),
                     _common.model_variants("gla"))
    # The kernels and the general path carry the state as [K, V].
    h0 = initial_state.transpose(-1, -2) if initial_state is not None and state_v_first else initial_state
    if plan.variant == _plan.TORCH:
        o, hT = _general.chunk_gla(q, k, v, g, scale, h0, output_final_state)
    else:
        o, hT = _kernel(plan, dims, q, k, v, g, scale, h0, output_final_state)
    if not output_final_state:
        return o, q.new_empty(0, dtype=torch.float32)
    return o, (hT.transpose(-1, -2).contiguous() if state_v_first else hT)


@_op.register_fake
def _fake(q, k, v, g, scale, initial_state, output_final_state, state_v_first, variant):
    B, T, H, K, V = _dims(q, k, v, g, initial_state, state_v_first)
    state = (B, H, V, K) if state_v_first else (B, H, K, V)
    return v.new_empty(B, T, H, V), q.new_empty(state if output_final_state else (0,), dtype=torch.float32)


_common.register_no_backward(_op, OP)


def _pad_last(x, size):
    return x if x.shape[-1] == size else F.pad(x, (0, size - x.shape[-1]))


def _kernel(plan, dims, q, k, v, g, scale, h0, want_hT):
    B, T, H, K, V = dims
    Kp, Vp = plan.K, plan.V
    device = q.device
    m = _cuda.kernels().m
    with torch.cuda.device(device):
        # bf16 q, k, v and fp32 g, zero-padded to a head size the kernel has a tile for.
        qb, kb = (_pad_last(_cuda.to_kernel_dtype(x), Kp) for x in (q, k))
        vb = _pad_last(_cuda.to_kernel_dtype(v), Vp)
        gf = _pad_last(g.to(torch.float32).contiguous(), Kp)
        if h0 is not None:
            h0 = F.pad(h0, (0, Vp - V, 0, Kp - K)).contiguous() if (Kp, Vp) != (K, V) else h0.contiguous()
        o = _cuda.output((B, T, H, Vp), torch.bfloat16, device)
        hT = _cuda.output((B, H, Kp, Vp), torch.float32, device) if want_hT else None
        ws = _cuda.workspace(m.gla_workspace_bytes(plan.variant, B, T, H, Kp, Vp), device)
        a = _cuda.address
        m.gla_forward(plan.variant, a(qb), a(kb), a(vb), a(gf), a(h0), a(o), a(hT), a(ws), B, T, H, Kp, Vp,
                      scale, _cuda.stream_of(device))
    if Vp != V:
        o = o[..., :V]
    o = o.to(v.dtype).contiguous()
    if hT is not None and (Kp, Vp) != (K, V):
        hT = hT[:, :, :K, :V].contiguous()
    return o, hT
