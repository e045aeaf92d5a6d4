"""Property-based tests (hypothesis): random shapes, chunk sizes, decays and βs.

1. The forms of each algorithm agree: linear attention's parallel, recurrent and chunk forms (with and
   without decay, normalised or not, resumed from a state); the delta rule's recurrent and chunk forms;
   gated linear attention's parallel and recurrent forms. The reference is always the literal loop.
2. No public function returns NaN or inf from finite, valid input.

Tensors are drawn from a torch.Generator seeded by hypothesis (so failures shrink to a small seed and
shape). float64 throughout, so that the tolerances measure the algorithms, not the rounding. Kept fast:
few examples each, no deadline (the machine is shared).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from pavlovlab.attention import forms as A

FAST = settings(max_examples=25, deadline=None, derandomize=True, database=None)  # reproducible, no .hypothesis/

leads = st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple)
lengths = st.integers(0, 40)
dims = st.integers(1, 6)
chunks = st.integers(1, 50)
seeds = st.integers(0, 2**32 - 1)
decays = st.one_of(st.none(), st.floats(0.0, 1.0))
betas = st.floats(0.0, 2.0)


def draw(seed, *shape, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64) * scale


def close(a, b, rtol=1e-9):
    """Equal up to ``rtol`` of the output's scale (forms sum the same terms in another order)."""
    scale = max(1.0, float(b.abs().max()) if b.numel() else 1.0)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert torch.isfinite(a).all() and torch.isfinite(b).all()
    assert float((a - b).abs().max()) <= rtol * scale if b.numel() else True, float((a - b).abs().max())


# --------------------------------------------------------------------------------- forms agree
@FAST
@given(lead=leads, T=lengths, d_k=dims, d_v=dims, C=chunks, decay=decays, seed=seeds)
def test_linear_attention_forms_agree(lead, T, d_k, d_v, C, decay, seed):
    q, k, v = draw(seed, *lead, T, d_k), draw(seed + 1, *lead, T, d_k), draw(seed + 2, *lead, T, d_v)
    S0 = draw(seed + 3, d_v, d_k)
    ref, S_ref = A.linear_attention(q, k, v, decay=decay, mode="recurrent", initial_state=S0, return_state=True)
    for mode in ("parallel", "chunk"):
        o, S = A.linear_attention(q, k, v, decay=decay, mode=mode, chunk_size=C, initial_state=S0, return_state=True)
        close(o, ref)
        close(S, S_ref)


@FAST
@given(lead=leads, T=lengths, d_k=dims, d_v=dims, C=chunks, decay=decays, seed=seeds,
       fmap=st.sampled_from(["elu1", "relu"]))
def test_normalised_linear_attention_forms_agree(lead, T, d_k, d_v, C, decay, seed, fmap):
    q, k, v = draw(seed, *lead, T, d_k), draw(seed + 1, *lead, T, d_k), draw(seed + 2, *lead, T, d_v)
    ref = A.linear_attention(q, k, v, feature_map=fmap, normalize=True, decay=decay, mode="recurrent")
    for mode in ("parallel", "chunk"):
        close(A.linear_attention(q, k, v, feature_map=fmap, normalize=True, decay=decay, mode=mode, chunk_size=C),
              ref, rtol=1e-8)


@FAST
@given(T=st.integers(1, 40), split=st.floats(0.0, 1.0), d=dims, C=chunks, decay=decays, seed=seeds)
def test_linear_attention_resumes_from_its_state(T, split, d, C, decay, seed):
    q, k, v = draw(seed, T, d), draw(seed + 1, T, d), draw(seed + 2, T, d)
    cut = int(split * T)
    whole = A.linear_attention(q, k, v, decay=decay, chunk_size=C)
    first, S = A.linear_attention(q[:cut], k[:cut], v[:cut], decay=decay, chunk_size=C, return_state=True)
    second = A.linear_attention(q[cut:], k[cut:], v[cut:], decay=decay, chunk_size=C, initial_state=S)
    close(torch.cat([first, second]), whole)


@FAST
@given(lead=leads, T=lengths, d_k=dims, d_v=dims, C=st.integers(1, 16), beta=betas, seed=seeds,
       per_token=st.booleans())
def test_delta_rule_forms_agree(lead, T, d_k, d_v, C, beta, seed, per_token):
    q = draw(seed, *lead, T, d_k)
    k = F.normalize(draw(seed + 1, *lead, T, d_k), dim=-1)  # unit keys: the bound β ≤ 2 keeps S bounded
    v = draw(seed + 2, *lead, T, d_v)
    b = (torch.rand(*lead, T, generator=torch.Generator().manual_seed(seed + 4), dtype=torch.float64) * beta
         if per_token else beta)
    ref, S_ref = A.delta_rule_attention(q, k, v, b, mode="recurrent", return_state=True)
    o, S = A.delta_rule_attention(q, k, v, b, mode="chunk", chunk_size=C, return_state=True)
    # the chunk form inverts a unit-triangular system whose conditioning grows with C and β: 1e-6 of the scale
    close(o, ref, rtol=1e-6)
    close(S, S_ref, rtol=1e-6)


