"""Tests that catch a changed operator (issue 14 §3).

Comparing the forms of one algorithm with each other cannot see a change in code that they share (the
normaliser, the decay's bounds, the samplers). Here every expected value comes from an independent
computation written in the test: an explicit double sum, a literal loop, an exact moment, autograd's
numerical gradient.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

import pavlovlab as pl
from pavlovlab import attention
from pavlovlab.capacity import store_and_recall
from pavlovlab.sampling import random_keys

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
    assert 0.0 < attention.EPS <= 1e-5


@pytest.mark.parametrize("mode", ["parallel", "recurrent", "chunk"])
@pytest.mark.parametrize("gamma", [None, 0.8])
def test_normalised_elu1_against_an_explicit_double_sum(mode, gamma):
    # queries shifted far negative make φ(q)·z small, so that the normaliser's EPS is ~1 % of it:
    # its sign and its place in the formula are visible, not only the accumulation of z
    q, k, v = _qkv(2, T=11, shift=-7.0)
    o = pl.linear_attention(q, k, v, feature_map="elu1", normalize=True, decay=gamma, mode=mode, chunk_size=4)
    for b in range(2):
        ref = _double_sum(q[b], k[b], v[b], 1.0 if gamma is None else gamma, elu1, True, attention.EPS)
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


def _forward_substitution(A, R):
    """x_i = r_i − Σ_{j<i} A_ij x_j, one row at a time (A unit lower-triangular): the literal algorithm."""
    X = torch.zeros_like(R)
    for i in range(A.shape[-1]):
        X[..., i, :] = R[..., i, :] - (A[..., i, :i, None] * X[..., :i, :]).sum(-2)
    return X


@pytest.mark.parametrize("C", [1, 7, 8, 9, 64, 70])
@pytest.mark.parametrize("grad", [False, True])
def test_unit_lower_solve_against_forward_substitution(C, grad):
    """The solve of the delta rule's chunk form (blocked, in place, without autograd; solve_triangular with it),
    for sizes below, at and across its block size, against the literal row-by-row algorithm; the adversarial
    system of identical unit keys at β = 2 (A = I + 2·strictly-lower ones, whose solution alternates in sign)
    included."""
    g = torch.Generator().manual_seed(C)
    k = F.normalize(torch.randn(2, 3, C, 5, generator=g, dtype=DT), dim=-1)
    random = (k @ k.mT).tril(-1) * torch.rand(2, 3, C, 1, generator=g, dtype=DT) * 2 + torch.eye(C, dtype=DT)
    identical = 2 * torch.ones(C, C, dtype=DT).tril(-1) + torch.eye(C, dtype=DT)
    for A in (random, identical.expand(2, 3, C, C)):
        R = torch.randn(2, 3, C, 4, generator=g, dtype=DT)
        with torch.set_grad_enabled(grad):
            got = attention._unit_lower_solve(A.clone().requires_grad_(grad), R)
        torch.testing.assert_close(got, _forward_substitution(A, R), rtol=1e-10, atol=1e-10)
        got32 = attention._unit_lower_solve(A.float(), R.float())
        torch.testing.assert_close(got32.double(), _forward_substitution(A, R), rtol=1e-4, atol=1e-4)


def test_delta_chunk_across_solve_blocks_against_a_literal_loop():
    """Chunks of 64 (8 solve blocks) and of 20 (a partial block), over a length with a partial last chunk."""
    q, k, v = _qkv(T=150, d_k=6, d_v=5, seed=3)
    k = F.normalize(k, dim=-1)
    beta = torch.rand(150, generator=torch.Generator().manual_seed(4), dtype=DT) * 2
    S = torch.zeros(5, 6, dtype=DT)
    ref = []
    for t in range(150):
        S = S + beta[t] * torch.outer(v[t] - S @ k[t], k[t])
        ref.append(S @ q[t])
    for C in (64, 20):
        o, S_T = pl.delta_rule_attention(q, k, v, beta, mode="chunk", chunk_size=C, return_state=True)
        torch.testing.assert_close(o, torch.stack(ref), rtol=1e-9, atol=1e-10)
        torch.testing.assert_close(S_T, S, rtol=1e-9, atol=1e-10)


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


@pytest.mark.parametrize("mode", ["recurrent", "chunk"])
def test_delta_rule_gradcheck(mode):
    q, k, v = _qkv(T=5, d_k=2, d_v=2)
    k = F.normalize(k, dim=-1).detach()
    beta = torch.full((5,), 0.5, dtype=DT)
    inputs = tuple(x.requires_grad_(True) for x in (q, k, v, beta))
    assert torch.autograd.gradcheck(lambda q, k, v, b: pl.delta_rule_attention(q, k, v, b, mode=mode, chunk_size=2),
                                    inputs)


# ------------------------------------------------------------------------------- the key samplers
N_PAIRS = 400_000


@pytest.mark.parametrize("kind", ["gaussian", "sphere", "binary"])
def test_overlap_second_moment_is_one_over_d(kind):
    """E[(k_i·k_j)²] = 1/d exactly for independent keys of every kind (E‖k‖² = 1, isotropic). With
    400k pairs the standard error is under 0.4 %, so a variance of 1/(d+1) (11 % lower at d = 8) fails."""
    d = 8
    K = random_keys(N_PAIRS, 2, d=d, kind=kind, generator=torch.Generator().manual_seed(7), dtype=DT)
    m2 = ((K[:, 0] * K[:, 1]).sum(-1) ** 2).mean().item()
    assert abs(m2 * d - 1) < 0.02, f"{kind}: E[(k_i·k_j)²]·d = {m2 * d:.4f}"
    assert abs(m2 * (d + 1) - 1) > 0.05


def test_sphere_keys_have_unit_norm_and_binary_keys_exact_entries():
    K = random_keys(1000, d=13, kind="sphere", generator=torch.Generator().manual_seed(0), dtype=DT)
    torch.testing.assert_close(K.norm(dim=-1), torch.ones(1000, dtype=DT), rtol=0, atol=1e-12)
    B = random_keys(1000, d=13, kind="binary", generator=torch.Generator().manual_seed(0), dtype=DT)
    torch.testing.assert_close(B.abs(), torch.full_like(B, 1 / math.sqrt(13)), rtol=0, atol=1e-12)
    assert 0.45 < (B > 0).double().mean().item() < 0.55


def test_orthogonal_keys_are_orthonormal_frames():
    K = random_keys(5, 12, d=6, kind="orthogonal", generator=torch.Generator().manual_seed(0), dtype=DT)
    for frame in (K[:, :6], K[:, 6:]):
        torch.testing.assert_close(frame @ frame.mT, torch.eye(6, dtype=DT).expand(5, 6, 6), rtol=0, atol=1e-12)


def test_exact_ties_count_as_recall_failures():
    """Binary keys can coincide exactly: two identical keys give two identical read-outs, which tie; a
    recall that cannot tell the two values apart is a failure, not a success."""
    k = torch.tensor([[1.0, 1.0], [1.0, 1.0]], dtype=DT) / math.sqrt(2)
    v = torch.eye(2, dtype=DT)
    m = store_and_recall(k, v)
    assert not m.correct.any()
    k3 = torch.tensor([[1.0, 1.0], [1.0, -1.0]], dtype=DT) / math.sqrt(2)   # orthogonal: both recalled
    assert store_and_recall(k3, v).correct.all()
