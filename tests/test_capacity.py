"""Tests of pavlovlab.capacity: key distributions, the store-and-recall experiment, theory and capacity estimators."""

import math

import pytest
import torch

from pavlovlab import AssociativeMemory
from pavlovlab import capacity as C


# ------------------------------------------------------------------------------------------- sampling
@pytest.mark.parametrize("kind", C.KINDS)
def test_random_keys_shapes_norms_and_devices(kind, device, dtype):
    K = C.random_keys(3, 40, d=16, kind=kind, generator=torch.Generator().manual_seed(1), device=device, dtype=dtype)
    assert K.shape == (3, 40, 16) and K.dtype == dtype and K.device.type == device.type
    ref = C.random_keys(3, 40, d=16, kind=kind, generator=torch.Generator().manual_seed(1), dtype=dtype)
    torch.testing.assert_close(K.cpu(), ref)  # drawn on the CPU generator, then moved
    norms2 = K.pow(2).sum(-1)
    if kind == "gaussian":
        assert abs(norms2.mean().item() - 1) < 0.1
    else:
        torch.testing.assert_close(norms2, torch.ones_like(norms2), rtol=1e-5, atol=1e-5)
    if kind == "binary":
        torch.testing.assert_close(K.abs(), torch.full_like(K, 0.25))


def test_orthogonal_keys_form_orthonormal_frames(gen):
    K = C.random_keys(2, 20, d=8, kind="orthogonal", generator=gen, dtype=torch.float64)
    G = K @ K.mT
    for a in range(0, 16, 8):  # the two full frames: exactly orthonormal
        torch.testing.assert_close(G[:, a:a + 8, a:a + 8], torch.eye(8, dtype=torch.float64).expand(2, 8, 8))
    assert G[:, :8, 8:16].abs().max() > 0.1  # independent frames are not orthogonal to each other


def test_random_values_and_single_shapes(gen):
    assert C.random_values(5, d=7, generator=gen).shape == (5, 7)
    assert C.random_keys(d=4, kind="orthogonal", generator=gen).shape == (4,)
    assert C.random_keys((2, 3), d=4, generator=gen).shape == (2, 3, 4)


@pytest.mark.parametrize("kwargs, err, words", [
    (dict(d=0), ValueError, "d: expected an integer >= 1"),
    (dict(d=4, kind="uniform"), ValueError, "kind: expected one of"),
    (dict(d=4, dtype=torch.int64), TypeError, "dtype"),
    (dict(d=4.0), TypeError, "d: expected an integer"),
    (dict(d=4, generator=0), TypeError, "generator"),
])
def test_random_keys_rejects_bad_input(kwargs, err, words):
    with pytest.raises(err, match=words):
        C.random_keys(3, **kwargs)
    with pytest.raises(ValueError, match="shape"):
        C.random_keys(-1, d=3)


# ----------------------------------------------------------------------------------------- experiment
def test_store_and_recall_matches_the_memory_and_the_gram_shortcut(gen):
    K = C.random_keys(4, 30, d=12, generator=gen, dtype=torch.float64)
    V = C.random_values(4, 30, d=9, generator=gen, dtype=torch.float64)
    m = C.store_and_recall(K, V)
    mem = AssociativeMemory(12, 9, batch_shape=(4,), dtype=torch.float64)
    mem.write(K, V)
    read = mem.read(K)
    torch.testing.assert_close(m.cosine, torch.nn.functional.cosine_similarity(read, V, dim=-1))
    torch.testing.assert_close(m.sq_error, (read - V).pow(2).sum(-1))
    scores = read @ V.mT
    torch.testing.assert_close(m.correct, scores.argmax(-1) == torch.arange(30))
    # one-hot values: the Gram shortcut gives the same numbers for every prefix n
    ns = [1, 7, 18, 30]
    fast = C.recall_from_keys(K, ns)
    for b, n in enumerate(ns):
        slow = C.store_and_recall(K[:, :n], torch.eye(n, dtype=torch.float64).expand(4, n, n))
        torch.testing.assert_close(fast.cosine[:, b, :n], slow.cosine)
        torch.testing.assert_close(fast.sq_error[:, b, :n], slow.sq_error)
        torch.testing.assert_close(fast.crosstalk[:, b, :n], slow.crosstalk)
        assert torch.equal(fast.correct[:, b, :n], slow.correct)
        assert fast.cosine[:, b, n:].isnan().all() and not fast.correct[:, b, n:].any()


