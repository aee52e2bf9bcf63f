"""overlap.ops without torch: every argument check names the argument and the value, and the choice
of kernel (or the general torch path) follows ops/_plan.py's rules. Tensors are described by
Facts, as the torch layer describes them; the CUDA build by a stub with its answers."""
import subprocess
import sys

import pytest

from overlap.ops import _checks, _plan
from overlap.ops._checks import Facts

BF16, F32 = "bfloat16", "float32"


def t(*shape, dtype=BF16, device="cuda:0", contiguous=True):
    return Facts(tuple(shape), dtype, device, contiguous)


def gla_args(B=2, T=70, H=3, K=64, V=64, **over):
    args = dict(q=t(B, T, H, K), k=t(B, T, H, K), v=t(B, T, H, V), g=t(B, T, H, K, dtype=F32),
                initial_state=t(B, H, K, V, dtype=F32), state_v_first=False)
    args.update(over)
    return args


def test_import_needs_no_torch():
    code = ("import sys, overlap.ops, overlap.ops._checks, overlap.ops._plan; "
            "assert 'torch' not in sys.modules, 'overlap.ops imported torch'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_gla_dims():
    assert _checks.gla(**gla_args()) == (2, 70, 3, 64, 64)
    assert _checks.gla(**gla_args(initial_state=None)) == (2, 70, 3, 64, 64)
    assert _checks.gla(**gla_args(V=24, initial_state=t(2, 3, 24, 64, dtype=F32), state_v_first=True)) == \
        (2, 70, 3, 64, 24)


@pytest.mark.parametrize("over, error, words", [
    (dict(q=t(2, 70, 64)), ValueError, ["q must be [B, T, H, K]", "(2, 70, 64)"]),
    (dict(k=t(2, 70, 3, 32)), ValueError, ["k has shape (2, 70, 3, 32)", "expected (2, 70, 3, 64)"]),
    (dict(g=t(2, 71, 3, 64, dtype=F32)), ValueError, ["g has shape (2, 71, 3, 64)"]),
    (dict(v=t(2, 70, 4, 64)), ValueError, ["v has shape (2, 70, 4, 64)", "expected (2, 70, 3, 64)"]),
    (dict(q=t(2, 70, 3, 64, dtype="int32")), TypeError, ["q has dtype int32"]),
    (dict(v=t(2, 70, 3, 64, dtype="float16")), TypeError, ["v has dtype float16 but q has bfloat16"]),
    (dict(q=t(2, 70, 3, 64, contiguous=False)), ValueError, ["q is not contiguous", "q.contiguous()"]),
    (dict(q=t(2, 0, 3, 64), k=t(2, 0, 3, 64), v=t(2, 0, 3, 64), g=t(2, 0, 3, 64, dtype=F32)), ValueError,
     ["q has a zero-size dimension", "(2, 0, 3, 64)"]),
    (dict(initial_state=t(2, 3, 64, 64)), TypeError, ["initial_state has dtype bfloat16", "float32"]),
    (dict(initial_state=t(2, 3, 64, 32, dtype=F32)), ValueError, ["initial_state has shape (2, 3, 64, 32)"]),
    (dict(state_v_first=True, V=32, initial_state=t(2, 3, 64, 32, dtype=F32)), ValueError,
     ["initial_state has shape (2, 3, 64, 32)", "expected (2, 3, 32, 64)", "state_v_first=True"]),
    (dict(g=t(2, 70, 3, 64, dtype=F32, device="cpu")), ValueError, ["g is on cpu but q is on cuda:0"]),
])
def test_gla_refusals_name_argument_and_value(over, error, words):
    with pytest.raises(error) as e:
        _checks.gla(**gla_args(**over))
    for w in words:
        assert w in str(e.value), (w, str(e.value))
    assert str(e.value).startswith("chunk_gla: ")


@pytest.mark.parametrize("scale", [0, -1.0, float("nan"), float("inf"), True, "0.1"])
def test_scale_refused(scale):
    with pytest.raises(ValueError, match=r"chunk_gla: scale=.* must be a positive finite number"):
        _checks.positive_scale("chunk_gla", scale)


def test_not_implemented_names_issue_18():
    with pytest.raises(NotImplementedError, match="chunk_gla: cu_seqlens: variable-length batches .* issue 18"):
        _checks.not_implemented("chunk_gla", "cu_seqlens", "variable-length batches")


def test_linrnn_checks():
    assert _checks.linrnn(t(2, 9, 16), t(24, 16), t(2, 8, dtype=F32)) == (2, 9, 16, 8)
    with pytest.raises(ValueError, match=r"linrnn: weight has shape \(25, 16\), expected \(3 dv, 16\)"):
        _checks.linrnn(t(2, 9, 16), t(25, 16), None)
    with pytest.raises(ValueError, match=r"linrnn: weight has shape \(24, 15\)"):
        _checks.linrnn(t(2, 9, 16), t(24, 15), None)
    with pytest.raises(ValueError, match=r"linrnn: initial_state has shape \(2, 9\), expected \(2, 8\)"):
        _checks.linrnn(t(2, 9, 16), t(24, 16), t(2, 9, dtype=F32))
    with pytest.raises(TypeError, match="linrnn: weight has dtype float32 but x has bfloat16"):
        _checks.linrnn(t(2, 9, 16), t(24, 16, dtype=F32), None)
    with pytest.raises(ValueError, match=r"linrnn: x must be \[B, T, d\] \(3 dims\), got shape \(9, 16\)"):
        _checks.linrnn(t(9, 16), t(24, 16), None)


def test_projchain_checks():
    w = t(2 * 8, 16)
    assert _checks.projchain(t(2, 5, 16), w, w, w, w, t(2, 16)) == (10, 16, 2, 8)
    assert _checks.projchain(t(10, 16), w, w, w, w, t(2, 16)) == (10, 16, 2, 8)
    with pytest.raises(ValueError, match=r"projchain: x must be \[N, d\] or \[B, T, d\], got shape \(16,\)"):
        _checks.projchain(t(16), w, w, w, w, t(2, 16))
    with pytest.raises(ValueError, match=r"projchain: w_q has 15 rows, not a multiple of H = 2"):
        _checks.projchain(t(10, 16), t(15, 16), w, w, w, t(2, 16))
    with pytest.raises(ValueError, match=r"projchain: w_v has shape \(16, 17\), expected \(16, 16\)"):
        _checks.projchain(t(10, 16), w, w, t(16, 17), w, t(2, 16))
    with pytest.raises(ValueError, match=r"projchain: w_alpha has shape \(2, 8\), expected \(2, 16\)"):
        _checks.projchain(t(10, 16), w, w, w, w, t(2, 8))


FP8 = "float8_e4m3fn"


def test_dual_gemm_checks():
    b = t(48, 256)
    assert _checks.dual_gemm(t(10, 256), b, b, None, None, None) == (10, 48, 256, False)
    assert _checks.dual_gemm(t(2, 5, 256), b, b, None, None, None) == (10, 48, 256, False)
    s = t(dtype=F32)
    f8 = t(48, 256, dtype=FP8)
    assert _checks.dual_gemm(t(10, 256, dtype=FP8), f8, f8, s, t(48, dtype=F32), s) == (10, 48, 256, True)
    with pytest.raises(ValueError, match=r"dual_gemm: a must be \[M, K\] or \[..., K\], got shape \(256,\)"):
        _checks.dual_gemm(t(256), b, b, None, None, None)
    with pytest.raises(ValueError, match=r"dual_gemm: b2 has shape \(48, 128\), expected \(48, 256\)"):
        _checks.dual_gemm(t(10, 256), b, t(48, 128), None, None, None)
    with pytest.raises(TypeError, match=r"dual_gemm: b1 has dtype float16 but a has bfloat16"):
        _checks.dual_gemm(t(10, 256), t(48, 256, dtype="float16"), b, None, None, None)
    with pytest.raises(ValueError, match=r"dual_gemm: fp8 operands need scale_b1 \(fp32, shape \(\) or \(48,\)\)"):
        _checks.dual_gemm(t(10, 256, dtype=FP8), f8, f8, s, None, s)
    with pytest.raises(ValueError, match=r"dual_gemm: scale_a has shape \(9,\), expected \(\) or \(10,\)"):
        _checks.dual_gemm(t(10, 256, dtype=FP8), f8, f8, t(9, dtype=F32), s, s)
    with pytest.raises(ValueError, match=r"dual_gemm: scale_a is only for fp8 operands; a is bfloat16"):
        _checks.dual_gemm(t(10, 256), b, b, s, None, None)
    with pytest.raises(ValueError, match=r"dual_gemm: b1 is on cuda:1 but a is on cuda:0"):
        _checks.dual_gemm(t(10, 256), t(48, 256, device="cuda:1"), b, None, None, None)


class StubKernels:
    """The CUDA build's answers: gla runs K in {64, 128}, V % 64 == 0 up to 256; others as told."""

    def __init__(self, refuse=()):
        self.refuse = set(refuse)

    def variants(self, workload):
        return {"gla": ("pipelined_fused", "pingpong_fused"), "linrnn": ("semi_fused", "chunk_fused"),
                "projchain": ("wide_gemm", "epilogue_fused"),
                "dualgemm": ("tile128x64_stages6_ws", "tile128x128_stages4_ws")}[workload]

    def default(self, workload, dims):
        return {"gla": "pingpong_fused", "linrnn": "semi_fused", "projchain": "epilogue_fused",
                "dualgemm": "tile128x64_stages6_ws"}[workload]

    def cannot_implement(self, workload, variant, dims):
        if workload == "gla" and (dims[3] not in (64, 128) or dims[4] % 64 or dims[4] > 256):
            return f"K = {dims[3]}, V = {dims[4]} not supported"
        return "refused by the stub" if variant in self.refuse else ""


DIMS = (2, 70, 3, 64, 64)


@pytest.mark.parametrize("dims, dtype, device, plan", [
    (DIMS, BF16, "cuda", ("pingpong_fused", 64, 64)),
    (DIMS, "float16", "cuda", ("pingpong_fused", 64, 64)),
    (DIMS, F32, "cuda", ("torch", 64, 64)),              # fp32 asks for fp32 accuracy
    (DIMS, BF16, "cpu", ("torch", 64, 64)),
    ((2, 70, 3, 40, 24), BF16, "cuda", ("pingpong_fused", 64, 64)),     # zero-padded heads
    ((2, 70, 3, 100, 200), BF16, "cuda", ("pingpong_fused", 128, 256)),
    ((2, 70, 3, 256, 64), BF16, "cuda", ("torch", 256, 64)),            # beyond the kernels' tiles
    ((2, 70, 3, 64, 512), BF16, "cuda", ("torch", 64, 512)),
])
def test_gla_default_plan(dims, dtype, device, plan):
    assert tuple(_plan.gla(dims, dtype, device, None, StubKernels())) == plan


@pytest.mark.parametrize("plan, on_kernels", [
    (("pingpong_fused", 64, 64), True), (("pingpong_fused", 128, 128), True),
    (("pipelined_fused", 64, 128), True),
    (("pingpong_fused", 128, 256), False),  # V padded past the backward kernels' 128
    (("torch", 64, 64), False),
])
def test_gla_gradients_on_kernels_where_the_backward_has_tiles(plan, on_kernels):
    assert _plan.gla_backward_on_kernels(_plan.GlaPlan(*plan)) == on_kernels


def test_gla_packed_batch_checks():
    cu = Facts((4,), "int32", "cpu", True)
    assert _checks.gla_varlen(cu, [0, 3, 3, 10], 1, 10) == 3
    with pytest.raises(ValueError, match="chunk_gla: cu_seqlens must be \\[N \\+ 1\\] \\(1 dims\\)"):
        _checks.gla_varlen(Facts((2, 2), "int32", "cpu", True), [], 1, 10)
    with pytest.raises(TypeError, match="chunk_gla: cu_seqlens has dtype float32; expected one of int32, int64"):
        _checks.gla_varlen(Facts((2,), "float32", "cpu", True), [0, 10], 1, 10)
    with pytest.raises(ValueError, match="must have B = 1, got B = 3"):
        _checks.gla_varlen(cu, [0, 3, 3, 10], 3, 10)
    with pytest.raises(ValueError, match="at least two offsets"):
        _checks.gla_varlen(Facts((1,), "int64", "cpu", True), [0], 1, 10)
    with pytest.raises(ValueError, match="must run from 0 to T = 10, got 1 to 10"):
        _checks.gla_varlen(cu, [1, 3, 3, 10], 1, 10)
    with pytest.raises(ValueError, match=r"must not decrease: cu_seqlens\[2\] = 2 < cu_seqlens\[1\] = 3"):
        _checks.gla_varlen(cu, [0, 3, 2, 10], 1, 10)
    with pytest.raises(ValueError, match=r"initial_state has shape \(1, 2, 8, 4\), expected \(3, 2, 8, 4\)"):
        _checks.gla_varlen_state(Facts((1, 2, 8, 4), "float32", "cpu", True), 3, 2, 8, 4, False)


def test_gla_plan_without_kernels_or_when_refused():
    assert _plan.gla(DIMS, BF16, "cuda", None, None, ("pingpong_fused",)).variant == "torch"
    assert _plan.gla(DIMS, BF16, "cuda", None, StubKernels(refuse={"pingpong_fused"})).variant == "torch"


def test_gla_explicit_variants():
    k = StubKernels()
    assert tuple(_plan.gla(DIMS, F32, "cuda", "pipelined_fused", k)) == ("pipelined_fused", 64, 64)
    assert _plan.gla(DIMS, BF16, "cuda", "torch", k).variant == "torch"
    with pytest.raises(ValueError, match=r"chunk_gla: unknown variant='fastest' \(known: None = .*pingpong_fused, torch\)"):
        _plan.gla(DIMS, BF16, "cuda", "fastest", k)
    with pytest.raises(ValueError, match=r"chunk_gla: variant='pingpong_fused' is a CUDA kernel; the tensors are on cpu"):
        _plan.gla(DIMS, BF16, "cpu", "pingpong_fused", k)
    with pytest.raises(RuntimeError, match="chunk_gla: variant='pingpong_fused' needs overlap's CUDA kernels"):
        _plan.gla(DIMS, BF16, "cuda", "pingpong_fused", None, ("pingpong_fused",))
    with pytest.raises(ValueError, match=r"variant='pingpong_fused' runs K <= 128 and V <= 256 \(K = 256, V = 64\)"):
        _plan.gla((2, 70, 3, 256, 64), BF16, "cuda", "pingpong_fused", k)
    with pytest.raises(ValueError, match=r"variant='pingpong_fused' cannot run B=2, T=70, H=3, K=64, V=64: refused"):
        _plan.gla(DIMS, BF16, "cuda", "pingpong_fused", StubKernels(refuse={"pingpong_fused"}))


def test_linrnn_and_projchain_plans():
    k = StubKernels(refuse={"chunk_fused"})
    assert _plan.linrnn((2, 9, 16, 8), BF16, "cuda", None, k) == "semi_fused"
    assert _plan.linrnn((2, 9, 16, 8), F32, "cuda", None, k) == "torch"
    assert _plan.projchain((1, 10, 16, 2, 64), BF16, "cuda", None, k) == "epilogue_fused"
    assert _plan.projchain((1, 10, 16, 2, 64), BF16, "cpu", None, k) == "torch"
    with pytest.raises(ValueError, match=r"linrnn: variant='chunk_fused' cannot run B=2, T=9, d=16, dv=8: refused"):
        _plan.linrnn((2, 9, 16, 8), BF16, "cuda", "chunk_fused", k)
    with pytest.raises(ValueError, match="projchain: unknown variant='fused'"):
        _plan.projchain((1, 10, 16, 2, 64), BF16, "cuda", "fused", k)


def test_dual_gemm_plans():
    k = StubKernels(refuse={"tile128x128_stages4_ws"})
    dims = (256, 4096, 7168, 1)
    assert _plan.dual_gemm(dims, FP8, "cuda", None, k) == "tile128x64_stages6_ws"  # fp8 goes to the kernels
    assert _plan.dual_gemm(dims, BF16, "cuda", None, k) == "tile128x64_stages6_ws"
    assert _plan.dual_gemm(dims, F32, "cuda", None, k) == "torch"
    assert _plan.dual_gemm(dims, BF16, "cpu", None, k) == "torch"
    assert _plan.dual_gemm(dims, BF16, "cuda", None, None, ("tile128x64_stages6_ws",)) == "torch"
    with pytest.raises(ValueError, match=r"dual_gemm: variant='tile128x128_stages4_ws' cannot run M=256, N=4096, "
                                         r"K=7168, fmt=1: refused by the stub"):
        _plan.dual_gemm(dims, FP8, "cuda", "tile128x128_stages4_ws", k)
    with pytest.raises(ValueError, match=r"dual_gemm: unknown variant='tile9x9'"):
        _plan.dual_gemm(dims, BF16, "cuda", "tile9x9", k)
