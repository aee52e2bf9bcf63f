"""overlap.ops.chunk_gla: flash-linear-attention's chunk_gla on our kernels, forward and backward,
registered as custom ops with fake implementations and autograd, so that torch.compile traces it
and training differentiates it:

  overlap::chunk_gla           the forward (o, final state)
  overlap::chunk_gla_train     the forward that also saves the state entering every 64-step chunk
                               for the backward, when the backward runs on our kernels
  overlap::chunk_gla_backward  dq, dk, dv, dg, dh0 from do and d(final state)
"""
from typing import Optional, Tuple

import torch
import torch.nn.functional as F

from . import _checks, _common, _cuda, _general, _gla_varlen, _plan

OP = "chunk_gla"
CHUNK = 64  # the kernels' chunk: the saved states are one per 64 steps


def chunk_gla(q, k, v, g, scale=None, initial_state=None, output_final_state=False, state_v_first=False,
              cu_seqlens=None, cu_seqlens_cpu=None, *, variant=None):
    """Chunkwise gated linear attention in flash-linear-attention's layout (fla 0.6's `chunk_gla`,
    whose argument names and order these are), with gradients for q, k, v, g and initial_state.

    q, k, g [B, T, H, K]; v [B, T, H, V]; g the log forget gate (<= 0); scale defaults to K^-1/2;
    initial_state [B, H, K, V] fp32 ([B, H, V, K] with state_v_first=True). Returns (o, final_state):
    o [B, T, H, V] in v's dtype, final_state fp32 like initial_state when output_final_state, else None.

    variant=None runs the fastest of our kernels that runs the call (bf16 / fp16 on a CUDA device;
    head sizes other than K in {64, 128}, V in {64, 128, 192, 256} on zero-padded copies up to
    K 128, V 256), else the general torch path in fp32 ("torch": fp32 inputs, larger heads, CPU).
    variant="pingpong_fused" (or another kernel's name, overlap.variants("gla")) forces one.
    Where a graph is recorded for any input, the forward also saves each chunk's state and the
    backward runs on our kernels (`saved_states`) where the padded heads are at most 128 wide;
    elsewhere the gradients come from the general path (recomputed in fp32). Strided inputs (q, k,
    v split off one projection) are copied to contiguous ones first, as fla does; the registered
    ops refuse them instead.

    cu_seqlens (int32 or int64 [N + 1], fla's packed batch: B = 1, sequence i is steps
    cu_seqlens[i] to cu_seqlens[i + 1]; cu_seqlens_cpu a host copy that saves reading it back):
    initial_state and the final state are [N, H, K, V]; the outputs are those of each sequence
    alone, and a zero-length sequence's final state is its initial state. Where the plan picks
    pingpong_fused (and, with gradients, the backward kernels have tiles for the heads), the batch
    runs in one launch on the variable-length kernels; otherwise each sequence runs as its own call.
    """
    _common.require_tensors(OP, q=q, k=k, v=v, g=g, initial_state_=initial_state)
    if scale is None:
        scale = q.shape[-1] ** -0.5
    _checks.positive_scale(OP, scale)
    q, k, v, g, initial_state = _common.contiguous(q, k, v, g, initial_state)
    if cu_seqlens is not None or cu_seqlens_cpu is not None:
        return _packed(q, k, v, g, scale, initial_state, output_final_state, state_v_first,
                       cu_seqlens if cu_seqlens is not None else cu_seqlens_cpu,
                       cu_seqlens_cpu if cu_seqlens_cpu is not None else cu_seqlens, variant)
    args = (q, k, v, g, float(scale), initial_state, bool(output_final_state), bool(state_v_first), variant or "")
    if torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in (q, k, v, g, initial_state)):
        o, final_state, _ = _train_op(*args)
    else:
        o, final_state = _op(*args)
    return o, (final_state if output_final_state else None)


