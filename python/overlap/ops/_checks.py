"""Argument checks of the ops, without torch: each takes what the torch layer read off a tensor
(`Facts`: shape, dtype name, device, contiguity) and refuses with an exception that names the op,
the argument and its value, so the message says what to fix without reading the source. Kept
free of torch so that CI, which has no torch, tests every refusal (tests/python/test_ops_checks.py).

The ops run these in their fake (meta) implementations too, so torch.compile refuses bad input
while tracing, before anything is launched."""
import math
from collections import namedtuple

# What the checks need of a tensor; the torch layer fills it (ops/_torch_facts.py).
Facts = namedtuple("Facts", "shape dtype device contiguous")

FLOAT_DTYPES = ("bfloat16", "float16", "float32")
# Issue 18 (GLA training) brings gradients and variable-length batches.
NOT_YET = "arrives with issue 18 (GLA training)"


def dims(op, name, x, layout):
    """x must have as many dims as `layout` names, e.g. "[B, T, H, K]"."""
    n = layout.count(",") + 1
    if len(x.shape) != n:
        raise ValueError(f"{op}: {name} must be {layout} ({n} dims), got shape {tuple(x.shape)}")


def float_dtype(op, name, x, allowed=FLOAT_DTYPES):
    if x.dtype not in allowed:
        raise TypeError(f"{op}: {name} has dtype {x.dtype}; expected one of {', '.join(allowed)}")


def nonempty(op, name, x):
    if any(n == 0 for n in x.shape):
        raise ValueError(f"{op}: {name} has a zero-size dimension, shape {tuple(x.shape)}")


def contiguous(op, name, x):
    if not x.contiguous:
        raise ValueError(f"{op}: {name} is not contiguous (shape {tuple(x.shape)}); pass {name}.contiguous()")


def input_tensor(op, name, x, layout, allowed=FLOAT_DTYPES):
    """The checks every tensor argument takes: rank, a float dtype, no zero-size dim, contiguous."""
    dims(op, name, x, layout)
    float_dtype(op, name, x, allowed)
    nonempty(op, name, x)
    contiguous(op, name, x)


def shape(op, name, x, expected, why):
    if tuple(x.shape) != tuple(expected):
        raise ValueError(f"{op}: {name} has shape {tuple(x.shape)}, expected {tuple(expected)} ({why})")


def same_dtype(op, tensors):
    """Every tensor of {name: Facts} in the dtype of the first (the kernels read one input dtype)."""
    (first_name, first), *rest = tensors.items()
    for name, x in rest:
        if x.dtype != first.dtype:
            raise TypeError(f"{op}: {name} has dtype {x.dtype} but {first_name} has {first.dtype}; "
                            f"pass them in one dtype")


def same_device(op, tensors):
    """Every tensor of {name: Facts or None} on the device of the first."""
    present = [(n, x) for n, x in tensors.items() if x is not None]
    first_name, first = present[0]
    for name, x in present[1:]:
        if x.device != first.device:
            raise ValueError(f"{op}: {name} is on {x.device} but {first_name} is on {first.device}")


def positive_scale(op, scale):
    # The kernels read scale <= 0 as "the default", so a non-positive scale is refused rather than
    # silently replaced.
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale) or scale <= 0:
        raise ValueError(f"{op}: scale={scale!r} must be a positive finite number (or None for K^-1/2)")


def variant_name(op, variant, known):
    if variant is None:
        return
    if not isinstance(variant, str) or variant not in known:
        raise ValueError(f"{op}: unknown variant={variant!r} (known: None = the fastest that runs the shape, "
                         f"{', '.join(known)})")


def not_implemented(op, name, what):
    """Refuses what the ops do not do yet: `name` is the argument, `what` the feature."""
    raise NotImplementedError(f"{op}: {name}: {what} is not supported yet; it {NOT_YET}")