def test_recall_sweep_same_numbers_on_every_device(device):
    a = C.recall_sweep(8, [1, 4, 9, 20], trials=5, generator=torch.Generator().manual_seed(3), device=device)
    b = C.recall_sweep(8, [1, 4, 9, 20], trials=5, generator=torch.Generator().manual_seed(3))
    assert a.cosine.shape == (5, 4, 20) and a.cosine.device.type == device.type
    torch.testing.assert_close(a.cosine.cpu(), b.cosine, equal_nan=True, rtol=1e-5, atol=1e-5)
    assert torch.equal(a.correct.cpu(), b.correct)


@pytest.mark.parametrize("d_k, ratio, trials", [(32, 4.0, 60), (128, 4.0, 16), (512, 2.0, 6)])
def test_mean_cosine_matches_theory_within_2_percent(d_k, ratio, trials):
    ns = C.n_grid(d_k, points=12, max_ratio=ratio)
    m = C.recall_sweep(d_k, ns, trials=trials, generator=torch.Generator().manual_seed(d_k))
    measured = m.cosine.double().nanmean(-1).mean(0)
    theory = C.fidelity_theory(ns, d_k)
    assert ((measured - theory).abs() / theory).max() < 0.02


def test_orthogonal_keys_recall_perfectly_up_to_d_k_and_not_beyond(gen):
    d = 24
    ns = torch.arange(1, 2 * d + 1)
    m = C.recall_sweep(d, ns, trials=20, kind="orthogonal", generator=gen, dtype=torch.float64)
    worst = m.cosine.nan_to_num(nan=1.0).amin(dim=(0, 2))  # the worst item over trials, for each n
    assert (worst[:d] > 1 - 1e-9).all() and (worst[d:] < 0.99).all()
    per_n = (m.correct | m.cosine.isnan()).all(-1).all(0)
    assert per_n[:d].all()
    assert C.capacity_from_fidelity(ns, m.cosine, threshold=0.999) == d


def test_average_capacity_grows_linearly_with_d_k():
    d_ks = [16, 32, 64, 128, 256]
    caps = []
    for d in d_ks:
        ns = C.n_grid(d, points=40, max_ratio=1.2)
        m = C.recall_sweep(d, ns, trials=20, generator=torch.Generator().manual_seed(d))
        caps.append(C.capacity_from_fidelity(ns, m.cosine, threshold=0.8))
    slope = C.fit_slope(d_ks, caps)
    assert 0.85 <= slope <= 1.15, (caps, slope)
    theory = C.average_capacity_theory(torch.tensor(d_ks), 0.8)
    assert ((torch.tensor(caps) / theory - 1).abs() < 0.2).all(), (caps, theory)


def test_sufficient_bound_estimator_tracks_the_half_normal_estimate():
    # The sufficient bound Σ|k_i·k_j| < 1 grows like √d_k by its definition (n − 1 terms of mean √(2/(π d_k))):
    # this checks the estimator against that closed form, it is not evidence for the paper's claim
    # (see test_adversarial_capacity_grows_as_sqrt_d_k_and_stays_below_the_typical_row for the read-outs).
    d_ks = [16, 32, 64, 128, 256, 512]
    caps = []
    for d in d_ks:
        ns = torch.arange(1, int(3 * math.sqrt(d)) + 2)
        m = C.recall_sweep(d, ns, trials=100, generator=torch.Generator().manual_seed(d))
        caps.append(C.capacity_from_crosstalk(ns, m.crosstalk, fraction=0.5))
    slope = C.fit_slope(d_ks, caps)
    assert 0.35 <= slope <= 0.65, (caps, slope)
    bound = C.worst_case_bound(torch.tensor(d_ks))
    assert ((torch.tensor(caps) / bound - 0.75).abs() < 0.3).all(), (caps, bound)


def test_crosstalk_below_one_means_every_item_is_decoded(gen):
    m = C.recall_sweep(32, C.n_grid(32), trials=30, generator=gen)
    safe = m.crosstalk < 1
    assert safe.any() and m.correct[safe].all()