def _packed(q, k, v, g, scale, initial_state, output_final_state, state_v_first, cu_seqlens, offsets, variant):
    """A packed batch (chunk_gla's cu_seqlens): one launch on the variable-length kernels where
    the plan picks pingpong_fused (ops/_gla_varlen.py), else one call per sequence."""
    _common.require_tensors(OP, cu_seqlens=cu_seqlens, cu_seqlens_cpu=offsets)
    f = _common.facts
    B, T, H, K, V = _checks.gla(f(q), f(k), f(v), f(g), None, state_v_first)
    offsets = [int(x) for x in (offsets.tolist() if offsets.dim() == 1 else [])]
    N = _checks.gla_varlen(f(cu_seqlens), offsets, B, T)
    if initial_state is not None:
        _checks.gla_varlen_state(f(initial_state), N, H, K, V, state_v_first)
    plan = _plan.gla((B, T, H, K, V), f(q).dtype, q.device.type, variant or None, _cuda.kernels(),
                     _common.model_variants("gla"))
    needs_grad = torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in (q, k, v, g, initial_state))
    if _gla_varlen.usable(plan, needs_grad):
        on_device = cu_seqlens.device == q.device
        cu = (cu_seqlens.to(torch.int32) if on_device else torch.tensor(offsets, dtype=torch.int32, device=q.device))
        return _gla_varlen.chunk_gla_varlen(q, k, v, g, cu.contiguous(), scale, initial_state, output_final_state,
                                            state_v_first, needs_grad)
    state_shape = (1, H, V, K) if state_v_first else (1, H, K, V)
    outputs, finals = [], []
    for i in range(N):
        s, e = offsets[i], offsets[i + 1]
        h0 = initial_state[i:i + 1] if initial_state is not None else None
        if e == s:  # nothing to run: the state passes through
            finals.append(h0 if h0 is not None else q.new_zeros(state_shape, dtype=torch.float32))
            continue
        o, hT = chunk_gla(q[:, s:e], k[:, s:e], v[:, s:e], g[:, s:e], scale, h0, output_final_state, state_v_first,
                          variant=variant)
        outputs.append(o)
        finals.append(hT)
    o = torch.cat(outputs, dim=1)  # T >= 1 (checked), so some sequence ran
    return o, (torch.cat(finals) if output_final_state else None)


def _dims(q, k, v, g, initial_state, state_v_first):
    f = _common.facts
    return _checks.gla(f(q), f(k), f(v), f(g), f(initial_state), state_v_first)


def _plan_of(q, k, v, g, initial_state, state_v_first, variant):
    dims = _dims(q, k, v, g, initial_state, state_v_first)
    plan = _plan.gla(dims, _common.facts(q).dtype, q.device.type, variant or None, _cuda.kernels(),
                     _common.model_variants("gla"))
    return dims, plan


def _kv_first(state, state_v_first):
    """The kernels and the general path carry the state as [K, V]."""
    return state.transpose(-1, -2) if state is not None and state_v_first else state


def _forward(q, k, v, g, scale, initial_state, output_final_state, state_v_first, variant, save_states):
    dims, plan = _plan_of(q, k, v, g, initial_state, state_v_first, variant)
    h0 = _kv_first(initial_state, state_v_first)
    states = None
    if plan.variant == _plan.TORCH:
        o, hT = _general.chunk_gla(q, k, v, g, scale, h0, output_final_state)
    else:
        save = save_states and _plan.gla_backward_on_kernels(plan)
        o, hT, states = _kernel(plan, dims, q, k, v, g, scale, h0, output_final_state, save)
    return _op_outputs(q, o, hT, states, output_final_state, state_v_first)


def _op_outputs(q, o, hT, states, output_final_state, state_v_first):
    """The forward ops' (o, final state, saved states): an empty final state where none was asked
    for, else in the caller's layout; an empty states tensor where none were saved."""
    if not output_final_state:
        hT = q.new_empty(0, dtype=torch.float32)
    elif state_v_first:
        hT = hT.transpose(-1, -2).contiguous()
    return o, hT, (states if states is not None else q.new_empty(0, dtype=torch.bfloat16))


