"""Tests of pavlovlab.capacity: capacity on actual read-outs under each retrieval criterion, and its scaling."""

import math

import pytest
import torch
from badinput import NAN, check, parametrize

from pavlovlab.capacity import criteria as C


# ------------------------------------------------------------------------ capacity on actual read-outs
def test_worst_case_bound():
    assert C.worst_case_bound(2 / math.pi).item() == pytest.approx(1.0)


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


def test_a_read_out_exactly_at_the_threshold_meets_the_criterion(monkeypatch):
    # cosine (a): "cosine >= threshold". A recomputed cosine can differ from the criterion's own by an ulp (the
    # BLAS kernels vary with the thread count), so the criterion here reads a worst-cosine curve of exact binary
    # fractions: 1 after one write, 0.75 after two, 0.5 after three
    def curve(weights, written, targets):
        steps = torch.tensor([1.0, 0.75, 0.5, 0.5], dtype=targets.dtype)
        return steps.expand(*targets.shape[:-2], 4)

    monkeypatch.setattr(C, "_min_cosine_curve", curve)

    def capacity(threshold):
        return C.retrieval_capacity(4, "cosine", threshold=threshold, trials=3, n_max=4, dtype=torch.float64,
                                    generator=torch.Generator().manual_seed(0)).capacity.tolist()

    assert capacity(0.75) == [2] * 3 and capacity(math.nextafter(0.75, 1.0)) == [1] * 3
    # adversarial (c): fails once the crosstalk reaches the signal, Σ|G_ij| >= G_jj. In one dimension the keys
    # are ±1, so the second write's crosstalk equals the signal exactly: every trial holds one pair, never two
    adversarial = C.retrieval_capacity(1, "adversarial", trials=10, n_max=4, generator=torch.Generator().manual_seed(0))
    assert (adversarial.capacity == 1).all()


@pytest.mark.slow
def test_softmax_capacity_grows_with_inverse_temperature():
    runs = [C.retrieval_capacity(32, "cosine", rule="softmax", beta=b, trials=100, n_max=96,
                                 generator=torch.Generator().manual_seed(2)) for b in (0.5, 1.0, 2.0)]
    assert not any(r.censored.any() for r in runs)
    means = [r.capacity.double().mean().item() for r in runs]
    assert means[0] < means[1] < means[2], means


@pytest.mark.parametrize("call, err, words", [
    (lambda: C.worst_case_bound(-1), ValueError, "d_k"),
    (lambda: C.retrieval_capacity(8, "median"), ValueError, "criterion"),
    (lambda: C.retrieval_capacity(8, "adversarial", rule="delta"), ValueError, "rule"),
    (lambda: C.retrieval_capacity(0, "cosine"), ValueError, "d_k"),
    (lambda: C.capacity_scaling([16], "cosine"), ValueError, "d_ks"),
])
def test_new_bad_inputs_are_rejected(call, err, words):
    with pytest.raises(err, match=words):
        call()


@pytest.mark.parametrize("call, err, words", [
    (lambda g: C.capacity_scaling([8, 16], "cosine", trials=3, resamples=1, generator=g), ValueError, "resamples"),
    (lambda g: C.capacity_scaling([8, 16], "cosine", n_max=lambda d: 8 if d == 8 else 0, trials=3, generator=g),
     ValueError, "n_max: expected an integer >= 1, got 0"),
    (lambda g: C.capacity_scaling([8, 16], "cosine", trials=3, d_v=2**40, n_max=lambda d: 1 if d == 8 else 2,
                                  generator=g), ValueError, "shape: \\(\\*shape, d\\)"),
    (lambda g: C.capacity_scaling([8, 8], "cosine", trials=3, generator=g), ValueError,
     "d_ks: expected at least two distinct values to fit a slope, got 2 times 8"),
    (lambda g: C.retrieval_capacity(2, "cosine", n_max=1, trials=1, d_v=2**40, generator=g), ValueError,
     "shape: \\(\\*shape, d\\)"),
])
def test_bad_input_is_refused_before_anything_is_drawn(call, err, words):
    """Every d_k's run, the values' draw and the bootstrap are checked at the door: a bad argument of the last
    d_k (or one only the fit or the draw of values reads) stops the scaling before its first draw."""
    g = torch.Generator().manual_seed(0)
    before = g.get_state()
    with pytest.raises(err, match=words):
        call(g)
    assert torch.equal(g.get_state(), before)


def test_capacity_scaling_evaluates_n_max_once_per_key_dimension():
    calls = []
    s = C.capacity_scaling([4, 8], "cosine", n_max=lambda d: calls.append(d) or 2 * d, trials=3, resamples=10,
                           generator=torch.Generator().manual_seed(0))
    assert calls == [4, 8] and s.d_ks == [4, 8]