def test_capacity_sweep_shapes_and_summaries(gen):
    sw = C.capacity_sweep([8, 16], points=10, trials=7, generator=gen)
    assert sw.d_ks == [8, 16] and [len(n) for n in sw.ns] == [10, 10]
    assert sw.fidelity[1].shape == (7, 10) and sw.all_correct[1].dtype == torch.bool
    torch.testing.assert_close(sw.first_cosine[0][:, 0], torch.ones(7))  # alone in the bucket: perfect
    caps = C.sweep_capacities(sw)
    assert set(caps) == {"average", "all_correct", "crosstalk"}
    assert all(isinstance(c, int) for v in caps.values() for c in v)


# -------------------------------------------------------------------------------- theory and estimators
def test_theory_curves():
    torch.testing.assert_close(C.fidelity_theory(torch.tensor([1, 33]), 32), torch.tensor([1.0, 2 ** -0.5],
                                                                                         dtype=torch.float64))
    assert C.average_capacity_theory(100, 0.8).item() == pytest.approx(1 + 100 * (1 / 0.64 - 1))
    assert C.worst_case_bound(2 / math.pi).item() == pytest.approx(1.0)
    assert C.fit_slope([1, 2, 4, 8], [3, 6, 12, 24]) == pytest.approx(1.0)
    assert C.fit_slope([4, 16, 64], [2, 4, 8]) == pytest.approx(0.5)


def test_estimators_on_hand_made_curves():
    ns = [1, 2, 4, 8, 16]
    assert C.capacity_from_fidelity(ns, torch.tensor([1.0, 0.9, 0.85, 0.7, 0.9]), 0.8) == 4  # first crossing
    assert C.capacity_from_fidelity(ns, torch.tensor([0.5, 0.4, 0.3, 0.2, 0.1]), 0.8) == 0
    correct = torch.tensor([[True, True, True, False, False]] * 9 + [[True, True, False, False, False]])
    assert C.capacity_all_correct(ns, correct, fraction=0.9) == 4
    assert C.capacity_all_correct(ns, correct, fraction=1.0) == 2
    worst = torch.tensor([[0.0, 0.5, 0.9, 1.2, 2.0], [0.0, 0.6, 1.1, 1.5, 2.2]])
    assert C.capacity_from_crosstalk(ns, worst, fraction=0.5) == 4
    assert C.capacity_from_crosstalk(ns, worst, fraction=1.0) == 2


@pytest.mark.parametrize("call, err, words", [
    (lambda: C.recall_from_keys(torch.randn(2, 5, 4), [1, 3, 3]), ValueError, "strictly increasing"),
    (lambda: C.recall_from_keys(torch.randn(2, 5, 4), [1.0, 2.0]), ValueError, "ns: expected"),
    (lambda: C.recall_from_keys(torch.randn(2, 5, 4), [0, 2]), ValueError, "pairs >= 1"),
    (lambda: C.recall_from_keys(torch.randn(2, 5, 4), [2, 9]), ValueError, "at least max"),
    (lambda: C.recall_from_keys([[1.0]], [1]), TypeError, "keys: expected a torch.Tensor"),
    (lambda: C.store_and_recall(torch.randn(5, 4), torch.randn(6, 3)), ValueError, "number of pairs"),
    (lambda: C.store_and_recall(torch.randn(5, 4), torch.randn(5, 3, dtype=torch.float64)), TypeError, "dtype"),
    (lambda: C.recall_sweep(0, [1]), ValueError, "d_k"),
    (lambda: C.recall_sweep(4, [1], trials=0), ValueError, "trials"),
    (lambda: C.recall_sweep(4, [1], kind="cube"), ValueError, "kind"),
    (lambda: C.fidelity_theory(0, 4), ValueError, "n: expected"),
    (lambda: C.fidelity_theory(3, 0), ValueError, "d_k"),
    (lambda: C.worst_case_bound(-1), ValueError, "d_k"),
    (lambda: C.average_capacity_theory(8, 1.5), ValueError, "threshold"),
    (lambda: C.capacity_from_fidelity([1, 2], torch.ones(3)), ValueError, "len\\(ns\\)"),
    (lambda: C.capacity_from_fidelity([1, 2], torch.ones(2), threshold=0), ValueError, "threshold"),
    (lambda: C.capacity_all_correct([1, 2], torch.ones(2)), TypeError, "boolean"),
    (lambda: C.capacity_from_crosstalk([1, 2], torch.ones(2), fraction=2.0), ValueError, "fraction"),
    (lambda: C.fit_slope([1, 2], [1, -2]), ValueError, "positive"),
    (lambda: C.fit_slope([1, 2], [1, 2, 3]), ValueError, "same length"),
    (lambda: C.capacity_sweep(16), ValueError, "d_ks"),
    (lambda: C.n_grid(16, points=0), ValueError, "points"),
])
def test_bad_inputs_are_rejected_clearly(call, err, words):
    with pytest.raises(err, match=words):
        call()


