"""The forms of each attention algorithm agree, states resume, and bad input is named clearly."""

import itertools
import math
import re

import pytest
import torch
import torch.nn.functional as F
from badinput import LONG, VERY_LONG, check, column, draw_qkv, parametrize, randn, unit, with_nan
from conftest import TOL, rel_rms

import pavlovlab as pl
from pavlovlab import AssociativeMemory, delta_rule_attention, linear_attention, softmax_attention
from pavlovlab.attention import forms as A
from pavlovlab.attention import literal
from pavlovlab.attention.forms import scalar_gated_linear_attention
from pavlovlab.attention.kernels import SEGMENT_CHUNKS, delta_chunk_kernel, linear_chunk_kernel

LEAD = (2, 3)  # batch, heads
D_K, D_V = 5, 7  # not powers of two, d_k != d_v


def qkv(T, dtype, device, gen, lead=LEAD, d_k=D_K, d_v=D_V, unit_keys=False):
    q = torch.randn(*lead, T, d_k, generator=gen, dtype=dtype)
    k = torch.randn(*lead, T, d_k, generator=gen, dtype=dtype)
    v = torch.randn(*lead, T, d_v, generator=gen, dtype=dtype)
    if unit_keys:
        k = F.normalize(k, dim=-1)
    return q.to(device), k.to(device), v.to(device)


def assert_same(outs, ref, dtype):
    for got, want in zip(outs, ref, strict=True):
        assert rel_rms(got, want) <= TOL[dtype]


@pytest.mark.parametrize("T", [1, 7, 63, 100, 257])
@pytest.mark.parametrize("chunk_size", [16, 64])
@pytest.mark.parametrize("normalize", [False, True])
@pytest.mark.parametrize("with_decay", [False, True])
def test_linear_forms_agree(T, chunk_size, normalize, with_decay, dtype, device, gen):
    q, k, v = qkv(T, dtype, device, gen)
    decay = torch.tensor([0.9, 0.5, 1.0], dtype=dtype, device=device) if with_decay else None  # one γ per head
    fmap = "elu1" if normalize else "identity"
    S0 = torch.randn(*LEAD, D_V, D_K, generator=gen, dtype=dtype).to(device)
    init = (S0, torch.rand(*LEAD, D_K, generator=gen, dtype=dtype).to(device)) if normalize else S0
    outs = {m: linear_attention(q, k, v, feature_map=fmap, normalize=normalize, decay=decay, mode=m,
                                chunk_size=chunk_size, initial_state=init, return_state=True)
            for m in ("parallel", "recurrent", "chunk")}
    assert outs["chunk"][0].shape == (*LEAD, T, D_V)
    assert outs["chunk"][1].shape == (*LEAD, D_V, D_K)
    assert len(outs["chunk"]) == (3 if normalize else 2)
    assert_same(outs["parallel"], outs["recurrent"], dtype)
    assert_same(outs["chunk"], outs["recurrent"], dtype)


def test_linear_matches_the_explicit_sum(dtype, device, gen):
    """o_t = Σ_{s≤t} γ^{t−s} (q_t·k_s) v_s, computed by hand for one head."""
    q, k, v = qkv(9, dtype, device, gen, lead=())
    gamma = 0.8
    want = torch.stack([sum(gamma ** (t - s) * (q[t] @ k[s]) * v[s] for s in range(t + 1)) for t in range(9)])
    for mode in ("parallel", "recurrent", "chunk"):
        assert rel_rms(linear_attention(q, k, v, decay=gamma, mode=mode, chunk_size=4), want) <= TOL[dtype]


@pytest.mark.parametrize("gated_mode", ["parallel", "recurrent"])
def test_constant_gate_is_linear_attentions_decay(gated_mode, dtype, device, gen):
    """linear_attention's constant decay γ is the constant-gate case of scalar_gated_linear_attention:
    g_t = γ (one γ per head, γ = 1 included) gives the same outputs and final state as decay=γ in every form."""
    T = 37
    q, k, v = qkv(T, dtype, device, gen)
    gamma = torch.tensor([0.9, 0.5, 1.0], dtype=dtype, device=device)          # (H,), one γ per head
    S0 = torch.randn(*LEAD, D_V, D_K, generator=gen, dtype=dtype).to(device)
    g = gamma[:, None].expand(*LEAD, T)                                         # (B, H, T): g_t = γ_h everywhere
    gated = scalar_gated_linear_attention(q, k, v, g, mode=gated_mode, initial_state=S0, return_state=True)
    for mode in ("parallel", "recurrent", "chunk"):
        fixed = linear_attention(q, k, v, decay=gamma, mode=mode, chunk_size=8, initial_state=S0, return_state=True)
        assert_same(gated, fixed, dtype)


@pytest.mark.parametrize("T", [1, 7, 63, 100, 257])
@pytest.mark.parametrize("chunk_size", [16, 64])
def test_delta_forms_agree(T, chunk_size, dtype, device, gen):
    q, k, v = qkv(T, dtype, device, gen, unit_keys=True)
    beta = torch.rand(*LEAD, T, generator=gen, dtype=dtype).to(device)
    S0 = torch.randn(*LEAD, D_V, D_K, generator=gen, dtype=dtype).to(device)
    rec = delta_rule_attention(q, k, v, beta, mode="recurrent", initial_state=S0, return_state=True)
    chk = delta_rule_attention(q, k, v, beta, mode="chunk", chunk_size=chunk_size, initial_state=S0,
                               return_state=True)
    assert chk[0].shape == (*LEAD, T, D_V) and chk[1].shape == (*LEAD, D_V, D_K)
    assert_same(chk, rec, dtype)


