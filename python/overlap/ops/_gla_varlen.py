"""chunk_gla's packed batches (cu_seqlens) on the variable-length kernels (cuda/gla/gla_varlen.hpp):
one launch for the whole batch rather than one per sequence. Registered as custom ops with fake
implementations and autograd, as the dense ops are (ops/_gla.py):

  overlap::chunk_gla_varlen           the forward (o, one final state per sequence)
  overlap::chunk_gla_varlen_train     the forward that also saves each chunk's state
  overlap::chunk_gla_varlen_backward  dq, dk, dv, dg, dh0 from do and d(final states)

Only pingpong_fused has a variable-length forward; ops/_gla.py sends a packed call here when the
plan picks it (and, where a graph is recorded, when the backward kernels have tiles for the padded
heads), and runs the other calls one sequence at a time.
"""
from typing import Optional, Tuple

import torch

from . import _common, _cuda, _plan

VARIANT = "pingpong_fused"
CHUNK = 64  # the kernels' chunk: at most (T + 63 N) / 64 chunk states for N sequences


def usable(plan, needs_grad):
    """Whether a packed call with this plan runs here."""
    kernels = _cuda.kernels()
    return (plan.variant == VARIANT and kernels is not None and hasattr(kernels.m, "gla_forward_varlen")
            and (not needs_grad or _plan.gla_backward_on_kernels(plan)))


def chunk_gla_varlen(q, k, v, g, cu, scale, initial_state, output_final_state, state_v_first, needs_grad):
    """o [1, T, H, V] and the final states [N, ...] (None unless output_final_state). cu: int32 on
    q's device, N + 1 offsets, already checked."""
    args = (q, k, v, g, cu, float(scale), initial_state, bool(output_final_state), bool(state_v_first))
    if needs_grad:
        o, final_state, _ = _train_op(*args)
    else:
        o, final_state = _op(*args)
    return o, (final_state if output_final_state else None)


def _plan_of(q, v):
    """The dense op's plan for the packed batch (its head padding)."""
    _, T, H, K = q.shape
    return _plan.gla((1, T, H, K, v.shape[-1]), _common.facts(q).dtype, q.device.type, VARIANT, _cuda.kernels(),
                     _common.model_variants("gla"))


def _forward(q, k, v, g, cu, scale, initial_state, output_final_state, state_v_first, save_states):
    from ._gla import _kernel_inputs, _kv_first, _op_outputs, _pad_state, _unpadded
    _, T, H, K = q.shape
    V, N = v.shape[-1], cu.numel() - 1
    plan = _plan_of(q, v)
    Kp, Vp = plan.K, plan.V
    device = q.device
    m = _cuda.kernels().m
    with torch.cuda.device(device):
        qb, kb, vb, gf = _kernel_inputs(plan, q, k, v, g)
        h0 = _pad_state(_kv_first(initial_state, state_v_first), Kp, Vp)
        o = _cuda.output((1, T, H, Vp), torch.bfloat16, device)
        hT = _cuda.output((N, H, Kp, Vp), torch.float32, device) if output_final_state else None
        states = None
        if save_states:
            states = _cuda.output(((T + (CHUNK - 1) * N) // CHUNK, H, Kp, Vp), torch.bfloat16, device)
            # The sequences fill fewer than N rows short of the bound; the rest is zeroed so that
            # the output is defined (what the kernel writes it overwrites).
            states[-min(N, states.shape[0]):].zero_()
        ws = _cuda.workspace(m.gla_varlen_workspace_bytes("", N, T, H, Kp, Vp), device)
        a = _cuda.address
        m.gla_forward_varlen(VARIANT, a(qb), a(kb), a(vb), a(gf), a(h0), a(o), a(hT), a(states), a(ws), a(cu), N, T,
                             H, Kp, Vp, scale, _cuda.stream_of(device))
    o, hT = _unpadded(o, hT, v, K, V)
    return _op_outputs(q, o, hT, states, output_final_state, state_v_first)


@torch.library.custom_op("overlap::chunk_gla_varlen", mutates_args=())
def _op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor, cu_seqlens: torch.Tensor, scale: float,
        initial_state: Optional[torch.Tensor], output_final_state: bool,
        state_v_first: bool) -> Tuple[torch.Tensor, torch.Tensor]:
    o, hT, _ = _forward(q, k, v, g, cu_seqlens, scale, initial_state, output_final_state, state_v_first, False)
    return o, hT


@torch.library.custom_op("overlap::chunk_gla_varlen_train", mutates_args=())
def _train_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor, cu_seqlens: torch.Tensor,
              scale: float, initial_state: Optional[torch.Tensor], output_final_state: bool,
              state_v_first: bool) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return _forward(q, k, v, g, cu_seqlens, scale, initial_state, output_final_state, state_v_first, True)


