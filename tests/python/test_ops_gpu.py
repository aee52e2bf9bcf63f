"""overlap.ops on the CUDA kernels (skipped without a GPU): every kernel variant x shape against
the float64 oracles, the default choice for each dtype, flash-linear-attention's chunk_gla where
it is installed (<= 5e-3 relative, issue 17), packed-weight caches that follow in-place updates,
and torch.compile(fullgraph=True) of a module calling the three ops. Outputs start as NaN
(ops/_cuda.poison_outputs), so an element a kernel leaves unwritten fails. Each error is printed
as `[ops_error] op variant shape output error` (run pytest with -s to see them)."""
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import ops_oracle as oracle  # noqa: E402
import overlap.ops  # noqa: E402
from overlap.ops import _cuda, chunk_gla, dual_gemm, linrnn, projchain  # noqa: E402

pytestmark = pytest.mark.gpu
CUDA = "cuda"
KERNELS = _cuda.kernels()


@pytest.fixture(autouse=True, scope="module")
def poisoned_outputs():
    _cuda.poison_outputs = True
    yield
    _cuda.poison_outputs = False


def test_kernels_are_built():
    assert overlap.ops.kernels_available(), f"overlap._cuda_ops does not import: {_cuda._missing}"


def report(op, variant, shape, name, error, bound):
    print(f"[ops_error] {op} {variant} {shape} {name} {error:.3e} (bound {bound:g})")
    assert error <= bound, (op, variant, shape, name, error)


def variants(workload):
    return KERNELS.variants(workload) if KERNELS else ()


def refusal(workload, variant, dims):
    why = KERNELS.cannot_implement(workload, variant, dims)
    if why:  # an expected refusal: the op must say so, naming the variant
        print(f"[ops_refused] {workload} {variant} {dims}: {why}")
    return why


GLA_SHAPES = [(2, 130, 4, 64, 64), (1, 63, 2, 128, 128), (2, 100, 3, 64, 192), (1, 1, 2, 128, 64),
              (2, 77, 2, 40, 24), (1, 70, 2, 100, 200)]  # the last two run on zero-padded heads