@pytest.mark.parametrize("mode", ["parallel", "recurrent", "chunk"])
@pytest.mark.parametrize("normalize", [False, True])
def test_linear_two_halves_equal_whole(mode, normalize, dtype, device, gen):
    q, k, v = qkv(100, dtype, device, gen)
    kw = dict(mode=mode, chunk_size=16, normalize=normalize, feature_map="elu1" if normalize else "identity",
              decay=torch.tensor([0.95, 0.9, 0.99], dtype=dtype, device=device))
    whole = linear_attention(q, k, v, return_state=True, **kw)
    first = linear_attention(q[..., :37, :], k[..., :37, :], v[..., :37, :], return_state=True, **kw)
    state = tuple(first[1:]) if normalize else first[1]
    second = linear_attention(q[..., 37:, :], k[..., 37:, :], v[..., 37:, :], initial_state=state,
                              return_state=True, **kw)
    assert rel_rms(torch.cat([first[0], second[0]], dim=-2), whole[0]) <= TOL[dtype]
    assert_same(second[1:], whole[1:], dtype)


@pytest.mark.parametrize("mode", ["recurrent", "chunk"])
def test_delta_two_halves_equal_whole(mode, dtype, device, gen):
    q, k, v = qkv(100, dtype, device, gen, unit_keys=True)
    whole = delta_rule_attention(q, k, v, 0.7, mode=mode, chunk_size=16, return_state=True)
    first = delta_rule_attention(q[..., :37, :], k[..., :37, :], v[..., :37, :], 0.7, mode=mode, chunk_size=16,
                                 return_state=True)
    second = delta_rule_attention(q[..., 37:, :], k[..., 37:, :], v[..., 37:, :], 0.7, mode=mode, chunk_size=16,
                                  initial_state=first[1], return_state=True)
    assert rel_rms(torch.cat([first[0], second[0]], dim=-2), whole[0]) <= TOL[dtype]
    assert rel_rms(second[1], whole[1]) <= TOL[dtype]


def test_paper_equivalence_hebbian_memory_is_linear_attention(dtype, device, gen):
    """The conditioning circuit (write v kᵀ, then read S q) is causal linear A."""
    q, k, v = qkv(50, dtype, device, gen)
    mem = AssociativeMemory(D_K, D_V, rule="hebbian", batch_shape=LEAD, device=device, dtype=dtype)
    reads = mem.run(k, v, q)
    o, S = linear_attention(q, k, v, mode="recurrent", return_state=True)
    assert rel_rms(reads, o) <= TOL[dtype]
    assert rel_rms(mem.S, S) <= TOL[dtype]


def test_paper_equivalence_delta_memory_is_delta_attention(dtype, device, gen):
    q, k, v = qkv(50, dtype, device, gen, unit_keys=True)
    mem = AssociativeMemory(D_K, D_V, rule="delta", lr=0.6, batch_shape=LEAD, device=device, dtype=dtype)
    assert rel_rms(mem.run(k, v, q), delta_rule_attention(q, k, v, 0.6, mode="chunk", chunk_size=16)) <= TOL[dtype]
    beta = torch.rand(*LEAD, 50, generator=gen, dtype=dtype).to(device)
    mem.reset()
    assert rel_rms(mem.run(k, v, q, lr=beta), delta_rule_attention(q, k, v, beta)) <= TOL[dtype]


@pytest.mark.parametrize("causal", [True, False])
def test_softmax_matches_a_plain_loop(causal, dtype, device, gen):
    q, k, v = qkv(11, dtype, device, gen)
    scale = 0.3
    out = softmax_attention(q, k, v, causal=causal, scale=scale)
    want = torch.empty_like(out)
    for t in range(11):
        s_max = t + 1 if causal else 11
        w = torch.softmax(scale * (k[..., :s_max, :] @ q[..., t, :, None])[..., 0], dim=-1)
        want[..., t, :] = (w[..., None] * v[..., :s_max, :]).sum(-2)
    assert rel_rms(out, want) <= TOL[dtype]
    default = softmax_attention(q, k, v, causal=causal)
    assert rel_rms(default, softmax_attention(q, k, v, causal=causal, scale=1 / math.sqrt(D_K))) <= TOL[dtype]


def test_leading_dims_broadcast(gen):
    """One key/value sequence shared by every head; queries per head."""
    q = torch.randn(3, 20, 4, generator=gen)
    k, v = torch.randn(20, 4, generator=gen), torch.randn(20, 6, generator=gen)
    out = linear_attention(q, k, v, mode="chunk", chunk_size=8)
    assert out.shape == (3, 20, 6)
    assert rel_rms(out[1], linear_attention(q[1], k, v, mode="recurrent")) < 1e-5


def test_callable_feature_map_and_relu(gen):
    q, k, v = qkv(30, torch.float64, "cpu", gen)
    a = linear_attention(q, k, v, feature_map=lambda x: x.relu(), mode="parallel")
    b = linear_attention(q, k, v, feature_map="relu", mode="chunk", chunk_size=8)
    assert rel_rms(a, b) <= 1e-10


def test_hebbian_norm_grows_while_oja_stays_bounded(gen):
    keys = F.normalize(torch.randn(4000, 16, generator=gen, dtype=torch.float64), dim=-1)
    values = torch.randn(4000, 8, generator=gen, dtype=torch.float64)
    norms = {}
    for rule in ("hebbian", "oja_subspace"):
        mem = AssociativeMemory(16, 8, rule=rule, lr=0.1, dtype=torch.float64)
        norms[rule] = []
        for part in range(4):
            mem.write(keys[part * 1000:(part + 1) * 1000], values[part * 1000:(part + 1) * 1000])
            norms[rule].append(mem.S.norm().item())
    hebb, oja = norms["hebbian"], norms["oja_subspace"]
    assert hebb[-1] > 1.7 * hebb[0] and all(a < b for a, b in itertools.pairwise(hebb))  # grows like √t, unbounded
    assert max(oja) < 5.0 and abs(oja[-1] - oja[1]) < 0.5 * oja[1]  # settles


# --- bad input: a ValueError/TypeError that names the argument, the expected and the given value ---