def _fake_outputs(q, v, cu, output_final_state, state_v_first, save_states):
    _, T, H, K = q.shape
    V, N = v.shape[-1], cu.shape[0] - 1
    plan = _plan_of(q, v)
    state = (N, H, V, K) if state_v_first else (N, H, K, V)
    hT = q.new_empty(state if output_final_state else (0,), dtype=torch.float32)
    states = q.new_empty(((T + (CHUNK - 1) * N) // CHUNK, H, plan.K, plan.V) if save_states else (0,),
                         dtype=torch.bfloat16)
    return v.new_empty(1, T, H, V), hT, states


@_op.register_fake
def _fake(q, k, v, g, cu_seqlens, scale, initial_state, output_final_state, state_v_first):
    return _fake_outputs(q, v, cu_seqlens, output_final_state, state_v_first, False)[:2]


@_train_op.register_fake
def _train_fake(q, k, v, g, cu_seqlens, scale, initial_state, output_final_state, state_v_first):
    return _fake_outputs(q, v, cu_seqlens, output_final_state, state_v_first, True)


@torch.library.custom_op("overlap::chunk_gla_varlen_backward", mutates_args=())
def _backward_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor, cu_seqlens: torch.Tensor,
                 scale: float, initial_state: Optional[torch.Tensor], do: torch.Tensor, dhT: Optional[torch.Tensor],
                 states: torch.Tensor,
                 state_v_first: bool) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """dq, dk, dv, dg in the inputs' dtypes and dh0 (like initial_state, or empty without it);
    states: what chunk_gla_varlen_train saved (empty: the kernels recompute them)."""
    from ._gla import _as_inputs, _backward_buffers, _kv_first, _pad_state
    _, T, H, K = q.shape
    V, N = v.shape[-1], cu_seqlens.numel() - 1
    plan = _plan_of(q, v)
    if not _plan.gla_backward_on_kernels(plan):
        raise ValueError(f"chunk_gla_varlen_backward: no backward kernel runs K={K}, V={V} (padded to {plan.K}, "
                         f"{plan.V}); differentiate chunk_gla instead")
    Kp, Vp = plan.K, plan.V
    device = q.device
    m = _cuda.kernels().m
    variant = "saved_states" if states.numel() else "materialized"
    with torch.cuda.device(device):
        (qb, kb, vb, gf, dob), (dq, dk, dv, dg) = _backward_buffers(plan, q, k, v, g, do)
        h0 = _pad_state(_kv_first(initial_state, state_v_first), Kp, Vp)
        dhT = _pad_state(_kv_first(dhT, state_v_first), Kp, Vp)
        dh0 = _cuda.output((N, H, Kp, Vp), torch.float32, device) if h0 is not None else None
        ws = _cuda.workspace(m.gla_varlen_workspace_bytes(variant, N, T, H, Kp, Vp), device)
        a = _cuda.address
        m.gla_backward_varlen(variant, a(qb), a(kb), a(vb), a(gf), a(h0), a(dob), a(dhT), a(dq), a(dk), a(dv), a(dg),
                              a(dh0), a(states) if states.numel() else 0, a(ws), a(cu_seqlens), N, T, H, Kp, Vp,
                              scale, _cuda.stream_of(device))
    return _as_inputs(q, k, v, g, dq, dk, dv, dg, dh0, state_v_first)


@_backward_op.register_fake
def _backward_fake(q, k, v, g, cu_seqlens, scale, initial_state, do, dhT, states, state_v_first):
    dh0 = torch.empty_like(initial_state) if initial_state is not None else q.new_empty(0, dtype=torch.float32)
    return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v), torch.empty_like(g), dh0


def _setup_context(ctx, inputs, output):
    q, k, v, g, cu, scale, initial_state, output_final_state, state_v_first = inputs
    states = output[2] if len(output) > 2 else q.new_empty(0, dtype=torch.bfloat16)
    ctx.save_for_backward(q, k, v, g, cu, initial_state, states)
    ctx.scale, ctx.want_hT, ctx.state_v_first = scale, output_final_state, state_v_first


def _backward(ctx, do, dhT, *_):
    q, k, v, g, cu, initial_state, states = ctx.saved_tensors
    if do is None:  # o did not reach the loss
        do = torch.zeros(q.shape[:-1] + v.shape[-1:], dtype=v.dtype, device=v.device)
    dhT = dhT.contiguous() if ctx.want_hT and dhT is not None and dhT.numel() else None
    dq, dk, dv, dg, dh0 = _backward_op(q, k, v, g, cu, ctx.scale, initial_state, do.contiguous(), dhT, states,
                                       ctx.state_v_first)
    return dq, dk, dv, dg, None, None, (dh0 if initial_state is not None else None), None, None


_op.register_autograd(_backward, setup_context=_setup_context)
_train_op.register_autograd(_backward, setup_context=_setup_context)
_common.register_no_backward(_backward_op, "chunk_gla")