@pytest.mark.parametrize("shape", GLA_SHAPES)
@pytest.mark.parametrize("variant", variants("gla"))
def test_chunk_gla_kernels(variant, shape):
    B, T, H, K, V = shape
    padded = (B, T, H, 64 if K <= 64 else 128, -(-V // 64) * 64)
    q, k, v, g, h0 = oracle.gla_inputs(*shape, torch.bfloat16, CUDA, gate_scale=0.1 if T == 63 else 16.0)
    if refusal("gla", variant, padded):
        with pytest.raises(ValueError, match=f"variant='{variant}' cannot run"):
            chunk_gla(q, k, v, g, variant=variant)
        return
    o, hT = chunk_gla(q, k, v, g, initial_state=h0, output_final_state=True, variant=variant)
    ref_o, ref_h = oracle.gla(q, k, v, g, K ** -0.5, h0)
    assert o.dtype == torch.bfloat16 and o.shape == ref_o.shape and hT.shape == ref_h.shape
    report("chunk_gla", variant, shape, "o", oracle.rel_error(o, ref_o), 5e-3)
    report("chunk_gla", variant, shape, "hT", oracle.rel_error(hT, ref_h), 5e-3)


@pytest.mark.parametrize("gate_scale", [16.0, 0.1, 0.94])  # default, strong and mixed gates
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
def test_chunk_gla_default_choice(dtype, gate_scale):
    shape = (2, 200, 4, 128, 128)
    q, k, v, g, h0 = oracle.gla_inputs(*shape, dtype, CUDA, gate_scale)
    o, hT = chunk_gla(q, k, v, g, initial_state=h0, output_final_state=True)
    ref_o, ref_h = oracle.gla(q, k, v, g, 128 ** -0.5, h0)
    assert o.dtype == dtype
    # fp32 runs the general path in fp32; fp16 is rounded to the kernels' bf16 (3 bits fewer), which
    # the oracle, fed the fp16 inputs, does not do.
    bound = {torch.float32: 1e-5, torch.bfloat16: 5e-3, torch.float16: 1e-2}[dtype]
    report("chunk_gla", f"default-{str(dtype)[6:]}", shape, "o", oracle.rel_error(o, ref_o), bound)
    report("chunk_gla", f"default-{str(dtype)[6:]}", shape, "hT", oracle.rel_error(hT, ref_h), max(bound, 1e-5))


@pytest.mark.parametrize("shape", [(2, 300, 4, 64, 64), (1, 257, 2, 128, 128), (2, 130, 2, 32, 48)])
def test_chunk_gla_matches_flash_linear_attention(shape):
    fla = pytest.importorskip("fla.ops.gla")
    q, k, v, g, h0 = oracle.gla_inputs(*shape, torch.bfloat16, CUDA)
    ours, ours_h = chunk_gla(q, k, v, g, initial_state=h0, output_final_state=True)
    theirs, theirs_h = fla.chunk_gla(q, k, v, g, initial_state=h0, output_final_state=True)
    ref_o, ref_h = oracle.gla(q, k, v, g, shape[3] ** -0.5, h0)
    report("chunk_gla", "fla-vs-oracle", shape, "o", oracle.rel_error(theirs, ref_o), 1.0)
    report("chunk_gla", "ours-vs-oracle", shape, "o", oracle.rel_error(ours, ref_o), 5e-3)
    report("chunk_gla", "ours-vs-fla", shape, "o", oracle.rel_error(ours, theirs), 5e-3)
    report("chunk_gla", "ours-vs-fla", shape, "hT", oracle.rel_error(ours_h, theirs_h), 5e-3)


# Kernel shapes (padded heads <= 128: the backward kernels), zero-padded heads, and V = 200 (padded
# to 256: the forward on a kernel, the gradients from the general path).
GLA_GRAD_SHAPES = [(2, 130, 4, 64, 64), (1, 63, 2, 128, 128), (1, 1, 2, 128, 64), (2, 77, 2, 40, 24),
                   (1, 70, 2, 100, 200)]


@pytest.mark.parametrize("gate_scale", [16.0, 0.1])  # default and strong gates
@pytest.mark.parametrize("shape", GLA_GRAD_SHAPES)
def test_chunk_gla_gradients(shape, gate_scale):
    """Every gradient against autograd through the float64 recurrence: the wrapper (the forward
    saves the states, the saved_states backward) and the registered op (the materialized one)."""
    B, T, H, K, V = shape
    q, k, v, g, h0 = oracle.gla_inputs(*shape, torch.bfloat16, CUDA, gate_scale)
    gen = torch.Generator(device="cpu").manual_seed(7)
    do = torch.randn(B, T, H, V, generator=gen).to(CUDA, torch.bfloat16)
    dhT = 0.1 * torch.randn(B, H, K, V, generator=gen).to(CUDA)
    ref = oracle.gla_grads(q, k, v, g, K ** -0.5, h0, do, dhT)
    for how in ("wrapper", "registered op"):
        leaves = [x.clone().requires_grad_() for x in (q, k, v, g, h0)]
        if how == "wrapper":
            o, hT = chunk_gla(*leaves[:4], initial_state=leaves[4], output_final_state=True)
        else:
            o, hT = torch.ops.overlap.chunk_gla(*leaves[:4], K ** -0.5, leaves[4], True, False, "")
        grads = torch.autograd.grad((o, hT), leaves, (do, dhT))
        for name, got, want, x in zip(("dq", "dk", "dv", "dg", "dh0"), grads, ref, leaves):
            assert got.dtype == x.dtype and got.shape == x.shape
            report("chunk_gla_backward", how, (*shape, gate_scale), name, oracle.rel_error(got, want), 5e-3)


def test_chunk_gla_train_saves_states_for_the_backward_kernels():
    q, k, v, g, h0 = oracle.gla_inputs(2, 130, 2, 64, 128, torch.bfloat16, CUDA)
    o, hT, states = torch.ops.overlap.chunk_gla_train(q, k, v, g, 0.125, h0, True, False, "")
    assert states.shape == (2, 2, 3, 64, 128) and states.dtype == torch.bfloat16
    assert oracle.rel_error(states[:, :, 0].float(), h0) <= 5e-3  # S_0 = h0
    o2, hT2 = torch.ops.overlap.chunk_gla(q, k, v, g, 0.125, h0, True, False, "")
    # The saving instantiation computes as the plain one.
    assert oracle.rel_error(o, o2) <= 1e-3 and oracle.rel_error(hT, hT2) <= 1e-5
    do = torch.randn_like(o)
    torch.library.opcheck(torch.ops.overlap.chunk_gla_backward.default,
                          (q, k, v, g, 0.125, h0, do, torch.randn_like(hT), states, False, ""))
    # Where the padded heads pass 128, the forward saves nothing (the gradients take the general path).
    q, k, v, g, h0 = oracle.gla_inputs(1, 70, 2, 64, 200, torch.bfloat16, CUDA)
    assert torch.ops.overlap.chunk_gla_train(q, k, v, g, 0.125, h0, False, False, "")[2].numel() == 0


@pytest.mark.parametrize("heads", [(2, 64, 128), (3, 40, 24)])  # the second on zero-padded heads
@pytest.mark.parametrize("variant", [None, "pipelined_fused"])
def test_chunk_gla_packed_batch_on_kernels(variant, heads):
    """cu_seqlens with lengths 1, 0, 130, 64, 257: each sequence's output, final state and
    gradients against the float64 recurrence of that sequence alone. variant=None runs the
    variable-length kernels (one launch), pipelined_fused one call per sequence."""
    H, K, V = heads
    offsets = [0, 1, 1, 131, 195, 452]
    q, k, v, g, _ = oracle.gla_inputs(1, offsets[-1], H, K, V, torch.bfloat16, CUDA)
    h0 = 0.1 * torch.randn(len(offsets) - 1, H, K, V, device=CUDA)
    leaves = [x.clone().requires_grad_() for x in (q, k, v, g, h0)]
    o, hT = chunk_gla(*leaves[:4], initial_state=leaves[4], output_final_state=True,
                      cu_seqlens=torch.tensor(offsets, device=CUDA), variant=variant)
    do, dhT = torch.randn_like(o), 0.1 * torch.randn_like(hT)
    grads = torch.autograd.grad((o, hT), leaves, (do, dhT))
    how = variant or "varlen"
    for i, (s, e) in enumerate(zip(offsets, offsets[1:])):
        if e == s:
            assert oracle.rel_error(hT[i], h0[i]) <= 1e-6 and oracle.rel_error(grads[4][i], dhT[i]) <= 1e-6
            continue
        part = [x[:, s:e] for x in (q, k, v, g)]
        ref_o, ref_h = oracle.gla(*part, K ** -0.5, h0[i:i + 1])
        report("chunk_gla_packed", how, (s, e, *heads), "o", oracle.rel_error(o[:, s:e], ref_o), 5e-3)
        report("chunk_gla_packed", how, (s, e, *heads), "hT", oracle.rel_error(hT[i:i + 1], ref_h), 5e-3)
        ref = oracle.gla_grads(*part, K ** -0.5, h0[i:i + 1], do[:, s:e], dhT[i:i + 1])
        for name, got, want in zip(("dq", "dk", "dv", "dg"), [x[:, s:e] for x in grads[:4]], ref[:4]):
            report("chunk_gla_packed", how, (s, e, *heads), name, oracle.rel_error(got, want), 5e-3)
        report("chunk_gla_packed", how, (s, e, *heads), "dh0", oracle.rel_error(grads[4][i:i + 1], ref[4]), 5e-3)


def test_chunk_gla_varlen_ops():
    """The variable-length ops as registered: opcheck (schemas, fake implementations, autograd
    registration) of the training forward and the backward, and the saved states of each sequence
    starting from its initial state."""
    offsets = torch.tensor([0, 70, 70, 200], dtype=torch.int32, device=CUDA)
    q, k, v, g, _ = oracle.gla_inputs(1, 200, 2, 64, 64, torch.bfloat16, CUDA)
    h0 = 0.1 * torch.randn(3, 2, 64, 64, device=CUDA)
    args = (q, k, v, g, offsets, 0.125, h0, True, False)
    torch.library.opcheck(torch.ops.overlap.chunk_gla_varlen_train.default, args)
    o, hT, states = torch.ops.overlap.chunk_gla_varlen_train(*args)
    assert states.shape == ((200 + 63 * 3) // 64, 2, 64, 64)
    # Sequence i's states are [H, chunks_i, K, V] from chunk state sum_{j<i} chunks_j on: sequence 0
    # (2 chunks) at 0, sequence 1 none, sequence 2 (3 chunks) at 2; each starts from its h0.
    assert oracle.rel_error(states[0:2].reshape(2, 2, 64, 64)[:, 0].float(), h0[0]) <= 5e-3
    assert oracle.rel_error(states[2:5].reshape(2, 3, 64, 64)[:, 0].float(), h0[2]) <= 5e-3
    torch.library.opcheck(torch.ops.overlap.chunk_gla_varlen_backward.default,
                          (q, k, v, g, offsets, 0.125, h0, torch.randn_like(o), torch.randn_like(hT), states, False))


@pytest.mark.parametrize("shape", [(2, 300, 4, 64, 64), (1, 257, 2, 128, 128)])
def test_chunk_gla_gradients_match_flash_linear_attention(shape):
    fla = pytest.importorskip("fla.ops.gla")
    q, k, v, g, h0 = oracle.gla_inputs(*shape, torch.bfloat16, CUDA)
    do = torch.randn(*shape[:3], shape[4], device=CUDA, dtype=torch.bfloat16)
    results = []
    for fn in (chunk_gla, fla.chunk_gla):
        leaves = [x.clone().requires_grad_() for x in (q, k, v, g, h0)]
        o, _ = fn(*leaves[:4], initial_state=leaves[4])
        results.append(torch.autograd.grad(o, leaves, do))
    ref = oracle.gla_grads(q, k, v, g, shape[3] ** -0.5, h0, do, None)
    for name, ours, theirs, want in zip(("dq", "dk", "dv", "dg", "dh0"), *results, ref):
        report("chunk_gla_backward", "fla-vs-oracle", shape, name, oracle.rel_error(theirs, want), 1.0)
        report("chunk_gla_backward", "ours-vs-oracle", shape, name, oracle.rel_error(ours, want), 5e-3)
        report("chunk_gla_backward", "ours-vs-fla", shape, name, oracle.rel_error(ours, theirs), 1e-2)


LINRNN_SHAPES = [(2, 130, 64, 64), (4, 2048, 256, 64), (1, 77, 40, 24)]


@pytest.mark.parametrize("shape", LINRNN_SHAPES)
@pytest.mark.parametrize("variant", variants("linrnn") + (None,))
def test_linrnn_kernels(variant, shape):
    B, T, d, dv = shape
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(B, T, d, generator=gen).to(torch.bfloat16).to(CUDA)
    w = oracle.linear_weight(3 * dv, d, torch.bfloat16, CUDA, gen)
    h0 = (0.1 * torch.randn(B, dv, generator=gen)).to(CUDA)
    if variant and refusal("linrnn", variant, shape):
        with pytest.raises(ValueError, match=f"variant='{variant}' cannot run"):
            linrnn(x, w, variant=variant)
        return
    y, hT = linrnn(x, w, h0, output_final_state=True, variant=variant)
    ref_y, ref_h = oracle.linrnn(x, w, h0)
    report("linrnn", variant or "default", shape, "y", oracle.rel_error(y, ref_y), 1e-2)
    report("linrnn", variant or "default", shape, "hT", oracle.rel_error(hT, ref_h), 1e-2)


PROJCHAIN_SHAPES = [((2, 130), 256, 4, 64), ((520,), 128, 2, 128), ((100,), 72, 3, 32)]


def projchain_inputs(lead, d, H, dk, dtype=torch.bfloat16):
    gen = torch.Generator().manual_seed(7)
    x = torch.randn(*lead, d, generator=gen).to(dtype).to(CUDA)
    ws = [oracle.linear_weight(H * dk, d, dtype, CUDA, gen) for _ in range(4)]
    return x, ws + [oracle.linear_weight(H, d, dtype, CUDA, gen)]


@pytest.mark.parametrize("shape", PROJCHAIN_SHAPES)
@pytest.mark.parametrize("variant", variants("projchain") + (None,))
def test_projchain_kernels(variant, shape):
    lead, d, H, dk = shape
    x, ws = projchain_inputs(*shape)
    N = x.numel() // d
    if variant and refusal("projchain", variant, (1, N, d, H, dk)):
        with pytest.raises(ValueError, match=f"variant='{variant}' cannot run"):
            projchain(x, *ws, variant=variant)
        return
    outs = projchain(x, *ws, variant=variant)
    for name, out, ref in zip("q k v g alpha".split(), outs, oracle.projchain(x, *ws)):
        assert out.shape == ref.shape and out.dtype == torch.bfloat16
        report("projchain", variant or "default", shape, name, oracle.rel_error(out, ref), 1e-2)


# (lead dims of a, N, K): SPEC's smallest test shape, partial tiles in M and N with a 3-D a, one row.
DUALGEMM_SHAPES = [((256,), 512, 256), ((2, 50), 200, 512), ((1,), 8, 256)]


def dual_gemm_inputs(lead, N, K, fp8):
    """a ~ N(0, 1/sqrt(K)) so a b^T ~ N(0, 1); fp8: e4m3 codes with amax/448 scales, a per row of a
    and one per tensor for b1, b2 (both forms the op takes)."""
    gen = torch.Generator().manual_seed(11)
    x = [torch.randn(*shape, generator=gen) / K ** 0.25 for shape in (lead + (K,), (N, K), (N, K))]
    if not fp8:
        return [v.to(torch.bfloat16).to(CUDA) for v in x], [None] * 3
    sa = x[0].reshape(-1, K).abs().amax(1) / 448
    sb = [v.abs().amax() / 448 for v in x[1:]]
    codes = [(x[0].reshape(-1, K) / sa[:, None]).reshape(x[0].shape)] + [v / s for v, s in zip(x[1:], sb)]
    return [c.to(torch.float8_e4m3fn).to(CUDA) for c in codes], [s.float().to(CUDA) for s in [sa] + sb]


@pytest.mark.parametrize("fp8", [False, True])
@pytest.mark.parametrize("shape", DUALGEMM_SHAPES)
@pytest.mark.parametrize("variant", variants("dualgemm") + (None,))
def test_dual_gemm_kernels(variant, shape, fp8):
    lead, N, K = shape
    (a, b1, b2), scales = dual_gemm_inputs(lead, N, K, fp8)
    M = a.numel() // K
    if variant and refusal("dualgemm", variant, (M, N, K, int(fp8))):
        with pytest.raises(ValueError, match=f"variant='{variant}' cannot run"):
            dual_gemm(a, b1, b2, variant=variant)
        return
    c = dual_gemm(a, b1, b2, scale_a=scales[0], scale_b1=scales[1], scale_b2=scales[2], variant=variant)
    assert c.shape == lead + (N,) and c.dtype == (torch.float16 if fp8 else torch.bfloat16)
    ref = oracle.dual_gemm(a, b1, b2, *scales)
    report("dual_gemm", variant or "default", (shape, "fp8" if fp8 else "bf16"), "c", oracle.rel_error(c, ref),
           1e-2 if fp8 else 5e-3)


def test_packed_weights_follow_in_place_updates():
    x, ws = projchain_inputs((64,), 128, 2, 64)
    for _ in range(2):
        outs = projchain(x, *ws, variant="epilogue_fused")
        assert oracle.rel_error(outs[0], oracle.projchain(x, *ws)[0]) <= 1e-2
        ws[0].mul_(-0.5)  # an optimizer step or load_state_dict: the next call must repack
    xr = torch.randn(2, 64, 64, device=CUDA).to(torch.bfloat16)
    w = oracle.linear_weight(3 * 64, 64, torch.bfloat16, CUDA, torch.Generator().manual_seed(1))
    for variant in ("chunk_fused", "semi_fused"):
        if refusal("linrnn", variant, (2, 64, 64, 64)):
            continue
        y, _ = linrnn(xr, w, variant=variant)
        w.mul_(0.5)
        y2, _ = linrnn(xr, w, variant=variant)
        assert oracle.rel_error(y2, oracle.linrnn(xr, w, None)[0]) <= 1e-2
    overlap.ops.clear_caches()


def test_refusals_on_gpu():
    q, k, v, g, h0 = oracle.gla_inputs(1, 10, 2, 64, 64, torch.bfloat16, CUDA)
    with pytest.raises(ValueError, match="chunk_gla: g is on cpu but q is on cuda:0"):
        chunk_gla(q, k, v, g.cpu())
    with pytest.raises(ValueError, match=r"variant='pingpong_fused' runs K <= 128 and V <= 256 \(K = 64, V = 512\)"):
        chunk_gla(q, k, torch.zeros(1, 10, 2, 512, device=CUDA, dtype=torch.bfloat16), g, variant="pingpong_fused")
    x, ws = projchain_inputs((8,), 64, 2, 64)
    with pytest.raises(ValueError, match="projchain: variant='cluster_fused' cannot run"):
        projchain(x, *ws, variant="cluster_fused")


def test_torch_compile_fullgraph_cuda():
    from test_ops_torch import compile_matches_eager
    y, hT = compile_matches_eager(CUDA, torch.bfloat16)
    assert torch.isfinite(y).all() and torch.isfinite(hT).all()