BAD_CASES = [
    ("rank", dict(q=torch.randn(4)), ValueError, "q: expected a tensor of rank >= 2"),
    ("d_k", dict(k=torch.randn(6, 3)), ValueError, "k: expected key dimension d_k (last dim of q) = 4, got 3"),
    ("T", dict(v=torch.randn(5, 2)), ValueError, "v: expected sequence length T (dim -2 of k) = 6, got 5"),
    ("dtype", dict(v=torch.randn(6, 2, dtype=torch.float64)), TypeError, "v: expected dtype torch.float32"),
    ("integer", dict(k=torch.ones(6, 4, dtype=torch.long)), TypeError, "k: expected a floating-point tensor"),
    ("mode", dict(mode="fast"), ValueError, "mode: expected one of ['parallel', 'recurrent', 'chunk'], got 'fast'"),
    ("feature map", dict(feature_map="tanh"), ValueError, "feature_map: expected one of"),
    ("chunk", dict(chunk_size=0), ValueError, "chunk_size: expected an integer >= 1, got 0"),
    ("decay nan", dict(decay=float("nan")), ValueError, "decay: expected a finite number, got nan"),
    ("decay neg", dict(decay=-0.1), ValueError, "decay: expected a number >= 0.0, got -0.1"),
    ("decay shape", dict(decay=torch.ones(5)), ValueError, "decay: expected a float or a tensor that broadcasts"),
    ("state", dict(initial_state=torch.zeros(3, 4)), ValueError, "initial_state: expected trailing shape (2, 4)"),
]


@pytest.mark.parametrize("name, change, error, message", BAD_CASES, ids=[c[0] for c in BAD_CASES])
def test_linear_attention_rejects_bad_input(name, change, error, message):
    args = dict(q=torch.randn(6, 4), k=torch.randn(6, 4), v=torch.randn(6, 2))
    args.update(change)
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")
                       .replace("]", r"\]").replace(".", r"\.")):
        linear_attention(**args)


def test_delta_and_softmax_reject_bad_input():
    q, k, v = torch.randn(6, 4), torch.randn(6, 4), torch.randn(6, 2)
    with pytest.raises(ValueError, match=re.escape("beta: expected a number >= 0.0, got -1.0")):
        delta_rule_attention(q, k, v, -1.0)
    with pytest.raises(ValueError, match="beta: expected finite values"):
        delta_rule_attention(q, k, v, torch.full((6,), float("inf")))
    with pytest.raises(ValueError, match=r"beta: expected sequence length T \(last dim of beta\) = 6, got 5"):
        delta_rule_attention(q, k, v, torch.ones(5))
    with pytest.raises(ValueError, match=re.escape("mode: expected one of ['recurrent', 'chunk'], got 'parallel'")):
        delta_rule_attention(q, k, v, 0.5, mode="parallel")
    with pytest.raises(ValueError, match=re.escape("scale: expected a number > 0.0, got 0.0")):
        softmax_attention(q, k, v, scale=0.0)
    with pytest.raises(ValueError, match=r"q: expected sequence length T \(dim -2 of k, causal attention\) = 6, got 3"):
        softmax_attention(torch.randn(3, 4), k, v)
    assert softmax_attention(torch.randn(3, 4), k, v, causal=False).shape == (3, 2)  # cross-attention is fine
    with pytest.raises(ValueError, match=r"leading .* dims must broadcast"):
        linear_attention(torch.randn(2, 6, 4), torch.randn(3, 6, 4), torch.randn(3, 6, 2))


def test_mixed_devices_are_named():
    other = "cuda" if torch.cuda.is_available() else "meta"  # a second device exists on every machine
    with pytest.raises(ValueError, match=r"k: expected device cpu .the device of q., got"):
        linear_attention(torch.randn(6, 4), torch.randn(6, 4, device=other), torch.randn(6, 2))


# --- edge cases the same in every form, and no silent divergence ---
FORMS = [("linear", m) for m in ("parallel", "recurrent", "chunk")] + [("delta", m) for m in ("recurrent", "chunk")]


def _attend(kind, mode, q, k, v, **kw):
    if kind == "linear":
        return linear_attention(q, k, v, mode=mode, **kw)
    return delta_rule_attention(q, k, v, 0.5, mode=mode, **kw)


@pytest.mark.parametrize("kind, mode", FORMS)
def test_empty_sequence_gives_an_empty_output_and_the_initial_state(kind, mode):
    q, k, v = torch.randn(2, 3, 0, 4), torch.randn(2, 3, 0, 4), torch.randn(2, 3, 0, 5)
    S0 = torch.randn(5, 4)
    o, S = _attend(kind, mode, q, k, v, initial_state=S0, return_state=True)
    assert o.shape == (2, 3, 0, 5) and S.shape == (2, 3, 5, 4)
    torch.testing.assert_close(S, S0.expand(2, 3, 5, 4))
    assert softmax_attention(q, k, v).shape == (2, 3, 0, 5)


@pytest.mark.parametrize("kind", ["linear", "delta"])
def test_a_huge_chunk_size_is_clamped_to_the_sequence(kind):
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(10, 4, generator=g, dtype=torch.float64) for _ in range(3))
    k = torch.nn.functional.normalize(k, dim=-1)
    ref = _attend(kind, "recurrent", q, k, v)
    got = _attend(kind, "chunk", q, k, v, chunk_size=10**7)  # would pad to 10^7 and allocate 10^14 floats
    torch.testing.assert_close(got, ref)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("mode", ["recurrent", "chunk"])
def test_delta_rule_in_half_precision_computes_in_float32(dtype, mode):
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 40, 8, generator=g) for _ in range(3))
    k = torch.nn.functional.normalize(k, dim=-1)
    ref = delta_rule_attention(q, k, v, 0.5, mode="recurrent")  # float32 literal recurrence
    got = delta_rule_attention(q.to(dtype), k.to(dtype), v.to(dtype), 0.5, mode=mode, chunk_size=16)
    assert got.dtype == dtype
    # only the rounding of the inputs and of the output to 8 or 11 mantissa bits separates them
    inputs_rounded = delta_rule_attention(*(x.to(dtype).float() for x in (q, k, v)), 0.5, mode="recurrent")
    eps = torch.finfo(dtype).eps  # one rounding of the output apart at most
    torch.testing.assert_close(got.float(), inputs_rounded.to(dtype).float(), rtol=2 * eps, atol=2 * eps)
    assert (got.float() - ref).abs().max() < 0.1