def test_capacity_scaling_passes_retrieval_capacity_s_keywords_on():
    """Every keyword of retrieval_capacity reaches it, as checked (kind, trials, a dtype by name)."""
    s = C.capacity_scaling([4, 8], "argmax", trials=3, kind="gaussian", dtype="float64", resamples=10,
                           generator=torch.Generator().manual_seed(0))
    g = torch.Generator().manual_seed(0)
    direct = [C.retrieval_capacity(d, "argmax", trials=3, kind="gaussian", dtype=torch.float64, generator=g)
              for d in (4, 8)]
    assert all(torch.equal(a, r.capacity) for a, r in zip(s.capacities, direct, strict=True))


# ---------------------------------------------------------------------------------------------------- bad input
def _local_slopes_by_hand():
    """d_k 4 -> 16, mean 2 -> 8: slope ln 4 / ln 4 = 1; se = √(0.1² + 0.05²) / ln 4 (relative errors 0.2/2, 0.4/8)."""
    b, se = C.local_slopes(_scaling([4, 16], [2.0, 8.0], [0.2, 0.4]))
    return math.isclose(float(b[0]), 1.0, abs_tol=1e-12) and \
        math.isclose(float(se[0]), math.sqrt(0.1 ** 2 + 0.05 ** 2) / math.log(4), rel_tol=1e-12)


def _scaling(d_ks, mean, sem):
    mean, sem = torch.tensor(mean, dtype=torch.float64), torch.tensor(sem, dtype=torch.float64)
    return C.CapacityScaling(d_ks, mean, sem, torch.zeros(len(mean)), 1.0, 0.0, [])


def bad_input_rows() -> list:
    """Bad input of ``pavlovlab.capacity.criteria``: one row ``(case, call, expect, fragment)`` a case."""
    return [
        ("worst_case_bound(nan)", lambda: C.worst_case_bound(NAN), ValueError, "d_k: expected finite numbers"),
        ("worst_case_bound(inf)", lambda: C.worst_case_bound(math.inf), ValueError, "d_k: expected finite numbers"),
        ("nearer_law(tuple)", lambda: C.nearer_law((0.5, 0.01)), TypeError, "scaling: expected a CapacityScaling"),
        ("local_slopes(None)", lambda: C.local_slopes(None), TypeError, "scaling: expected a CapacityScaling"),
        ("local_slopes(NaN mean)", lambda: C.local_slopes(_scaling([4, 8], [1.0, NAN], [0.0, 0.0])), ValueError,
         "scaling.mean: expected finite values"),
        ("local_slopes(3 d_ks, 2 means)", lambda: C.local_slopes(_scaling([4, 8, 16], [1.0, 2.0], [0.0, 0.0])),
         ValueError, "scaling.mean: expected the length of scaling.d_ks, 3, got 2"),
        ("local_slopes(repeated d_k)", lambda: C.local_slopes(_scaling([4, 4], [1.0, 2.0], [0.0, 0.0])), ValueError,
         "scaling.d_ks: expected distinct key dimensions"),
        ("local_slopes(negative sem)", lambda: C.local_slopes(_scaling([4, 8], [1.0, 2.0], [0.1, -0.1])),
         ValueError, "scaling.sem: expected standard errors >= 0"),
        ("local_slopes(zero mean)", lambda: C.local_slopes(_scaling([4, 8], [0.0, 2.0], [0.0, 0.0])), ValueError,
         "scaling: expected positive mean capacities"),
        ("local_slopes of mean ∝ d_k: slope 1, delta-method se", _local_slopes_by_hand, "ok", ""),
        ("capacity_scaling([8], 'cosine')", lambda: C.capacity_scaling([8], "cosine"), ValueError,
         "d_ks: expected a sequence of at least two"),
        ("retrieval_capacity(8, 'nope')", lambda: C.retrieval_capacity(8, "nope"), ValueError,
         "criterion: expected one of"),
        ("scaling_residuals with fewer capacities", lambda: C.scaling_residuals([8, 16], [1.0]), ValueError,
         "capacities: expected the length of d_ks, 2, got 1"),
        ("scaling_residuals at d_k = 1, where d_k / log d_k is undefined",
         lambda: C.scaling_residuals([1, 4, 16], [1.0, 2.0, 3.0]), ValueError, "d_ks: expected numbers > 1.0, got 1"),
    ]


@parametrize(bad_input_rows())
def test_bad_input_row(call, expect, fragment):
    check(call, expect, fragment)
