"""overlap.ops with torch, on the CPU (the general torch path; the GPU machine runs these too):
results against the float64 oracles, the C++ oracle through overlap.vectors with torch tensors,
refusals, the registered ops' schemas and fake implementations (torch.library.opcheck), and
torch.compile(fullgraph=True) of a small module that calls all three ops."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import ops_oracle as oracle  # noqa: E402
from overlap import vectors  # noqa: E402
from overlap.ops import chunk_gla, dual_gemm, linrnn, projchain  # noqa: E402

CPU = "cpu"


@pytest.mark.parametrize("dtype, o_bound", [(torch.float32, 1e-5), (torch.bfloat16, 5e-3)])
@pytest.mark.parametrize("shape", [(2, 70, 3, 40, 24), (1, 1, 2, 64, 64), (1, 65, 2, 128, 96)])
@pytest.mark.parametrize("gate_scale", [16.0, 0.1])  # default and strong gates (median -6.9 per step)
def test_chunk_gla_general_path(shape, gate_scale, dtype, o_bound):
    q, k, v, g, h0 = oracle.gla_inputs(*shape, dtype, CPU, gate_scale)
    o, hT = chunk_gla(q, k, v, g, initial_state=h0, output_final_state=True)
    ref_o, ref_h = oracle.gla(q, k, v, g, shape[3] ** -0.5, h0)
    assert o.dtype == dtype and o.shape == ref_o.shape and hT.dtype == torch.float32
    assert oracle.rel_error(o, ref_o) <= o_bound
    assert oracle.rel_error(hT, ref_h) <= 1e-5


def test_chunk_gla_options():
    q, k, v, g, h0 = oracle.gla_inputs(2, 40, 2, 16, 8, torch.float32, CPU)
    ref_o, ref_h = oracle.gla(q, k, v, g, 0.3, h0)
    o, hT = chunk_gla(q, k, v, g, scale=0.3, initial_state=h0.transpose(-1, -2).contiguous(),
                      output_final_state=True, state_v_first=True)
    assert oracle.rel_error(o, ref_o) <= 1e-5 and oracle.rel_error(hT.transpose(-1, -2), ref_h) <= 1e-5
    o, none = chunk_gla(q, k, v, g)
    assert none is None and oracle.rel_error(o, oracle.gla(q, k, v, g, 16 ** -0.5, None)[0]) <= 1e-5
    assert torch.equal(chunk_gla(q, k, v, g, variant="torch")[0], o)


def test_general_paths_match_the_cpp_oracle_through_vectors():
    # The package's float64 oracle (C++), fed torch tensors: overlap.vectors with kind="torch".
    shape = "B=1,T=70,H=2,K=64,V=64"
    inputs = vectors.make_inputs("gla", shape, seed=3, kind="torch")
    assert inputs["q"].dtype == torch.bfloat16 and inputs["g"].dtype == torch.float32
    ref = vectors.reference("gla", shape, inputs, kind="torch")
    o, hT = chunk_gla(inputs["q"], inputs["k"], inputs["v"], inputs["g"], initial_state=inputs["h0"],
                      output_final_state=True)
    assert oracle.rel_error(o, ref["o"]) <= 5e-3 and oracle.rel_error(hT, ref["hT"]) <= 1e-5

    shape = "B=2,T=33,d=16,dv=8"
    inputs = vectors.make_inputs("linrnn", shape, seed=3, kind="torch")
    ref = vectors.reference("linrnn", shape, inputs, kind="torch")
    y, h = linrnn(inputs["x"], inputs["W"].t().contiguous(), inputs["h0"], output_final_state=True)
    assert oracle.rel_error(y, ref["y"]) <= 1e-2 and oracle.rel_error(h, ref["hT"]) <= 1e-5


def test_linrnn_general_path():
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(3, 77, 40, generator=gen)
    w = oracle.linear_weight(3 * 24, 40, torch.float32, CPU, gen)
    h0 = torch.randn(3, 24, generator=gen)
    y, h = linrnn(x, w, h0, output_final_state=True)
    ref_y, ref_h = oracle.linrnn(x, w, h0)
    assert oracle.rel_error(y, ref_y) <= 1e-5 and oracle.rel_error(h, ref_h) <= 1e-5
    y2, none = linrnn(x, w)
    assert none is None and oracle.rel_error(y2, oracle.linrnn(x, w, None)[0]) <= 1e-5


@pytest.mark.parametrize("lead", [(2, 9), (13,)])
def test_projchain_general_path(lead):
    gen = torch.Generator().manual_seed(2)
    d, H, dk = 24, 3, 8
    x = torch.randn(*lead, d, generator=gen)
    ws = [oracle.linear_weight(H * dk, d, torch.float32, CPU, gen) for _ in range(4)]
    ws.append(oracle.linear_weight(H, d, torch.float32, CPU, gen))
    ws[1][:dk] = 0  # head 0 of k has norm 0 and must stay zeros (the reference's eps)
    outs = projchain(x, *ws)
    refs = oracle.projchain(x, *ws)
    for name, out, ref in zip("q k v g alpha".split(), outs, refs):
        assert out.shape == ref.shape, name
        assert oracle.rel_error(out, ref) <= 1e-5, name
    assert torch.all(outs[1][..., 0, :] == 0)


@pytest.mark.parametrize("lead", [(2, 9), (13,)])
def test_dual_gemm_general_path(lead):
    gen = torch.Generator().manual_seed(3)
    a = torch.randn(*lead, 40, generator=gen)
    b1, b2 = (torch.randn(24, 40, generator=gen) for _ in range(2))
    c = dual_gemm(a, b1, b2)  # fp32 on the CPU: the general path, whatever K and N are
    assert c.shape == lead + (24,) and c.dtype == torch.float32
    assert oracle.rel_error(c, oracle.dual_gemm(a, b1, b2)) <= 1e-5
    # fp8 codes with per-row and per-tensor scales: the values they stand for.
    codes = [x.to(torch.float8_e4m3fn) for x in (a, b1, b2)]
    sa, sb = torch.rand(a.numel() // 40, generator=gen) + 0.5, torch.tensor(0.25)
    c8 = dual_gemm(*codes, scale_a=sa, scale_b1=sb, scale_b2=sb)
    assert c8.dtype == torch.float16
    assert oracle.rel_error(c8, oracle.dual_gemm(*codes, sa, sb, sb)) <= 1e-3


def small_gla():
    return oracle.gla_inputs(1, 10, 2, 16, 16, torch.float32, CPU)


def test_refusals_name_the_argument():
    q, k, v, g, h0 = small_gla()
    with pytest.raises(TypeError, match="chunk_gla: g must be a torch.Tensor, got ndarray"):
        chunk_gla(q, k, v, np.zeros(3))
    with pytest.raises(TypeError, match="chunk_gla: initial_state has dtype bfloat16; expected one of float32"):
        chunk_gla(q, k, v, g, initial_state=h0.bfloat16())
    with pytest.raises(ValueError, match=r"chunk_gla: v has shape \(1, 10, 3, 16\), expected \(1, 10, 2, 16\)"):
        chunk_gla(q, k, torch.zeros(1, 10, 3, 16), g)
    strided = q.transpose(1, 2).contiguous().transpose(1, 2)
    with pytest.raises(ValueError, match="chunk_gla: q is not contiguous"):
        torch.ops.overlap.chunk_gla(strided, k, v, g, 0.25, None, False, False, "")
    # The wrapper copies strided inputs, as fla does.
    assert torch.equal(chunk_gla(strided, k, v, g)[0], chunk_gla(q, k, v, g)[0])
    with pytest.raises(ValueError, match=r"chunk_gla: scale=-1.0 must be a positive finite number"):
        chunk_gla(q, k, v, g, scale=-1.0)
    with pytest.raises(ValueError, match=r"chunk_gla: unknown variant='fast'"):
        chunk_gla(q, k, v, g, variant="fast")
    with pytest.raises(ValueError, match="chunk_gla: with cu_seqlens .* must have B = 1, got B = 2"):
        chunk_gla(*(torch.cat([x, x]) for x in (q, k, v, g)), cu_seqlens=torch.tensor([0, 10]))
    with pytest.raises(ValueError, match="chunk_gla: cu_seqlens must run from 0 to T = 10, got 0 to 9"):
        chunk_gla(q, k, v, g, cu_seqlens=torch.tensor([0, 4, 9]))
    with pytest.raises(ValueError, match=r"chunk_gla: cu_seqlens must not decrease: cu_seqlens\[2\] = 3"):
        chunk_gla(q, k, v, g, cu_seqlens=torch.tensor([0, 4, 3, 10]))
    with pytest.raises(TypeError, match="chunk_gla: cu_seqlens has dtype float32"):
        chunk_gla(q, k, v, g, cu_seqlens=torch.tensor([0.0, 10.0]))
    with pytest.raises(ValueError, match=r"chunk_gla: initial_state has shape \(1, 2, 16, 16\), expected "
                                         r"\(2, 2, 16, 16\) \(one state per sequence"):
        chunk_gla(q, k, v, g, initial_state=h0, cu_seqlens=torch.tensor([0, 4, 10]))
    with pytest.raises(ValueError, match=r"linrnn: weight has shape \(10, 16\)"):
        linrnn(torch.zeros(1, 4, 16), torch.zeros(10, 16))
    with pytest.raises(TypeError, match="projchain: w_k must be a torch.Tensor, got NoneType"):
        projchain(torch.zeros(4, 16), torch.zeros(8, 16), None, torch.zeros(8, 16), torch.zeros(8, 16),
                  torch.zeros(2, 16))


@pytest.mark.parametrize("gate_scale", [16.0, 0.1])
@pytest.mark.parametrize("state_v_first", [False, True])
def test_chunk_gla_gradients_match_the_oracle(state_v_first, gate_scale):
    """The general path's gradients (fp32) against autograd through the float64 step-by-step
    recurrence, across chunk boundaries, with h0 and the final state, default and strong gates."""
    q, k, v, g, h0 = oracle.gla_inputs(2, 70, 2, 8, 6, torch.float32, CPU, gate_scale)
    h0_arg = h0.transpose(-1, -2).contiguous() if state_v_first else h0
    leaves = [x.clone().requires_grad_() for x in (q, k, v, g, h0_arg)]
    o, hT = chunk_gla(*leaves[:4], initial_state=leaves[4], output_final_state=True, state_v_first=state_v_first)
    do, dhT = torch.randn_like(o), torch.randn_like(hT)
    grads = torch.autograd.grad((o, hT), leaves, (do, dhT))
    ref = list(oracle.gla_grads(q, k, v, g, 8 ** -0.5, h0, do, dhT.transpose(-1, -2) if state_v_first else dhT))
    if state_v_first:
        ref[4] = ref[4].transpose(-1, -2)
    for got, want, x in zip(grads, ref, leaves):
        assert got.dtype == x.dtype and got.shape == x.shape
        assert oracle.rel_error(got, want) <= 1e-5
    # Only o in the loss, no initial state; the registered op differentiates too.
    leaves = [x.clone().requires_grad_() for x in (q, k, v, g)]
    o, _ = torch.ops.overlap.chunk_gla(*leaves, 0.25, None, False, False, "")
    grads = torch.autograd.grad(o, leaves, do)
    for got, want in zip(grads, oracle.gla_grads(q, k, v, g, 0.25, None, do, None)):
        assert oracle.rel_error(got, want) <= 1e-5


@pytest.mark.parametrize("state_v_first", [False, True])
def test_chunk_gla_packed_batch(state_v_first):
    """cu_seqlens (lengths 5, 0, 70, 1, 33; one state each): every sequence's output, final state and
    gradients as the float64 recurrence gives them for that sequence alone."""
    lengths = [5, 0, 70, 1, 33]
    offsets = [0]
    for n in lengths:
        offsets.append(offsets[-1] + n)
    q, k, v, g, _ = oracle.gla_inputs(1, offsets[-1], 2, 8, 6, torch.float32, CPU)
    h0 = 0.1 * torch.randn(len(lengths), 2, 8, 6)
    h0_arg = h0.transpose(-1, -2).contiguous() if state_v_first else h0
    leaves = [x.clone().requires_grad_() for x in (q, k, v, g, h0_arg)]
    o, hT = chunk_gla(*leaves[:4], initial_state=leaves[4], output_final_state=True, state_v_first=state_v_first,
                      cu_seqlens=torch.tensor(offsets, dtype=torch.int32))
    assert o.shape == v.shape and hT.shape == h0_arg.shape
    do, dhT = torch.randn_like(o), torch.randn_like(hT)
    grads = torch.autograd.grad((o, hT), leaves, (do, dhT))
    for i, (s, e) in enumerate(zip(offsets, offsets[1:])):
        part = [x[:, s:e] for x in (q, k, v, g)]
        dhT_i = dhT[i:i + 1].transpose(-1, -2) if state_v_first else dhT[i:i + 1]
        hT_i = hT[i:i + 1].transpose(-1, -2) if state_v_first else hT[i:i + 1]
        if e == s:  # the state passes through
            assert torch.equal(hT_i, h0[i:i + 1])
            continue
        ref_o, ref_h = oracle.gla(*part, 8 ** -0.5, h0[i:i + 1])
        assert oracle.rel_error(o[:, s:e], ref_o) <= 1e-5 and oracle.rel_error(hT_i, ref_h) <= 1e-5
        ref = oracle.gla_grads(*part, 8 ** -0.5, h0[i:i + 1], do[:, s:e], dhT_i)
        for got, want in zip([x[:, s:e] for x in grads[:4]], ref[:4]):
            assert oracle.rel_error(got, want) <= 1e-5
        dh0 = grads[4][i:i + 1].transpose(-1, -2) if state_v_first else grads[4][i:i + 1]
        assert oracle.rel_error(dh0, ref[4]) <= 1e-5
    # The zero-length sequence's state gradient is what reached its final state.
    assert torch.equal(grads[4][1], dhT[1])


def test_gradients_refused_where_not_supported():
    w = torch.zeros(6, 4, requires_grad=True)
    with pytest.raises(NotImplementedError, match="linrnn: weight: requires_grad=True"):
        linrnn(torch.zeros(1, 3, 4), w)
    # The backward op runs the backward kernels only; the general path differentiates in Python.
    q, k, v, g, _ = small_gla()
    with pytest.raises(ValueError, match="chunk_gla_backward: no backward kernel runs B=1, T=10, H=2, K=16, V=16 "
                                         "on cpu"):
        torch.ops.overlap.chunk_gla_backward(q, k, v, g, 0.25, None, torch.ones(1, 10, 2, 16), None, torch.empty(0),
                                             False, "")


def test_opcheck_schemas_and_fake_implementations():
    q, k, v, g, h0 = small_gla()
    torch.library.opcheck(torch.ops.overlap.chunk_gla.default, (q, k, v, g, 0.25, h0, True, False, ""))
    torch.library.opcheck(torch.ops.overlap.chunk_gla.default, (q, k, v, g, 0.25, None, False, False, "torch"))
    leaves = tuple(x.clone().requires_grad_() for x in (q, k, v, g, h0))
    torch.library.opcheck(torch.ops.overlap.chunk_gla_train.default, (*leaves[:4], 0.25, leaves[4], True, False, ""))
    torch.library.opcheck(torch.ops.overlap.chunk_gla.default, (*leaves[:4], 0.25, leaves[4], True, True, ""))

    x, w = torch.randn(2, 5, 16), torch.randn(24, 16)
    torch.library.opcheck(torch.ops.overlap.linrnn.default, (x, w, torch.randn(2, 8), True, ""))
    ws = [torch.randn(16, 16) for _ in range(4)] + [torch.randn(2, 16)]
    torch.library.opcheck(torch.ops.overlap.projchain.default, (x, *ws, ""))


class TinyGla(torch.nn.Module):
    """projchain -> chunk_gla -> linrnn: the three ops in one module, as a model would call them."""

    def __init__(self, d=32, H=2, dk=16, dv=16):
        super().__init__()
        self.proj = torch.nn.ModuleList([torch.nn.Linear(d, H * dk, bias=False) for _ in range(4)])
        self.alpha = torch.nn.Linear(d, H, bias=False)
        self.rnn = torch.nn.Linear(H * dk, 3 * dv, bias=False)

    def forward(self, x, h0):
        q, k, v, g, alpha = projchain(x, *(p.weight for p in self.proj), self.alpha.weight)
        gate = F.logsigmoid(g.float()) / 16
        o, hT = chunk_gla(q, k, v, gate, initial_state=h0, output_final_state=True)
        y, _ = linrnn(o.flatten(2), self.rnn.weight)
        return y * alpha.mean(-1, keepdim=True), hT


def compile_matches_eager(device, dtype):
    torch.manual_seed(0)
    model = TinyGla().to(device=device, dtype=dtype)
    x = torch.randn(2, 37, 32, device=device, dtype=dtype)
    h0 = torch.randn(2, 2, 16, 16, device=device) * 0.1
    compiled = torch.compile(model, fullgraph=True)
    with torch.no_grad():
        eager = model(x, h0)
        traced = compiled(x, h0)
    for e, c in zip(eager, traced):
        assert e.shape == c.shape and e.dtype == c.dtype
        assert oracle.rel_error(c, e) <= (1e-5 if dtype == torch.float32 else 1e-2)
    return traced


def test_torch_compile_fullgraph_cpu():
    compile_matches_eager(CPU, torch.float32)


def test_compile_refuses_bad_shapes_while_tracing():
    f = torch.compile(lambda q, k, v, g: chunk_gla(q, k, v, g)[0], fullgraph=True)
    q, k, v, g, _ = small_gla()
    with pytest.raises(Exception, match=r"chunk_gla: g has shape \(1, 10, 2, 8\)"):
        f(q, k, v, g[..., :8].contiguous())