def test_normalize_needs_a_non_negative_feature_map():
    q, k, v = torch.randn(6, 4), torch.randn(6, 4), torch.randn(6, 2)
    with pytest.raises(ValueError, match="feature_map: normalize=True needs a non-negative feature map"):
        linear_attention(q, k, v, normalize=True)  # the default 'identity'
    with pytest.raises(ValueError, match="feature_map: normalize=True needs a non-negative feature map"):
        linear_attention(q, k, v, normalize=True, feature_map=torch.tanh)
    assert linear_attention(q, k, v, normalize=True, feature_map="elu1").shape == (6, 2)
    assert linear_attention(q, k, v, normalize=True, feature_map=torch.exp).shape == (6, 2)


@pytest.mark.parametrize("bad, error, message", [
    (lambda x: [x], TypeError, "feature_map: expected the callable to return a torch.Tensor, got list"),
    (lambda x: None, TypeError, "feature_map: expected the callable to return a torch.Tensor, got NoneType"),
    (lambda x: x.double(), TypeError, "feature_map: expected the callable to return dtype torch.float32"),
    (lambda x: x[..., :2], ValueError, r"feature_map: expected the callable to return shape \(6, 4\)"),
])
def test_feature_maps_that_return_the_wrong_thing_are_named(bad, error, message):
    with pytest.raises(error, match=message):
        linear_attention(torch.randn(6, 4), torch.randn(6, 4), torch.randn(6, 2), feature_map=bad)


def test_beta_above_two_raises_and_data_dependent_divergence_warns():
    from pavlovlab._checks import NonFiniteWarning

    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(200, 8, generator=g) for _ in range(3))
    with pytest.raises(ValueError, match=re.escape("beta: expected a number <= 2.0, got 2.5")):
        delta_rule_attention(q, torch.nn.functional.normalize(k, dim=-1), v, 2.5)
    with pytest.raises(ValueError, match=re.escape("beta: expected values <= 2.0")):
        delta_rule_attention(q, k, v, torch.full((200,), 2.5))
    with pytest.warns(NonFiniteWarning, match="delta_rule_attention: .* are the keys L2-normalised"):
        o = delta_rule_attention(q, 3 * k, v, 1.0, mode="recurrent")  # ‖k‖² ≈ 72: 1 − β‖k‖² ≪ −1
    assert not torch.isfinite(o).all()


@pytest.mark.parametrize("fn", [linear_attention, softmax_attention,
                                lambda q, k, v: delta_rule_attention(q, k, v, 0.5)])
@pytest.mark.parametrize("which", ["q", "k", "v"])
def test_non_finite_inputs_raise_naming_the_argument(fn, which):
    args = dict(q=torch.randn(6, 4), k=torch.randn(6, 4), v=torch.randn(6, 2))
    args[which][2, 1] = float("nan")
    with pytest.raises(ValueError, match=f"{which}: expected finite values, got 1 NaN/inf entry"):
        fn(**args)


def test_initial_state_with_extra_leading_dims_is_named():
    q, k, v = torch.randn(6, 4), torch.randn(6, 4), torch.randn(6, 2)
    with pytest.raises(ValueError, match=r"initial_state: expected leading dims that broadcast to .* "
                                         r"got shape \(3, 2, 4\)"):
        linear_attention(q, k, v, initial_state=torch.zeros(3, 2, 4))
    with pytest.raises(ValueError, match=r"initial_state: expected leading dims"):
        delta_rule_attention(q, k, v, 0.5, initial_state=torch.zeros(3, 2, 4))


