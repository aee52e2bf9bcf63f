"""The general path of every op (variant "torch"): the chunked algorithms in plain torch, in fp32
(fp64 stays fp64), on any device, for every shape. Slower than the kernels, and exact where they
round: it serves fp32 inputs, head sizes the kernels have no tile for, CPU tensors, and GPUs the
kernels were not built for.

Decays are formed only as exp(b_i - b_j) with j <= i inside a chunk (never exp(b_i) * exp(-b_j)),
so the exponent is never positive and nothing overflows, however strong the gates (SPEC, gla
numerics)."""
import torch
import torch.nn.functional as F

CHUNK = 32  # the [chunk, chunk, channels] decay tensors stay small at this length


def _compute_dtype(t):
    return torch.promote_types(t.dtype, torch.float32)


def _causal_decay(b):
    """exp(b_i - b_j) for j <= i, else 0: [..., n, n, C] from inclusive cumulative log-decays [..., n, C]."""
    n = b.shape[-2]
    diff = b.unsqueeze(-2) - b.unsqueeze(-3)
    causal = torch.ones(n, n, dtype=torch.bool, device=b.device).tril().unsqueeze(-1)
    return torch.exp(diff.masked_fill(~causal, float("-inf")))


def chunk_gla(q, k, v, g, scale, h0, want_hT):
    """o [B,T,H,V] in v's dtype and hT [B,H,K,V] (fp32 or fp64) or None; SPEC section 1's chunked form."""
    B, T, H, K = q.shape
    V = v.shape[-1]
    ct, out_dtype = _compute_dtype(q), v.dtype
    # [B, H, T, *]: one (b, h) sequence per leading index pair.
    q, k, v, g = (x.to(ct).transpose(1, 2) for x in (q, k, v, g))
    S = h0.to(ct).clone() if h0 is not None else q.new_zeros(B, H, K, V)
    o = torch.empty(B, H, T, V, dtype=ct, device=q.device)
    for t0 in range(0, T, CHUNK):
        t1 = min(T, t0 + CHUNK)
        qc, kc, vc = q[:, :, t0:t1], k[:, :, t0:t1], v[:, :, t0:t1]
        b = g[:, :, t0:t1].cumsum(-2)  # b_i = sum of g over the chunk up to i, <= 0
        inter = (qc * torch.exp(b)) @ S
        A = torch.einsum("bhik,bhjk,bhijk->bhij", qc, kc, _causal_decay(b))
        o[:, :, t0:t1] = scale * (inter + A @ vc)
        last = b[:, :, -1:]
        S = torch.exp(last).transpose(-1, -2) * S + (kc * torch.exp(last - b)).transpose(-1, -2) @ vc
    return o.transpose(1, 2).to(out_dtype).contiguous(), (S if want_hT else None)


def linrnn(x, weight, h0, want_hT):
    """y [B,T,dv] in x's dtype and hT [B,dv] (fp32 or fp64) or None, from nn.Linear's weight [3dv, d]."""
    B, T, _ = x.shape
    dv = weight.shape[0] // 3
    ct = _compute_dtype(x)
    u, a_pre, z = (x.to(ct) @ weight.to(ct).t()).split(dv, dim=-1)
    # h_t = a_t h_{t-1} + (1 - a_t) u_t with a_t = sigmoid(a_pre): log a_t = logsigmoid(a_pre) <= 0.
    log_a = F.logsigmoid(a_pre)
    w = torch.sigmoid(-a_pre) * u
    h = h0.to(ct) if h0 is not None else x.new_zeros(B, dv, dtype=ct)
    hs = torch.empty(B, T, dv, dtype=ct, device=x.device)
    for t0 in range(0, T, CHUNK):
        t1 = min(T, t0 + CHUNK)
        L = log_a[:, t0:t1].cumsum(1)
        hc = torch.einsum("bijc,bjc->bic", _causal_decay(L), w[:, t0:t1]) + torch.exp(L) * h.unsqueeze(1)
        hs[:, t0:t1] = hc
        h = hc[:, -1]
    return (hs * F.silu(z)).to(x.dtype), (h.clone() if want_hT else None)  # h: a view into hs


def projchain(x, w_q, w_k, w_v, w_g, w_alpha, H, dk):
    """q, k, v, g [..., H, dk] and alpha [..., H] in x's dtype, from nn.Linear weights [out, d]."""
    ct = _compute_dtype(x)
    xc = x.to(ct)
    heads = x.shape[:-1] + (H, dk)

    def proj(w):
        return xc @ w.to(ct).t()

    q = proj(w_q).view(heads)
    k = F.normalize(proj(w_k).view(heads), dim=-1, eps=1e-12)  # the reference's per-head L2 norm
    v = proj(w_v).view(heads)
    g = F.silu(proj(w_g)).view(heads)
    alpha = torch.sigmoid(proj(w_alpha))
    return tuple(t.to(x.dtype) for t in (q, k, v, g, alpha))



def _scaled(x, s):
    """x (rows x K, compute dtype) times its fp8 scale: one number, or one per row."""
    if s is None:
        return x
    return x * (s.reshape(-1, 1) if s.numel() > 1 else s.reshape(())).to(x.dtype)


def dual_gemm(a, b1, b2, scale_a, scale_b1, scale_b2):
    """silu(a b1^T) * (a b2^T) [..., N] in fp32 (fp64 stays fp64); fp8 operands times their scales."""
    ct = torch.float32 if a.dtype == torch.float8_e4m3fn else _compute_dtype(a)
    x = _scaled(a.reshape(-1, a.shape[-1]).to(ct), scale_a)
    y1 = x @ _scaled(b1.to(ct), scale_b1).t()
    y2 = x @ _scaled(b2.to(ct), scale_b2).t()
    return (F.silu(y1) * y2).reshape(tuple(a.shape[:-1]) + (b1.shape[0],))