def gla(q, k, v, g, initial_state, state_v_first):
    """chunk_gla's arguments (flash-linear-attention's layout): (B, T, H, K, V)."""
    op = "chunk_gla"
    for name, x, layout in (("q", q, "[B, T, H, K]"), ("k", k, "[B, T, H, K]"), ("v", v, "[B, T, H, V]"),
                            ("g", g, "[B, T, H, K]")):
        input_tensor(op, name, x, layout)
    B, T, H, K = q.shape
    V = v.shape[3]
    shape(op, "k", k, q.shape, "k is laid out as q: [B, T, H, K]")
    shape(op, "g", g, q.shape, "one log forget gate per key channel: [B, T, H, K] as q")
    shape(op, "v", v, (B, T, H, V), "v shares q's B, T and H")
    same_dtype(op, {"q": q, "k": k, "v": v})
    if initial_state is not None:
        # flash-linear-attention asserts fp32 too: the state is carried in fp32.
        input_tensor(op, "initial_state", initial_state, "[B, H, K, V]", allowed=("float32",))
        expected = (B, H, V, K) if state_v_first else (B, H, K, V)
        shape(op, "initial_state", initial_state, expected,
              "[B, H, V, K] with state_v_first=True" if state_v_first else "[B, H, K, V]")
    same_device(op, {"q": q, "k": k, "v": v, "g": g, "initial_state": initial_state})
    return B, T, H, K, V


INDEX_DTYPES = ("int32", "int64")


def gla_varlen(cu_seqlens, offsets, B, T):
    """cu_seqlens (flash-linear-attention's packed batch: sequence i is steps offsets[i] to
    offsets[i+1] of the one batch row) against q's B and T: the sequence count N."""
    op = "chunk_gla"
    dims(op, "cu_seqlens", cu_seqlens, "[N + 1]")
    if cu_seqlens.dtype not in INDEX_DTYPES:
        raise TypeError(f"{op}: cu_seqlens has dtype {cu_seqlens.dtype}; expected one of {', '.join(INDEX_DTYPES)}")
    if B != 1:
        raise ValueError(f"{op}: with cu_seqlens the sequences are packed along T of one batch row: q must have "
                         f"B = 1, got B = {B}")
    if len(offsets) < 2:
        raise ValueError(f"{op}: cu_seqlens must hold at least two offsets (one sequence), got {list(offsets)}")
    if offsets[0] != 0 or offsets[-1] != T:
        raise ValueError(f"{op}: cu_seqlens must run from 0 to T = {T}, got {offsets[0]} to {offsets[-1]}")
    for i in range(len(offsets) - 1):
        if offsets[i + 1] < offsets[i]:
            raise ValueError(f"{op}: cu_seqlens must not decrease: cu_seqlens[{i + 1}] = {offsets[i + 1]} < "
                             f"cu_seqlens[{i}] = {offsets[i]}")
    return len(offsets) - 1


def gla_varlen_state(initial_state, N, H, K, V, state_v_first):
    """initial_state of a packed batch: one state per sequence."""
    op = "chunk_gla"
    input_tensor(op, "initial_state", initial_state, "[N, H, K, V]", allowed=("float32",))
    expected = (N, H, V, K) if state_v_first else (N, H, K, V)
    shape(op, "initial_state", initial_state, expected, "one state per sequence of cu_seqlens")


def linrnn(x, weight, initial_state):
    """linrnn's arguments; weight is nn.Linear(d, 3 dv)'s, rows [u; a; z]: (B, T, d, dv)."""
    op = "linrnn"
    input_tensor(op, "x", x, "[B, T, d]")
    input_tensor(op, "weight", weight, "[3 dv, d]")
    B, T, d = x.shape
    rows, d_w = weight.shape
    if d_w != d or rows % 3 != 0:
        raise ValueError(f"linrnn: weight has shape {tuple(weight.shape)}, expected (3 dv, {d}) "
                         "(nn.Linear(d, 3 dv).weight: rows u, a, z; columns x's d)")
    dv = rows // 3
    same_dtype(op, {"x": x, "weight": weight})
    if initial_state is not None:
        input_tensor(op, "initial_state", initial_state, "[B, dv]", allowed=("float32",))
        shape(op, "initial_state", initial_state, (B, dv), "one fp32 state per batch row and channel")
    same_device(op, {"x": x, "weight": weight, "initial_state": initial_state})
    return B, T, d, dv