# --- the literal forms (pavlovlab.attention.literal) are the reference of the fast kernels ---
@pytest.mark.parametrize("T", [1, 37, 64, 130])
@pytest.mark.parametrize("with_decay", [False, True])
def test_literal_linear_forms_agree_and_match_the_explicit_sum(T, with_decay):
    """The literal recurrent, parallel and chunkwise forms against the double sum o_t = Σ_{s≤t} γ^{t−s} (q_t·k_s) v_s
    plus the carried state γ^{t+1} S_0 q_t, written out for one head."""
    g = torch.Generator().manual_seed(T)
    q, k, v = qkv(T, torch.float64, "cpu", g, lead=())
    S0 = torch.randn(D_V, D_K, generator=g, dtype=torch.float64)
    gamma = 0.9 if with_decay else None
    c = 1.0 if gamma is None else gamma
    want = torch.stack([sum(c ** (t - s) * (q[t] @ k[s]) * v[s] for s in range(t + 1)) + c ** (t + 1) * (S0 @ q[t])
                        for t in range(T)])
    S_want = c ** T * S0 + sum(c ** (T - 1 - s) * torch.outer(v[s], k[s]) for s in range(T))
    for o, S in (literal.linear_recurrent(q, k, v, gamma, S0), literal.linear_parallel(q, k, v, gamma, S0),
                 literal.linear_chunkwise(q, k, v, gamma, S0, chunk_size=16)):
        torch.testing.assert_close(o, want, rtol=1e-10, atol=1e-10)
        torch.testing.assert_close(S, S_want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("T", [1, 37, 64, 130])
def test_literal_delta_chunkwise_matches_the_literal_recurrence(T):
    g = torch.Generator().manual_seed(T)
    q, k, v = qkv(T, torch.float64, "cpu", g, unit_keys=True)
    beta = 2 * torch.rand(*LEAD, T, generator=g, dtype=torch.float64)
    S0 = torch.randn(*LEAD, D_V, D_K, generator=g, dtype=torch.float64)
    want = literal.delta_recurrent(q, k, v, beta, S0)
    for C in (1, 16, 64):
        assert_same(literal.delta_chunkwise(q, k, v, beta, S0, chunk_size=C), want, torch.float64)


@pytest.mark.parametrize("with_decay", [False, True])
def test_linear_chunk_kernel_carries_the_state_across_segments_under_autograd(with_decay):
    """T = 16·chunk_size·2 + 5: three segments (the last one partial, its last chunk partial too); outputs,
    final state and the gradients of q, k, v, γ and S_0 against the literal chunkwise form."""
    C = 4
    T = 2 * SEGMENT_CHUNKS * C + 5
    g = torch.Generator().manual_seed(1)
    q, k, v = qkv(T, torch.float64, "cpu", g)
    S0 = torch.randn(*LEAD, D_V, D_K, generator=g, dtype=torch.float64)
    gamma = torch.tensor([0.97, 0.9, 1.0], dtype=torch.float64)[:, None, None] if with_decay else None
    w_o = torch.randn(*LEAD, T, D_V, generator=g, dtype=torch.float64)
    w_S = torch.randn(*LEAD, D_V, D_K, generator=g, dtype=torch.float64)

    def grads(form):
        leaves = [x.clone().requires_grad_() for x in (q, k, v, S0)]
        gam = gamma.clone().requires_grad_() if with_decay else None
        o, S = form(*leaves[:3], gam, leaves[3])
        wrt = [*leaves, gam] if with_decay else leaves
        return (o, S, *torch.autograd.grad((o * w_o).sum() + (S * w_S).sum(), wrt))

    got = grads(lambda q, k, v, gam, S0: linear_chunk_kernel(q, k, v, gam, S0, chunk_size=C))
    want = grads(lambda q, k, v, gam, S0: literal.linear_chunkwise(q, k, v, gam, S0, chunk_size=C))
    for a, b in zip(got, want, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-10)


def test_delta_chunk_kernel_carries_the_state_across_segments_under_autograd():
    C = 4
    T = 2 * SEGMENT_CHUNKS * C + 5
    g = torch.Generator().manual_seed(2)
    q, k, v = qkv(T, torch.float64, "cpu", g, unit_keys=True)
    beta = torch.rand(*LEAD, T, generator=g, dtype=torch.float64)
    S0 = torch.randn(*LEAD, D_V, D_K, generator=g, dtype=torch.float64)

    def grads(form):
        leaves = [x.clone().requires_grad_() for x in (q, k, v, beta, S0)]
        o, S = form(*leaves)
        return (o, S, *torch.autograd.grad(o.square().sum() + S.sum(), leaves))

    got = grads(lambda *x: delta_chunk_kernel(*x, chunk_size=C))
    for a, b in zip(got, grads(literal.delta_recurrent), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("mode", ["recurrent", "chunk"])
def test_delta_rule_returns_its_final_state_in_the_input_dtype(dtype, mode):
    """Computed in float32, the output and the final state come back in float16/bfloat16: the state is the
    float32 recurrence's state on the rounded inputs, rounded once."""
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 70, 8, generator=g) for _ in range(3))
    k = F.normalize(k, dim=-1)
    S0 = torch.randn(2, 8, 8, generator=g)
    o, S = delta_rule_attention(q.to(dtype), k.to(dtype), v.to(dtype), 0.5, mode=mode, chunk_size=16,
                                initial_state=S0.to(dtype), return_state=True)
    assert o.dtype == dtype and S.dtype == dtype and S.shape == (2, 8, 8)
    _, S_want = literal.delta_recurrent(*(x.to(dtype).float() for x in (q, k, v)), torch.full((2, 70), 0.5),
                                        S0.to(dtype).float())
    eps = torch.finfo(dtype).eps
    torch.testing.assert_close(S.float(), S_want.to(dtype).float(), rtol=2 * eps, atol=2 * eps)


def test_the_chunk_kernels_check_nothing_and_the_public_functions_check_once(monkeypatch):
    """A finite result costs one finiteness reduction for inputs and output together; the kernels run none."""
    import pavlovlab._checks as checks

    calls = []
    real = checks.all_finite
    monkeypatch.setattr(checks, "all_finite", lambda x: calls.append(x.shape) or real(x))  # in the doors' check
    q, k, v = qkv(100, torch.float32, "cpu", torch.Generator().manual_seed(0), unit_keys=True)
    linear_attention(q, k, v)
    delta_rule_attention(q, k, v, 0.5)
    assert calls == [(4,), (4,)]  # the sums of q, k, v and o
    calls.clear()
    linear_chunk_kernel(q, k, v, None, torch.zeros(*LEAD, D_V, D_K))
    delta_chunk_kernel(q, k, v, torch.full((*LEAD, 100), 0.5), torch.zeros(*LEAD, D_V, D_K))
    assert calls == []


# --- against independent computations: comparing the forms of one algorithm with each other cannot see a change
# in code that they share (the normaliser, the decay's bounds); here every expected value comes from a
# computation written in the test (an explicit double sum, a literal loop, autograd's numerical gradient).
DT = torch.float64


def _qkv(*lead, T=9, d_k=3, d_v=4, seed=0, shift=0.0):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(*lead, T, d_k, generator=g, dtype=DT) + shift
    k = torch.randn(*lead, T, d_k, generator=g, dtype=DT)
    v = torch.randn(*lead, T, d_v, generator=g, dtype=DT)
    return q, k, v


def _double_sum(q, k, v, gamma, phi, normalize, eps):
    """o_t = Σ_{s≤t} γ^{t−s} (φ(q_t)·φ(k_s)) v_s, divided by Σ_{s≤t} γ^{t−s} φ(q_t)·φ(k_s) + eps when
    normalising: two literal loops over t and s, one sequence at a time."""
    T, d_v = q.shape[-2], v.shape[-1]
    out = torch.zeros(T, d_v, dtype=DT)
    for t in range(T):
        num, den = torch.zeros(d_v, dtype=DT), 0.0
        for s in range(t + 1):
            w = gamma ** (t - s) * float(phi(q[t]) @ phi(k[s]))
            num += w * v[s]
            den += w
        out[t] = num / (den + eps) if normalize else num
    return out