@FAST
@given(lead=leads, T=lengths, d=dims, seed=seeds, low=st.floats(0.05, 1.0))
def test_scalar_gated_linear_attention_forms_agree(lead, T, d, seed, low):
    from pavlovlab.attention.forms import scalar_gated_linear_attention

    q, k, v = draw(seed, *lead, T, d), draw(seed + 1, *lead, T, d), draw(seed + 2, *lead, T, d)
    g = low + (1 - low) * torch.rand(*lead, T, generator=torch.Generator().manual_seed(seed + 3), dtype=torch.float64)
    close(scalar_gated_linear_attention(q, k, v, g, mode="parallel"),
          scalar_gated_linear_attention(q, k, v, g, mode="recurrent"),
          rtol=1e-8)


# ------------------------------------------------------------------ finite in, finite out
def finite(x) -> bool:
    if isinstance(x, torch.Tensor):
        return bool(torch.isfinite(x).all())
    return bool(np.isfinite(np.asarray(x, dtype=float)).all())


@FAST
@given(lead=leads, T=lengths, d_k=dims, d_v=dims, seed=seeds, scale=st.floats(1e-3, 30.0),
       fmap=st.sampled_from(["identity", "elu1", "relu"]), normalize=st.booleans(), decay=decays)
def test_attention_is_finite_on_finite_input(lead, T, d_k, d_v, seed, scale, fmap, normalize, decay):
    q, k, v = (draw(seed + i, *lead, T, d, scale=scale) for i, d in enumerate((d_k, d_k, d_v)))
    assert finite(A.softmax_attention(q, k, v))
    assert finite(A.softmax_attention(q, k, v, causal=False))
    if not (normalize and fmap == "identity"):  # that combination raises (the normaliser crosses 0)
        assert finite(A.linear_attention(q, k, v, feature_map=fmap, normalize=normalize, decay=decay))


@FAST
@given(T=lengths, d=dims, seed=seeds, beta=betas)
def test_delta_rule_and_memory_are_finite_on_unit_keys(T, d, seed, beta):
    from pavlovlab.memory.associative import AssociativeMemory

    k = F.normalize(draw(seed, T, d), dim=-1)
    v = draw(seed + 1, T, d, scale=10.0)
    assert finite(A.delta_rule_attention(k, k, v, beta))
    for rule in ("hebbian", "delta", "oja_subspace", "oja_clamped"):
        mem = AssociativeMemory(d, d, rule=rule, lr=min(beta, 1.0), dtype=torch.float64)
        assert finite(mem.run(k, v, k))


@FAST
@given(n=st.integers(1, 10**6), d_k=st.integers(1, 10**5), d_v=st.integers(1, 4096), H=st.integers(1, 8),
       L=st.integers(0, 64), threshold=st.floats(0.01, 1.0))
def test_theory_helpers_are_finite(n, d_k, d_v, H, L, threshold):
    from pavlovlab.capacity import average as Ar
    from pavlovlab.capacity import criteria as Cp
    from pavlovlab.depth import theory as Th

    assert finite(Ar.fidelity_theory(n, d_k))
    assert finite(Ar.average_capacity_theory(d_k, threshold))
    assert finite(Cp.worst_case_bound(d_k))
    assert finite(Th.paper_bound(L, H, n, d_k))
    assert 0.0 <= Th.paper_bound(L, H, n, d_k) <= 1.0
    assert 0.0 <= Th.stack_error_theory(L, H, max(n, 2), max(d_k, 4), rule="all_fail", p_head=0.5) <= 1.0


@FAST
@given(gamma=st.floats(1e-6, 1.0, exclude_max=True), lag=st.integers(0, 10**6))
def test_decay_helpers_are_finite_below_one(gamma, lag):
    from pavlovlab.forgetting import decay as D

    assert finite(D.half_life(gamma)) and D.half_life(gamma) >= 0  # γ = 1 is "never forgets": inf by design
    assert finite(D.effective_window(gamma))
    assert finite(D.retention(gamma, torch.tensor([lag])))


@FAST
@given(T=st.integers(1, 60), alpha=st.floats(0.0, 2.0), lam=st.floats(-10.0, 10.0), seed=seeds)
def test_rescorla_wagner_is_finite_within_its_bound(T, alpha, lam, seed):
    from pavlovlab.conditioning.learning import rescorla_wagner

    present = (torch.rand(T, 1, generator=torch.Generator().manual_seed(seed)) < 0.7).double()  # one CS
    V = rescorla_wagner(present, torch.full((T,), lam, dtype=torch.float64), alpha=alpha)
    assert finite(V) and float(V.abs().max()) <= 2 * abs(lam) + 1e-9  # αβ ≤ 2: |V − λ| never grows beyond |λ|


@FAST
@given(n=st.integers(2, 40), extra=st.integers(0, 20), seed=seeds, lr=st.floats(0.0, 0.05, exclude_min=True))
def test_oja_is_finite_with_a_small_step(n, extra, seed, lr):
    from pavlovlab.forgetting.oja import oja_pca, oja_subspace

    d = 2 + extra % 4
    x = draw(seed, n, d)
    assert finite(oja_pca(x, lr=lr, generator=torch.Generator().manual_seed(0)))
    assert finite(oja_subspace(x, k=min(2, d), lr=lr, generator=torch.Generator().manual_seed(0)))