@torch.library.custom_op("overlap::chunk_gla", mutates_args=())
def _op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor, scale: float,
        initial_state: Optional[torch.Tensor], output_final_state: bool, state_v_first: bool,
        variant: str) -> Tuple[torch.Tensor, torch.Tensor]:
    o, hT, _ = _forward(q, k, v, g, scale, initial_state, output_final_state, state_v_first, variant, False)
    return o, hT


@torch.library.custom_op("overlap::chunk_gla_train", mutates_args=())
def _train_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor, scale: float,
              initial_state: Optional[torch.Tensor], output_final_state: bool, state_v_first: bool,
              variant: str) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return _forward(q, k, v, g, scale, initial_state, output_final_state, state_v_first, variant, True)


def _fake_outputs(q, k, v, g, initial_state, output_final_state, state_v_first, variant, save_states):
    (B, T, H, K, V), plan = _plan_of(q, k, v, g, initial_state, state_v_first, variant)
    state = (B, H, V, K) if state_v_first else (B, H, K, V)
    o = v.new_empty(B, T, H, V)
    hT = q.new_empty(state if output_final_state else (0,), dtype=torch.float32)
    saved = save_states and _plan.gla_backward_on_kernels(plan)
    states = q.new_empty((B, H, -(-T // CHUNK), plan.K, plan.V) if saved else (0,), dtype=torch.bfloat16)
    return o, hT, states


@_op.register_fake
def _fake(q, k, v, g, scale, initial_state, output_final_state, state_v_first, variant):
    return _fake_outputs(q, k, v, g, initial_state, output_final_state, state_v_first, variant, False)[:2]


@_train_op.register_fake
def _train_fake(q, k, v, g, scale, initial_state, output_final_state, state_v_first, variant):
    return _fake_outputs(q, k, v, g, initial_state, output_final_state, state_v_first, variant, True)


@torch.library.custom_op("overlap::chunk_gla_backward", mutates_args=())
def _backward_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor, scale: float,
                 initial_state: Optional[torch.Tensor], do: torch.Tensor, dhT: Optional[torch.Tensor],
                 states: torch.Tensor, state_v_first: bool,
                 variant: str) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The backward kernels: dq, dk, dv, dg in the inputs' dtypes and dh0 (like initial_state, or
    empty without it) from do [B, T, H, V] and dhT (like the final state, or None); states: what
    chunk_gla_train saved (empty: none, the kernels recompute them). For calls whose forward ran
    on a kernel with padded heads of at most 128; the others differentiate the general path."""
    dims, plan = _plan_of(q, k, v, g, initial_state, state_v_first, variant)
    if not _plan.gla_backward_on_kernels(plan):
        B, T, H, K, V = dims
        raise ValueError(f"chunk_gla_backward: no backward kernel runs B={B}, T={T}, H={H}, K={K}, V={V} on "
                         f"{q.device.type} {q.dtype} (variant {plan.variant}); differentiate chunk_gla instead")
    h0, dhT = _kv_first(initial_state, state_v_first), _kv_first(dhT, state_v_first)
    dq, dk, dv, dg, dh0 = _kernel_backward(plan, dims, q, k, v, g, scale, h0, do, dhT, states)
    return _as_inputs(q, k, v, g, dq, dk, dv, dg, dh0, state_v_first)


def _as_inputs(q, k, v, g, dq, dk, dv, dg, dh0, state_v_first):
    """Gradients in the inputs' dtypes and head sizes (the kernels' zero-padded heads cut back),
    dh0 in the caller's state layout (empty without h0)."""
    K, V = q.shape[-1], v.shape[-1]
    dq, dk, dg, dv = dq[..., :K], dk[..., :K], dg[..., :K], dv[..., :V]
    if dh0 is None:
        dh0 = q.new_empty(0, dtype=torch.float32)
    elif state_v_first:
        dh0 = dh0[..., :K, :V].transpose(-1, -2).contiguous()
    else:
        dh0 = dh0[..., :K, :V]
    return dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype), dg.to(g.dtype), dh0.to(torch.float32)