def elu1(x):
    return F.elu(x) + 1.0


def test_normaliser_constant_is_a_small_positive_number():
    assert 0.0 < A.EPS <= 1e-5


@pytest.mark.parametrize("mode", ["parallel", "recurrent", "chunk"])
@pytest.mark.parametrize("gamma", [None, 0.8])
def test_normalised_elu1_against_an_explicit_double_sum(mode, gamma):
    # queries shifted far negative make φ(q)·z small, so that the normaliser's EPS is ~1 % of it:
    # its sign and its place in the formula are visible, not only the accumulation of z
    q, k, v = _qkv(2, T=11, shift=-7.0)
    o = pl.linear_attention(q, k, v, feature_map="elu1", normalize=True, decay=gamma, mode=mode, chunk_size=4)
    for b in range(2):
        ref = _double_sum(q[b], k[b], v[b], 1.0 if gamma is None else gamma, elu1, True, A.EPS)
        torch.testing.assert_close(o[b], ref, rtol=1e-10, atol=1e-12)
    # the EPS term matters at this scale: the same sum without it differs clearly
    ref0 = _double_sum(q[0], k[0], v[0], 1.0 if gamma is None else gamma, elu1, True, 0.0)
    assert (o[0] - ref0).abs().max() > 1e-4 * ref0.abs().max()


@pytest.mark.parametrize("mode", ["parallel", "recurrent", "chunk"])
def test_unnormalised_decay_against_an_explicit_double_sum(mode):
    q, k, v = _qkv(T=10)
    o = pl.linear_attention(q, k, v, decay=0.7, mode=mode, chunk_size=3)
    torch.testing.assert_close(o, _double_sum(q, k, v, 0.7, lambda x: x, False, 0.0), rtol=1e-10, atol=1e-12)


def test_delta_rule_against_a_literal_loop():
    q, k, v = _qkv(T=12)
    k = F.normalize(k, dim=-1)
    beta = torch.linspace(0.1, 1.5, 12, dtype=DT)
    S = torch.zeros(4, 3, dtype=DT)
    ref = []
    for t in range(12):
        S = S + beta[t] * torch.outer(v[t] - S @ k[t], k[t])
        ref.append(S @ q[t])
    for mode in ("recurrent", "chunk"):
        o = pl.delta_rule_attention(q, k, v, beta, mode=mode, chunk_size=5)
        torch.testing.assert_close(o, torch.stack(ref), rtol=1e-10, atol=1e-12)


# ----------------------------------------------------------------------------------- bounds at the edge
@pytest.mark.parametrize("mode", ["parallel", "recurrent", "chunk"])
def test_decay_bounds_at_the_edge(mode):
    q, k, v = _qkv(T=4)
    for ok in (0.0, 1.0):
        pl.linear_attention(q, k, v, decay=ok, mode=mode)
        pl.linear_attention(q, k, v, decay=torch.tensor(ok, dtype=DT), mode=mode)
    for bad in (1.0 + 1e-6, -1e-6):
        with pytest.raises(ValueError, match="decay"):
            pl.linear_attention(q, k, v, decay=bad, mode=mode)
        with pytest.raises(ValueError, match="decay"):
            pl.linear_attention(q, k, v, decay=torch.tensor(bad, dtype=DT), mode=mode)


def test_decay_one_is_no_decay_and_zero_keeps_only_the_last_write():
    q, k, v = _qkv(T=6)
    torch.testing.assert_close(pl.linear_attention(q, k, v, decay=1.0), pl.linear_attention(q, k, v))
    last = (q * k).sum(-1, keepdim=True) * v                       # o_t = (q_t·k_t) v_t
    torch.testing.assert_close(pl.linear_attention(q, k, v, decay=0.0, mode="recurrent"), last)


# --------------------------------------------------------------------------------------- gradients
def _grads(fn, *inputs):
    leaves = [x.detach().clone().requires_grad_(True) for x in inputs]
    out = fn(*leaves)
    w = torch.linspace(-1, 1, out.numel(), dtype=DT).reshape(out.shape)   # a fixed, non-uniform weighting
    (out * w).sum().backward()
    return [x.grad for x in leaves]


@pytest.mark.parametrize("normalize", [False, True])
def test_linear_forms_have_the_same_gradients(normalize):
    q, k, v = _qkv(2, T=13, d_k=3, d_v=2)
    gamma = torch.tensor([0.9, 0.6], dtype=DT)[:, None].squeeze(-1)
    S0 = torch.randn(2, 2, 3, dtype=DT, generator=torch.Generator().manual_seed(1))
    fmap = "elu1" if normalize else "identity"

    def run(mode):
        def f(q, k, v, gamma, S0):
            state = (S0, torch.ones(2, 3, dtype=DT)) if normalize else S0
            return pl.linear_attention(q, k, v, feature_map=fmap, normalize=normalize, decay=gamma, mode=mode,
                                       chunk_size=4, initial_state=state)
        return _grads(f, q, k, v, gamma, S0)

    ref = run("recurrent")
    for mode in ("parallel", "chunk"):
        for name, a, b in zip(["q", "k", "v", "decay", "S0"], run(mode), ref, strict=True):
            torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-11, msg=f"{mode}: d/d{name}")


def test_delta_forms_have_the_same_gradients():
    q, k, v = _qkv(2, T=11)
    k = F.normalize(k, dim=-1)
    beta = torch.rand(2, 11, dtype=DT, generator=torch.Generator().manual_seed(2))
    S0 = torch.randn(2, 4, 3, dtype=DT, generator=torch.Generator().manual_seed(3))

    def run(mode):
        return _grads(lambda q, k, v, b, S0: pl.delta_rule_attention(q, k, v, b, mode=mode, chunk_size=4,
                                                                     initial_state=S0), q, k, v, beta, S0)

    for name, a, b in zip(["q", "k", "v", "beta", "S0"], run("chunk"), run("recurrent"), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-11, msg=f"d/d{name}")