def test_n_grid():
    for d in [1, 16, 256]:
        ns = C.n_grid(d, points=24, max_ratio=4.0)
        assert len(ns) == 24 and ns[0] == 1 and ns[-1] == max(24, 4 * d)
        assert (ns[1:] > ns[:-1]).all()


# ------------------------------------------------------------- capacity on actual read-outs (issue 10)

import pavlovlab as pl  # noqa: E402


def _literal_reads(K, V, rule, beta, n):
    """Read-outs of the first n items after n writes, with the package's own memories (an independent path)."""
    if rule == "hebbian":
        mem = AssociativeMemory(K.shape[-1], V.shape[-1], batch_shape=K.shape[:-2], dtype=K.dtype, device=K.device)
        for t in range(n):
            mem.write(K[..., t, :], V[..., t, :])
        return mem.read(K[..., :n, :])
    if rule == "delta":
        _, S = pl.delta_rule_attention(K[..., :n, :], K[..., :n, :], V[..., :n, :], beta, mode="recurrent",
                                       return_state=True)
        return K[..., :n, :] @ S.mT
    return pl.softmax_attention(K[..., :n, :], K[..., :n, :], V[..., :n, :], causal=False, scale=beta)


@pytest.mark.parametrize("rule, beta", [("hebbian", 1.0), ("delta", 1.0), ("delta", 0.6), ("softmax", 3.0)])
def test_min_cosine_curve_matches_a_literal_loop_over_n(rule, beta, device, dtype):
    g = torch.Generator().manual_seed(3)
    K = C.random_keys(3, 14, d=8, kind="sphere", generator=g, device=device, dtype=dtype)
    V = C.random_values(3, 14, d=5, kind="sphere", generator=g, device=device, dtype=dtype)
    got = C.min_cosine_curve(*C.readout_weights(K, V, rule, beta), V)
    want = torch.stack([torch.cosine_similarity(_literal_reads(K, V, rule, beta, n), V[:, :n], dim=-1).amin(-1)
                        for n in range(1, 15)], dim=-1)
    tol = 1e-4 if dtype == torch.float32 else 1e-10
    torch.testing.assert_close(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("rule, beta", [("hebbian", 1.0), ("delta", 1.0), ("softmax", 2.0)])
def test_decoding_curve_matches_a_literal_argmax(rule, beta, device):
    g = torch.Generator().manual_seed(4)
    K = C.random_keys(6, 20, d=6, kind="sphere", generator=g, device=device, dtype=torch.float64)
    labels = torch.randint(0, 4, (6, 20), generator=g).to(device)
    book = torch.eye(4, dtype=torch.float64, device=device)
    got = C.decoding_curve(*C.readout_weights(K, book[labels], rule, beta), labels, book, block=7)
    want = torch.zeros(6, 20, dtype=torch.bool)
    for n in range(1, 21):
        scores = (_literal_reads(K, book[labels], rule, beta, n) @ book.mT).cpu()   # (6, n, 4)
        for t in range(6):
            want[t, n - 1] = all(
                all(scores[t, j, labels[t, j]] > scores[t, j, m] for m in range(4) if m != labels[t, j])
                for j in range(n))
    assert torch.equal(got.cpu(), want)
    assert want.any() and not want.all()   # the case exercises both outcomes


def test_first_failure_counts_leading_successes():
    ok = torch.tensor([[True, True, False, True], [True, True, True, True], [False, True, True, True]])
    assert C.first_failure(ok).tolist() == [2, 4, 0]
    with pytest.raises(TypeError, match="ok"):
        C.first_failure(torch.ones(3))


def test_unit_sphere_overlap_has_variance_exactly_one_over_d_k():
    # E[(k_i·k_j)^2] = k_jᵀ E[k_i k_iᵀ] k_j = 1/d_k for unit keys (isotropy); checked to 4 standard errors
    for d in (4, 16, 64):
        K = C.random_keys(200_000, 2, d=d, kind="sphere", generator=torch.Generator().manual_seed(d),
                          dtype=torch.float64)
        sq = (K[:, 0] * K[:, 1]).sum(-1).square()
        assert abs(sq.mean().item() - 1 / d) < 4 * sq.std().item() / math.sqrt(len(sq))


@pytest.fixture(scope="module")
def scalings():
    d_ks = [16, 32, 64, 128, 256]
    n_max = {"cosine": lambda d: d // 2 + 32, "argmax": lambda d: 3 * d // 2 + 48, "adversarial": lambda d: d // 4 + 16}
    return {c: C.capacity_scaling(d_ks, c, trials=100, n_max=n_max[c], generator=torch.Generator().manual_seed(7))
            for c in C.CRITERIA}


def test_cosine_criterion_capacity_is_linear_in_d_k(scalings):
    s = scalings["cosine"]
    assert float(s.censored.max()) == 0.0
    assert s.slope_se < 0.03
    assert abs(s.slope - 1.0) < 0.1, s    # the average-case law n ∝ d_k, 100 trials per point
    assert abs(s.slope - 0.5) > 10 * s.slope_se


def test_adversarial_capacity_grows_as_sqrt_d_k_and_stays_below_the_typical_row(scalings):
    s = scalings["adversarial"]
    assert float(s.censored.max()) == 0.0
    assert abs(s.slope - 0.5) < 0.1, s
    typical = 1 + C.worst_case_bound(torch.tensor(s.d_ks))    # where one typical row's Σ|k_i·k_j| reaches 1
    assert (s.mean < typical).all() and (s.mean > 0.5 * typical).all(), (s.mean, typical)


def test_argmax_capacity_with_a_fixed_codebook_is_far_above_sqrt_d_k(scalings):
    s = scalings["argmax"]
    assert float(s.censored.max()) == 0.0
    assert 0.75 < s.slope < 1.05, s
    assert (s.mean > 3 * scalings["adversarial"].mean).all()


def test_scaling_residuals_pick_the_generating_law():
    d_ks = [16, 32, 64, 128, 256]
    for name, f in C.SCALINGS.items():
        r = C.scaling_residuals(d_ks, [3.0 * f(d) for d in d_ks])
        assert abs(r[name]) < 1e-12
        assert min(r, key=lambda k: abs(r[k])) == name


def test_delta_rule_stores_orthogonal_keys_exactly_up_to_d_k_but_one_pass_is_not_exact_for_random_keys():
    d = 16
    orth = C.retrieval_capacity(d, "cosine", rule="delta", threshold=0.999, trials=20, n_max=2 * d, kind="orthogonal",
                                generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    assert (orth.capacity == d).all()
    rand = C.retrieval_capacity(d, "cosine", rule="delta", threshold=0.999, trials=20, n_max=2 * d,
                                generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    assert (rand.capacity < d // 2).all()


def test_softmax_capacity_grows_with_inverse_temperature():
    runs = [C.retrieval_capacity(32, "cosine", rule="softmax", beta=b, trials=100, n_max=96,
                                 generator=torch.Generator().manual_seed(2)) for b in (0.5, 1.0, 2.0)]
    assert not any(r.censored.any() for r in runs)
    means = [r.capacity.double().mean().item() for r in runs]
    assert means[0] < means[1] < means[2], means


@pytest.mark.parametrize("call, err, words", [
    (lambda: C.retrieval_capacity(8, "median"), ValueError, "criterion"),
    (lambda: C.retrieval_capacity(8, "adversarial", rule="delta"), ValueError, "rule"),
    (lambda: C.retrieval_capacity(0, "cosine"), ValueError, "d_k"),
    (lambda: C.readout_weights(torch.zeros(3, 4), torch.zeros(2, 4)), ValueError, "values"),
    (lambda: C.readout_weights(torch.zeros(3, 4), torch.zeros(3, 4), "oja"), ValueError, "rule"),
    (lambda: C.capacity_scaling([16], "cosine"), ValueError, "d_ks"),
])
def test_new_bad_inputs_are_rejected(call, err, words):
    with pytest.raises(err, match=words):
        call()