@_backward_op.register_fake
def _backward_fake(q, k, v, g, scale, initial_state, do, dhT, states, state_v_first, variant):
    _dims(q, k, v, g, initial_state, state_v_first)
    dh0 = torch.empty_like(initial_state) if initial_state is not None else q.new_empty(0, dtype=torch.float32)
    return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v), torch.empty_like(g), dh0


def _setup_context(ctx, inputs, output):
    q, k, v, g, scale, initial_state, output_final_state, state_v_first, variant = inputs
    states = output[2] if len(output) > 2 else q.new_empty(0, dtype=torch.bfloat16)
    ctx.save_for_backward(q, k, v, g, initial_state, states)
    ctx.scale, ctx.want_hT, ctx.state_v_first, ctx.variant = scale, output_final_state, state_v_first, variant


def _backward(ctx, do, dhT, *_):
    q, k, v, g, initial_state, states = ctx.saved_tensors
    if do is None:  # o did not reach the loss
        do = torch.zeros(q.shape[:-1] + v.shape[-1:], dtype=v.dtype, device=v.device)
    dhT = dhT.contiguous() if ctx.want_hT and dhT is not None and dhT.numel() else None
    _, plan = _plan_of(q, k, v, g, initial_state, ctx.state_v_first, ctx.variant)
    if _plan.gla_backward_on_kernels(plan):
        dq, dk, dv, dg, dh0 = _backward_op(q, k, v, g, ctx.scale, initial_state, do.contiguous(), dhT, states,
                                           ctx.state_v_first, ctx.variant)
    else:  # autograd through the general path (here, not in a custom op, where no graph is recorded)
        h0, dhT = _kv_first(initial_state, ctx.state_v_first), _kv_first(dhT, ctx.state_v_first)
        grads = _general_backward(q, k, v, g, ctx.scale, h0, do, dhT)
        dq, dk, dv, dg, dh0 = _as_inputs(q, k, v, g, *grads, ctx.state_v_first)
    return dq, dk, dv, dg, None, (dh0 if initial_state is not None else None), None, None, None


# torch.ops.overlap.chunk_gla differentiates too (recomputing the states in the backward); the
# backward op itself has no backward.
_op.register_autograd(_backward, setup_context=_setup_context)
_train_op.register_autograd(_backward, setup_context=_setup_context)
_common.register_no_backward(_backward_op, OP)


def _pad_last(x, size):
    return x if x.shape[-1] == size else F.pad(x, (0, size - x.shape[-1]))


def _pad_state(s, Kp, Vp):
    if s is None:
        return None
    K, V = s.shape[-2:]
    return (F.pad(s, (0, Vp - V, 0, Kp - K)) if (Kp, Vp) != (K, V) else s).to(torch.float32).contiguous()


def _kernel_inputs(plan, q, k, v, g):
    """bf16 q, k, v and fp32 g, zero-padded to the head sizes the plan's kernel has tiles for."""
    qb, kb = (_pad_last(_cuda.to_kernel_dtype(x), plan.K) for x in (q, k))
    vb = _pad_last(_cuda.to_kernel_dtype(v), plan.V)
    gf = _pad_last(g.to(torch.float32).contiguous(), plan.K)
    return qb, kb, vb, gf


def _backward_buffers(plan, q, k, v, g, do):
    """The backward kernels' inputs (q, k, v, g, do as _kernel_inputs pads them) and their dq, dk,
    dv, dg buffers [B, T, H, padded K or V]."""
    B, T, H = q.shape[:3]
    Kp, Vp, device = plan.K, plan.V, q.device
    inputs = (*_kernel_inputs(plan, q, k, v, g), _pad_last(_cuda.to_kernel_dtype(do), Vp))
    grads = (_cuda.output((B, T, H, Kp), torch.bfloat16, device), _cuda.output((B, T, H, Kp), torch.bfloat16, device),
             _cuda.output((B, T, H, Vp), torch.bfloat16, device), _cuda.output((B, T, H, Kp), torch.float32, device))
    return inputs, grads