@pytest.mark.parametrize("mode", ["parallel", "recurrent", "chunk"])
def test_linear_attention_gradcheck(mode):
    q, k, v = _qkv(T=5, d_k=2, d_v=2)
    gamma = torch.tensor(0.8, dtype=DT)
    inputs = tuple(x.requires_grad_(True) for x in (q, k, v, gamma))
    assert torch.autograd.gradcheck(
        lambda q, k, v, g: pl.linear_attention(q, k, v, feature_map="elu1", normalize=True, decay=g, mode=mode,
                                               chunk_size=2), inputs)


@pytest.mark.parametrize("mode", ["recurrent", pytest.param("chunk", marks=pytest.mark.slow)])
def test_delta_rule_gradcheck(mode):
    q, k, v = _qkv(T=5, d_k=2, d_v=2)
    k = F.normalize(k, dim=-1).detach()
    beta = torch.full((5,), 0.5, dtype=DT)
    inputs = tuple(x.requires_grad_(True) for x in (q, k, v, beta))
    assert torch.autograd.gradcheck(lambda q, k, v, b: pl.delta_rule_attention(q, k, v, b, mode=mode, chunk_size=2),
                                    inputs)


# ---------------------------------------------------------------------------------------------------- bad input
def _empty_delta(d_k, d_v, mode):
    """With d_k = 0 every read-out S_t q_t is a sum over nothing (zeros); with d_v = 0 it is empty. The state
    keeps its (empty) initial value."""
    q = k = torch.randn(2, 5, d_k, generator=torch.Generator().manual_seed(0))
    v = torch.randn(2, 5, d_v, generator=torch.Generator().manual_seed(1))
    o, S = A.delta_rule_attention(q, k, v, 0.5, mode=mode, return_state=True)
    return o.shape == (2, 5, d_v) and bool((o == 0).all()) and S.shape == (2, d_v, d_k)


def _nan_map(x):
    return x * math.nan


def _softmax_zero_dim_uniform():
    """With d_k = 0 every score is 0: causal softmax attention is the running mean of the values."""
    v = torch.arange(6.0).reshape(1, 3, 2)
    o = A.softmax_attention(torch.zeros(1, 3, 0), torch.zeros(1, 3, 0), v, scale=1.0)
    expected = torch.tensor([[[0.0, 1.0], [1.0, 2.0], [2.0, 3.0]]])
    return bool(torch.allclose(o, expected))


def _fits(call) -> bool:
    out = call()
    return all(o.isfinite().all() for o in (out if isinstance(out, tuple) else (out,)))