def projchain(x, w_q, w_k, w_v, w_g, w_alpha):
    """projchain's arguments (nn.Linear weights [out, in]): (N, d, H, dk); x is [..., d]."""
    op = "projchain"
    if len(x.shape) not in (2, 3):
        raise ValueError(f"projchain: x must be [N, d] or [B, T, d], got shape {tuple(x.shape)}")
    input_tensor(op, "x", x, "[N, d]" if len(x.shape) == 2 else "[B, T, d]")
    d = x.shape[-1]
    input_tensor(op, "w_alpha", w_alpha, "[H, d]")
    H = w_alpha.shape[0]
    shape(op, "w_alpha", w_alpha, (H, d), "nn.Linear(d, H).weight")
    input_tensor(op, "w_q", w_q, "[H dk, d]")
    if w_q.shape[0] % H != 0:
        raise ValueError(f"projchain: w_q has {w_q.shape[0]} rows, not a multiple of H = {H} (w_alpha's rows)")
    dk = w_q.shape[0] // H
    for name, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v), ("w_g", w_g)):
        input_tensor(op, name, w, "[H dk, d]")
        shape(op, name, w, (H * dk, d), "nn.Linear(d, H dk).weight")
    weights = {"x": x, "w_q": w_q, "w_k": w_k, "w_v": w_v, "w_g": w_g, "w_alpha": w_alpha}
    same_dtype(op, weights)
    same_device(op, weights)
    N = math.prod(x.shape[:-1])
    return N, d, H, dk


FP8_DTYPES = ("float8_e4m3fn",)


def dual_gemm(a, b1, b2, scale_a, scale_b1, scale_b2):
    """dual_gemm's arguments: a [..., K] (or [M, K]), b1 and b2 nn.Linear(K, N) weights [N, K]; fp8
    (float8_e4m3fn) operands need fp32 scales, a number's worth per tensor (shape ()) or one per
    row (a: [M], b: [N]). Returns (M, N, K, fp8)."""
    op = "dual_gemm"
    fp8 = a.dtype in FP8_DTYPES
    allowed = FLOAT_DTYPES + FP8_DTYPES
    if len(a.shape) < 2:
        raise ValueError(f"dual_gemm: a must be [M, K] or [..., K], got shape {tuple(a.shape)}")
    input_tensor(op, "a", a, "[" + ", ".join(["..."] * (len(a.shape) - 1)) + ", K]", allowed)
    K = a.shape[-1]
    for name, b in (("b1", b1), ("b2", b2)):
        input_tensor(op, name, b, "[N, K]", allowed)
    N = b1.shape[0]
    shape(op, "b1", b1, (N, K), "nn.Linear(K, N).weight: a's K columns")
    shape(op, "b2", b2, (N, K), "b2 is laid out as b1")
    same_dtype(op, {"a": a, "b1": b1, "b2": b2})
    M = math.prod(a.shape[:-1])
    scales = {"scale_a": (scale_a, M), "scale_b1": (scale_b1, N), "scale_b2": (scale_b2, N)}
    if fp8:
        for name, (s, rows) in scales.items():
            if s is None:
                raise ValueError(f"dual_gemm: fp8 operands need {name} (fp32, shape () or ({rows},))")
            float_dtype(op, name, s, ("float32",))
            if tuple(s.shape) not in ((), (1,), (rows,)):
                raise ValueError(f"dual_gemm: {name} has shape {tuple(s.shape)}, expected () or ({rows},) "
                                 "(one scale per tensor or per row)")
    else:
        for name, (s, _) in scales.items():
            if s is not None:
                raise ValueError(f"dual_gemm: {name} is only for fp8 operands; a is {a.dtype}")
    same_device(op, {"a": a, "b1": b1, "b2": b2, "scale_a": scale_a, "scale_b1": scale_b1, "scale_b2": scale_b2})
    return M, N, K, fp8
