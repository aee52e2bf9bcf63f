"""float64 oracles of the ops for the torch tests: each workload's definition step by step (SPEC),
not the chunked algorithm the ops use, on the inputs as the op read them (rounded to their dtype).
Also random inputs and the relative error the project checks with."""
import torch
import torch.nn.functional as F

F64 = torch.float64


def rel_error(out, ref):
    """||out - ref|| / ||ref|| in float64; NaN (an unwritten or non-finite element) fails any bound."""
    out, ref = out.to(F64), ref.to(F64)
    return float(torch.linalg.vector_norm(out - ref) / torch.linalg.vector_norm(ref))


def gla(q, k, v, g, scale, h0):
    """S_t = diag(exp g_t) S_{t-1} + k_t v_t^T, o_t = scale S_t^T q_t: (o [B,T,H,V], S_T [B,H,K,V])."""
    q, k, v, g = (x.to(F64) for x in (q, k, v, g))
    B, T, H, K = q.shape
    S = h0.to(F64).clone() if h0 is not None else q.new_zeros(B, H, K, v.shape[-1])
    o = []
    for t in range(T):
        S = torch.exp(g[:, t]).unsqueeze(-1) * S + k[:, t].unsqueeze(-1) * v[:, t].unsqueeze(-2)
        o.append(scale * torch.einsum("bhk,bhkv->bhv", q[:, t], S))
    return torch.stack(o, dim=1), S


def gla_grads(q, k, v, g, scale, h0, do, dhT):
    """The gradients of gla() for q, k, v, g, h0 (float64, torch autograd through the recurrence)
    given those of o and S_T; h0 and dhT may be None."""
    leaves = [x.detach().to(F64).requires_grad_(True) for x in (q, k, v, g)]
    h = h0.detach().to(F64).requires_grad_(True) if h0 is not None else None
    o, S = gla(*leaves, scale, h)
    outputs, seeds = [o], [do.to(F64)]
    if dhT is not None:
        outputs.append(S)
        seeds.append(dhT.to(F64))
    grads = torch.autograd.grad(outputs, leaves + ([h] if h is not None else []), seeds)
    return tuple(grads) + ((None,) if h is None else ())


def linrnn(x, weight, h0):
    """u, a_pre, z = x W^T; h_t = a_t h_{t-1} + (1 - a_t) u_t; y_t = h_t silu(z_t): (y, h_T)."""
    dv = weight.shape[0] // 3
    u, a_pre, z = (x.to(F64) @ weight.to(F64).t()).split(dv, dim=-1)
    a = torch.sigmoid(a_pre)
    h = h0.to(F64) if h0 is not None else x.new_zeros(x.shape[0], dv, dtype=F64)
    ys = []
    for t in range(x.shape[1]):
        h = a[:, t] * h + (1 - a[:, t]) * u[:, t]
        ys.append(h * F.silu(z[:, t]))
    return torch.stack(ys, dim=1), h


def projchain(x, w_q, w_k, w_v, w_g, w_alpha):
    H = w_alpha.shape[0]
    dk = w_q.shape[0] // H
    x = x.to(F64)
    heads = x.shape[:-1] + (H, dk)
    k = (x @ w_k.to(F64).t()).view(heads)
    k = k / k.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    return ((x @ w_q.to(F64).t()).view(heads), k, (x @ w_v.to(F64).t()).view(heads),
            F.silu(x @ w_g.to(F64).t()).view(heads), torch.sigmoid(x @ w_alpha.to(F64).t()))


def dual_gemm(a, b1, b2, scale_a=None, scale_b1=None, scale_b2=None):
    """silu(a b1^T) * (a b2^T) in float64 from the operands' values (fp8 codes times their scales)."""
    def value(x, s):
        x = x.to(F64)
        return x if s is None else x * (s.to(F64).reshape(-1, 1) if s.numel() > 1 else s.to(F64))
    x = value(a.reshape(-1, a.shape[-1]), scale_a)
    c = F.silu(x @ value(b1, scale_b1).t()) * (x @ value(b2, scale_b2).t())
    return c.reshape(tuple(a.shape[:-1]) + (b1.shape[0],))


def gla_inputs(B, T, H, K, V, dtype, device, gate_scale=16.0, seed=0):
    """q, k, v ~ N(0,1) in dtype; g = logsigmoid(N(0,1)) / gate_scale in fp32 (0.1: strong gates,
    median -6.9 per step); h0 ~ 0.1 N(0,1) fp32 — the test vectors' distributions."""
    gen = torch.Generator(device="cpu").manual_seed(seed)

    def randn(*shape):
        return torch.randn(*shape, generator=gen)

    q, k = randn(B, T, H, K).to(dtype), randn(B, T, H, K).to(dtype)
    v = randn(B, T, H, V).to(dtype)
    g = F.logsigmoid(randn(B, T, H, K)) / gate_scale
    h0 = 0.1 * randn(B, H, K, V)
    return tuple(x.to(device) for x in (q, k, v, g, h0))


def linear_weight(out_features, in_features, dtype, device, gen):
    """nn.Linear's weight [out, in] ~ N(0,1)/sqrt(in)."""
    return (torch.randn(out_features, in_features, generator=gen) / in_features ** 0.5).to(dtype).to(device)