def _kernel(plan, dims, q, k, v, g, scale, h0, want_hT, save_states):
    B, T, H, K, V = dims
    Kp, Vp = plan.K, plan.V
    device = q.device
    m = _cuda.kernels().m
    with torch.cuda.device(device):
        qb, kb, vb, gf = _kernel_inputs(plan, q, k, v, g)
        h0 = _pad_state(h0, Kp, Vp)
        o = _cuda.output((B, T, H, Vp), torch.bfloat16, device)
        hT = _cuda.output((B, H, Kp, Vp), torch.float32, device) if want_hT else None
        states = _cuda.output((B, H, -(-T // CHUNK), Kp, Vp), torch.bfloat16, device) if save_states else None
        ws = _cuda.workspace(m.gla_workspace_bytes(plan.variant, B, T, H, Kp, Vp), device)
        a = _cuda.address
        m.gla_forward(plan.variant, a(qb), a(kb), a(vb), a(gf), a(h0), a(o), a(hT), a(states), a(ws), B, T, H, Kp,
                      Vp, scale, _cuda.stream_of(device))
    return (*_unpadded(o, hT, v, K, V), states)


def _unpadded(o, hT, v, K, V):
    """The kernels' outputs cut back from the padded heads: o in v's dtype, hT [.., K, V] (or None)."""
    o = o[..., :V].to(v.dtype).contiguous()
    if hT is not None and hT.shape[-2:] != (K, V):
        hT = hT[..., :K, :V].contiguous()
    return o, hT


def _kernel_backward(plan, dims, q, k, v, g, scale, h0, do, dhT, states):
    """The backward kernels on the forward's zero-padded copies (padded channels carry zeros and
    a zero log-gate, so they change no real gradient); saved_states where the forward saved them."""
    B, T, H = dims[:3]
    Kp, Vp = plan.K, plan.V
    device = q.device
    m = _cuda.kernels().m
    variant = "saved_states" if states.numel() else "materialized"
    with torch.cuda.device(device):
        (qb, kb, vb, gf, dob), (dq, dk, dv, dg) = _backward_buffers(plan, q, k, v, g, do)
        h0, dhT = _pad_state(h0, Kp, Vp), _pad_state(dhT, Kp, Vp)
        dh0 = _cuda.output((B, H, Kp, Vp), torch.float32, device) if h0 is not None else None
        ws = _cuda.workspace(m.gla_backward_workspace_bytes(variant, B, T, H, Kp, Vp), device)
        a = _cuda.address
        m.gla_backward(variant, a(qb), a(kb), a(vb), a(gf), a(h0), a(dob), a(dhT), a(dq), a(dk), a(dv), a(dg),
                       a(dh0), a(states) if states.numel() else 0, a(ws), B, T, H, Kp, Vp, scale,
                       _cuda.stream_of(device))
    return dq, dk, dv, dg, dh0  # padded heads: _as_inputs cuts them back


def _general_backward(q, k, v, g, scale, h0, do, dhT):
    """The general path's gradients: its forward recomputed in fp32 (fp64 stays fp64) under autograd."""
    ct = torch.promote_types(q.dtype, torch.float32)
    with torch.enable_grad():
        leaves = [x.detach().to(ct).requires_grad_(True) for x in (q, k, v, g)]
        h = h0.detach().to(ct).requires_grad_(True) if h0 is not None else None
        o, hT = _general.chunk_gla(*leaves, scale, h, dhT is not None)
        outputs, seeds = [o], [do.to(o.dtype)]
        if dhT is not None:
            outputs.append(hT)
            seeds.append(dhT.to(hT.dtype))
        wrt = leaves + ([h] if h is not None else [])
        grads = torch.autograd.grad(outputs, wrt, seeds, allow_unused=True)
    grads = [torch.zeros_like(x) if d is None else d for x, d in zip(wrt, grads)]
    return grads[0], grads[1], grads[2], grads[3], (grads[4] if h is not None else None)