def bad_input_rows() -> list:
    """Bad input of ``pavlovlab.attention.forms``: one row ``(case, call, expect, fragment)`` a case."""
    q, k, v = draw_qkv()
    e = randn(0, 4)
    ones = torch.ones(2, 3, 4)
    big = torch.full((2, 3, 4), 1e30)
    empty_k = torch.zeros(2, 0, 4)
    nan_v = torch.full((2, 5, 3), math.nan)
    return [
        ("T = 0 recurrent", lambda: A.linear_attention(e, e, randn(0, 2), mode="recurrent").shape == (0, 2), "ok", ""),
        ("T = 0 chunk", lambda: A.linear_attention(e, e, randn(0, 2), mode="chunk").shape == (0, 2), "ok", ""),
        ("T = 0 delta recurrent",
         lambda: A.delta_rule_attention(e, e, randn(0, 2), 0.5, mode="recurrent").shape == (0, 2), "ok", ""),
        ("T = 0 delta chunk", lambda: A.delta_rule_attention(e, e, randn(0, 2), 0.5).shape == (0, 2), "ok", ""),
        ("chunk_size ≫ T", lambda: torch.allclose(A.linear_attention(q, k, v, chunk_size=10**7),
                                                    A.linear_attention(q, k, v, mode="recurrent"), atol=1e-5),
         "ok", ""),
        ("delta chunk float16", lambda: A.delta_rule_attention(*(x.half() for x in (q, unit(6, 4), v)), 0.5).dtype
         == torch.float16, "ok", ""),
        ("delta chunk bfloat16", lambda: A.delta_rule_attention(*(x.bfloat16() for x in (q, unit(6, 4), v)), 0.5).dtype
         == torch.bfloat16, "ok", ""),
        ("normalize with identity map", lambda: A.linear_attention(q, k, v, normalize=True), ValueError,
         "feature_map: normalize=True needs a non-negative feature map"),
        ("beta 2.5", lambda: A.delta_rule_attention(q, unit(6, 4), v, 2.5), ValueError,
         "beta: expected a number <= 2"),
        ("unnormalised keys diverge",
         lambda: A.delta_rule_attention(*draw_qkv(200, 8, 8)[:1], 3 * randn(200, 8, seed=5), randn(200, 8), 1.0),
         "warn", "delta_rule_attention"),
        ("NaN q linear", lambda: A.linear_attention(with_nan(q), k, v), ValueError, "q: expected finite values"),
        ("inf v softmax", lambda: A.softmax_attention(q, k, v.index_fill(0, torch.tensor([1]), math.inf)), ValueError,
         "v: expected finite values"),
        ("NaN k delta", lambda: A.delta_rule_attention(q, with_nan(k), v, 0.5), ValueError,
         "k: expected finite values"),
        ("initial_state extra dims", lambda: A.linear_attention(q, k, v, initial_state=torch.zeros(3, 2, 4)),
         ValueError, "initial_state: expected leading dims"),
        ("feature map returns list", lambda: A.linear_attention(q, k, v, feature_map=lambda x: [x]), TypeError,
         "feature_map: expected the callable to return a torch.Tensor"),
        ("feature map returns None", lambda: A.linear_attention(q, k, v, feature_map=lambda x: None), TypeError,
         "feature_map: expected the callable to return a torch.Tensor"),
        ("feature map changes dtype", lambda: A.linear_attention(q, k, v, feature_map=lambda x: x.double()),
         TypeError, "feature_map: expected the callable to return dtype"),
        ("feature_map not a name", lambda: A.linear_attention(q, k, v, feature_map=3), TypeError, "feature_map:"),
        ("mode typo", lambda: A.linear_attention(q, k, v, mode="chunked"), ValueError, "mode: expected one of"),
        ("integer q", lambda: A.softmax_attention(q.long(), k, v), TypeError, "q: expected a floating-point tensor"),
        ("chunk_size 0", lambda: A.delta_rule_attention(q, k, v, 0.5, chunk_size=0), ValueError, "chunk_size:"),
        ("gated T = 0", lambda: A.scalar_gated_linear_attention(randn(0, 4), randn(0, 4), randn(0, 2), torch.ones(0),
                                                         mode="recurrent").shape == (0, 2), "ok", ""),
        ("gate > 1", lambda: A.scalar_gated_linear_attention(q, k, v, torch.full((6,), 1.5)), ValueError,
         "g: expected"),
        *[(f"delta_rule_attention(d_k = 0, mode={m!r}): zeros", lambda m=m: _empty_delta(0, 3, m), "ok", "")
          for m in A.DELTA_MODES],
        *[(f"delta_rule_attention(d_v = 0, mode={m!r}): empty", lambda m=m: _empty_delta(4, 0, m), "ok", "")
          for m in A.DELTA_MODES],
        *[(f"delta_rule_attention(d_k = 0, NaN v, mode={m!r})",
           lambda m=m: A.delta_rule_attention(torch.zeros(2, 5, 0), torch.zeros(2, 5, 0), nan_v, 0.5, mode=m),
           ValueError, "v: expected finite values") for m in A.DELTA_MODES],
        ("delta_rule_attention(d_k = 0, beta = 3)",
         lambda: A.delta_rule_attention(torch.zeros(2, 5, 0), torch.zeros(2, 5, 0), torch.zeros(2, 5, 3), 3.0),
         ValueError, "beta: expected a number <= 2.0"),
        *[(f"linear_attention(feature_map returns NaN, mode={m!r}) warns naming the feature map",
           lambda m=m: A.linear_attention(ones, ones, ones, feature_map=_nan_map, mode=m), "warn",
           "the feature map returned NaN/inf values") for m in A.LINEAR_MODES],
        ("linear_attention(1e30 q, k) still blames the size of q, k",
         lambda: A.linear_attention(big, big, ones), "warn", "very large q, k or v overflow the dtype"),
        ("softmax_attention over zero keys (causal)", lambda: A.softmax_attention(ones, empty_k, empty_k),
         ValueError, "k: expected at least one key for 3 queries"),
        ("softmax_attention over zero keys (causal=False)",
         lambda: A.softmax_attention(ones, empty_k, empty_k, causal=False), ValueError,
         "k: expected at least one key for 3 queries"),
        ("softmax_attention of zero queries over zero keys: empty",
         lambda: A.softmax_attention(empty_k, empty_k, empty_k).shape == (2, 0, 4), "ok", ""),
        ("softmax_attention(q with 3 steps, k with 2) causal names q",
         lambda: A.softmax_attention(ones, ones[:, :2], ones[:, :2]), ValueError,
         "q: expected sequence length T (dim -2 of k, causal attention) = 2, got 3"),
        ("softmax_attention(d_k = 0) with the default scale 1/√d_k",
         lambda: A.softmax_attention(torch.zeros(1, 3, 0), torch.zeros(1, 3, 0), torch.ones(1, 3, 2)), ValueError,
         "q: expected a key dimension d_k >= 1 for the default scale"),
        ("softmax_attention(d_k = 0, scale=1): the running mean of v", _softmax_zero_dim_uniform, "ok", ""),
        ("softmax_attention(T = 300,000)", lambda: pl.softmax_attention(*(column(LONG),) * 3), ValueError,
         "k: the scores, batch × T_q × T = 9e+10 float32 entries (360 GB) do not fit in the"),
        ("softmax_attention(T = 300,000, causal=False)",
         lambda: pl.softmax_attention(*(column(LONG),) * 3, causal=False), ValueError,
         "of cpu memory; softmax attention is quadratic in T"),
        ("linear_attention(mode='parallel', T = 2²⁰)", lambda: pl.linear_attention(*(column(VERY_LONG),) * 3,
                                                                                   mode="parallel"),
         ValueError, "mode: the parallel form's scores, batch × T × T = 1.1e+12 float32 entries (4.4 TB)"),
        ("linear_attention(chunk_size = T = 2²⁰)", lambda: pl.linear_attention(*(column(VERY_LONG),) * 3,
                                                                               chunk_size=VERY_LONG),
         ValueError, "chunk_size: the chunks' scores"),
        ("delta_rule_attention(chunk_size = T = 2²⁰)", lambda: pl.delta_rule_attention(*(column(VERY_LONG),) * 3, 0.5,
                                                                                       chunk_size=VERY_LONG),
         ValueError, "chunk_size: the chunks' scores"),
        ("scalar_gated_linear_attention(T = 2²⁰)", lambda: A.scalar_gated_linear_attention(
            *(column(VERY_LONG),) * 3, torch.full((VERY_LONG,), 0.9)), ValueError, "mode: the parallel form's scores"),
        ("linear_attention(T = 2²⁰) in chunks runs", lambda: _fits(lambda: pl.linear_attention(
            *(column(VERY_LONG) * 1e-3,) * 3)), "ok", ""),
        ("softmax_attention(T = 2,000) runs", lambda: _fits(lambda: pl.softmax_attention(*(column(2000),) * 3)), "ok",
         ""),
        ("softmax_attention(causal='yes')", lambda: softmax_attention(*(torch.ones(3, 2),) * 3, causal="yes"),
         TypeError, "causal: expected True or False, got str"),
        ("softmax_attention(causal=1)", lambda: softmax_attention(*(torch.ones(3, 2),) * 3, causal=1), TypeError,
         "causal: expected True or False, got int"),
    ]


@parametrize(bad_input_rows())
def test_bad_input_row(call, expect, fragment):
    check(call, expect, fragment)
