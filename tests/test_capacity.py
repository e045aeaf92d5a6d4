"""Tests of pavlovlab.capacity: the store-and-recall experiment, theory, capacity estimators and criteria."""

import math

import pytest
import torch

from pavlovlab import AssociativeMemory
from pavlovlab import capacity as C
from pavlovlab.sampling import random_keys, random_values
from pavlovlab.statistics import fit_slope


# ----------------------------------------------------------------------------------------- experiment
def test_store_and_recall_matches_the_memory_and_the_gram_shortcut(gen):
    K = random_keys(4, 30, d=12, generator=gen, dtype=torch.float64)
    V = random_values(4, 30, d=9, generator=gen, dtype=torch.float64)
    m = C.store_and_recall(K, V)
    mem = AssociativeMemory(12, 9, batch_shape=(4,), dtype=torch.float64)
    mem.write(K, V)
    read = mem.read(K)
    torch.testing.assert_close(m.cosine, torch.nn.functional.cosine_similarity(read, V, dim=-1))
    scores = read @ V.mT
    torch.testing.assert_close(m.correct, scores.argmax(-1) == torch.arange(30))


def test_recall_sweep_gram_shortcut_matches_store_and_recall_for_every_prefix():
    # recall_sweep draws its keys from the generator exactly as random_keys does: redraw them, then store
    # the first n with one-hot values through the memory itself and compare every prefix n
    ns = [1, 7, 18, 30]
    fast = C.recall_sweep(12, ns, trials=4, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    K = random_keys(4, 30, d=12, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    for b, n in enumerate(ns):
        slow = C.store_and_recall(K[:, :n], torch.eye(n, dtype=torch.float64).expand(4, n, n))
        torch.testing.assert_close(fast.cosine[:, b, :n], slow.cosine)
        assert torch.equal(fast.correct[:, b, :n], slow.correct)
        assert fast.cosine[:, b, n:].isnan().all() and not fast.correct[:, b, n:].any()


def test_recall_sweep_same_numbers_on_every_device(device):
    if device.type == "cpu":
        pytest.skip("the reference is the CPU run itself (the CPU cosines are checked against the theory below)")
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
    slope = fit_slope(d_ks, caps)
    assert 0.85 <= slope <= 1.15, (caps, slope)
    theory = C.average_capacity_theory(torch.tensor(d_ks), 0.8)
    assert ((torch.tensor(caps) / theory - 1).abs() < 0.2).all(), (caps, theory)


def test_capacity_sweep_shapes_and_summaries(gen):
    sw = C.capacity_sweep([8, 16], points=10, trials=7, generator=gen)
    assert sw.d_ks == [8, 16] and [len(n) for n in sw.ns] == [10, 10]
    assert sw.fidelity[1].shape == (7, 10)
    torch.testing.assert_close(sw.fidelity[0][:, 0], torch.ones(7))  # alone in the bucket: perfect
    assert [C.capacity_from_fidelity(n, f) for n, f in zip(sw.ns, sw.fidelity, strict=True)] == [
        C.capacity_from_fidelity(n, f.mean(0)) for n, f in zip(sw.ns, sw.fidelity, strict=True)]


# -------------------------------------------------------------------------------- theory and estimators
def test_theory_curves():
    torch.testing.assert_close(C.fidelity_theory(torch.tensor([1, 33]), 32), torch.tensor([1.0, 2 ** -0.5],
                                                                                         dtype=torch.float64))
    assert C.average_capacity_theory(100, 0.8).item() == pytest.approx(1 + 100 * (1 / 0.64 - 1))
    assert C.worst_case_bound(2 / math.pi).item() == pytest.approx(1.0)


def test_estimators_on_hand_made_curves():
    ns = [1, 2, 4, 8, 16]
    assert C.capacity_from_fidelity(ns, torch.tensor([1.0, 0.9, 0.85, 0.7, 0.9]), 0.8) == 4  # first crossing
    assert C.capacity_from_fidelity(ns, torch.tensor([0.5, 0.4, 0.3, 0.2, 0.1]), 0.8) == 0


@pytest.mark.parametrize("call, err, words", [
    (lambda: C.store_and_recall(torch.randn(5, 4), torch.randn(6, 3)), ValueError, "number of pairs"),
    (lambda: C.store_and_recall(torch.randn(5, 4), torch.randn(5, 3, dtype=torch.float64)), TypeError, "dtype"),
    (lambda: C.recall_sweep(4, [1, 3, 3]), ValueError, "strictly increasing"),
    (lambda: C.recall_sweep(4, [1.0, 2.0]), ValueError, "ns: expected"),
    (lambda: C.recall_sweep(4, [0, 2]), ValueError, "pairs >= 1"),
    (lambda: C.recall_sweep(0, [1]), ValueError, "d_k"),
    (lambda: C.recall_sweep(4, [1], trials=0), ValueError, "trials"),
    (lambda: C.recall_sweep(4, [1], kind="cube"), ValueError, "kind"),
    (lambda: C.fidelity_theory(0, 4), ValueError, "n: expected"),
    (lambda: C.fidelity_theory(3, 0), ValueError, "d_k"),
    (lambda: C.worst_case_bound(-1), ValueError, "d_k"),
    (lambda: C.average_capacity_theory(8, 1.5), ValueError, "threshold"),
    (lambda: C.capacity_from_fidelity([1, 2], torch.ones(3)), ValueError, "len\\(ns\\)"),
    (lambda: C.capacity_from_fidelity([1, 2], torch.ones(2), threshold=0), ValueError, "threshold"),
    (lambda: C.capacity_sweep(16), TypeError, "d_ks"),
    (lambda: C.n_grid(16, points=0), ValueError, "points"),
])
def test_bad_inputs_are_rejected_clearly(call, err, words):
    with pytest.raises(err, match=words):
        call()


def test_n_grid():
    for d in [1, 16, 256]:
        ns = C.n_grid(d, points=24, max_ratio=4.0)
        assert len(ns) == min(24, 4 * d) and ns[0] == 1 and ns[-1] == 4 * d   # never past max_ratio · d_k
        assert (ns[1:] > ns[:-1]).all()


# ------------------------------------------------------------------------ capacity on actual read-outs
@pytest.fixture(scope="module")
def scalings():
    d_ks = [16, 32, 64, 128, 256]
    n_max = {"cosine": lambda d: d // 2 + 32, "argmax": lambda d: 3 * d // 2 + 48, "adversarial": lambda d: d // 4 + 16}
    return {c: C.capacity_scaling(d_ks, c, trials=100, n_max=n_max[c], generator=torch.Generator().manual_seed(7))
            for c in C.CRITERIA}


@pytest.mark.slow
def test_cosine_criterion_capacity_is_linear_in_d_k(scalings):
    s = scalings["cosine"]
    assert float(s.censored.max()) == 0.0
    assert s.slope_se < 0.03
    assert abs(s.slope - 1.0) < 0.1, s    # the average-case law n ∝ d_k, 100 trials per point
    assert abs(s.slope - 0.5) > 10 * s.slope_se


@pytest.mark.slow
def test_adversarial_capacity_grows_as_sqrt_d_k_and_stays_below_the_typical_row(scalings):
    s = scalings["adversarial"]
    assert float(s.censored.max()) == 0.0
    assert abs(s.slope - 0.5) < 0.1, s
    typical = 1 + C.worst_case_bound(torch.tensor(s.d_ks))    # where one typical row's Σ|k_i·k_j| reaches 1
    assert (s.mean < typical).all() and (s.mean > 0.5 * typical).all(), (s.mean, typical)


@pytest.mark.slow
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


@pytest.mark.slow
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
    (lambda: C.capacity_scaling([16], "cosine"), ValueError, "d_ks"),
])
def test_new_bad_inputs_are_rejected(call, err, words):
    with pytest.raises(err, match=words):
        call()


DT = torch.float64


def test_exact_ties_count_as_recall_failures():
    """Binary keys can coincide exactly: two identical keys give two identical read-outs, which tie; a
    recall that cannot tell the two values apart is a failure, not a success."""
    k = torch.tensor([[1.0, 1.0], [1.0, 1.0]], dtype=DT) / math.sqrt(2)
    v = torch.eye(2, dtype=DT)
    m = C.store_and_recall(k, v)
    assert not m.correct.any()
    k3 = torch.tensor([[1.0, 1.0], [1.0, -1.0]], dtype=DT) / math.sqrt(2)   # orthogonal: both recalled
    assert C.store_and_recall(k3, v).correct.all()
