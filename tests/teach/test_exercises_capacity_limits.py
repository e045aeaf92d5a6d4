"""The checkers of notebook 04: right answers pass (in float32 and float64, with or without a round-off guard),
typical mistakes fail with a hint that gives nothing away, stubs are greeted kindly, and nothing raises."""

import math

import pytest
import torch

from pavlovlab.capacity.readouts import adversarial_error_curve, first_failure
from pavlovlab.sampling import random_keys, random_values
from pavlovlab.teach.exercises import capacity_limits as capacity

ex = capacity
"""A learner's session; a fresh one before every test (``fresh_sessions`` in conftest.py)."""




def stub(*args):
    raise NotImplementedError("Exercise: write me")


def crash(*args):
    raise IndexError("index 3 is out of bounds")


# --- correct answers, written the way a learner would ------------------------------------------

def fidelity_ok(n, d_k):
    return 1 / torch.sqrt(1 + (n - 1) / d_k)


def fidelity_ok_float32(n, d_k):
    return (1 + (n.float() - 1) / d_k).rsqrt()


def predicted_ok(d_k, threshold):
    return math.floor(1 + d_k * (1 / threshold**2 - 1))


def predicted_ok_with_guard(d_k, threshold):  # the old reference's 1e-9 guard must not matter either
    return math.floor(1 + d_k * (1 / threshold**2 - 1) + 1e-9)


def predicted_ok_loop(d_k, threshold):  # an independent way: count up while the theory passes
    n = 1
    while 1 / math.sqrt(1 + n / d_k) >= threshold:
        n += 1
    return n


def capacity_ok(ns, mean_cosine, threshold):
    best = 0
    for n, c in zip(ns.tolist(), mean_cosine.tolist(), strict=True):
        if c < threshold:
            break
        best = n
    return best


# --- typical mistakes ----------------------------------------------------------------------------

def fidelity_forgets_minus_one(n, d_k):  # counts the item itself as crosstalk
    return 1 / torch.sqrt(1 + n / d_k)


def fidelity_no_sqrt(n, d_k):  # the variance ratio, not the cosine
    return 1 / (1 + (n - 1) / d_k)


def predicted_forgets_square(d_k, threshold):
    return math.floor(1 + d_k * (1 / threshold - 1))


def predicted_rounds(d_k, threshold):
    return round(1 + d_k * (1 / threshold**2 - 1) + 0.5)


def capacity_last_above(ns, mean_cosine, threshold):  # any later point above the threshold counts
    above = ns[mean_cosine >= threshold]
    return int(above.max()) if len(above) else 0


def capacity_returns_index(ns, mean_cosine, threshold):
    below = (mean_cosine < threshold).nonzero()
    return int(below[0]) if len(below) else len(ns)


CHECKS = [
    (ex.check_fidelity_theory, [fidelity_ok],
     [fidelity_forgets_minus_one, fidelity_no_sqrt, fidelity_ok_float32]),  # float32 for float64 n: too coarse
    (ex.check_predicted_capacity, [predicted_ok, predicted_ok_with_guard, predicted_ok_loop],
     [predicted_forgets_square, predicted_rounds]),
    (ex.check_capacity_estimate, [capacity_ok], [capacity_last_above, capacity_returns_index]),
]


@pytest.mark.parametrize("check, rights, wrongs", CHECKS, ids=[c[0].__name__ for c in CHECKS])
def test_right_passes_wrong_fails_stub_is_kind(check, rights, wrongs, capsys):
    for right in rights:
        assert check(right) is True, right.__name__
        assert "✅" in capsys.readouterr().out
    for wrong in wrongs:
        assert check(wrong) is False
        out = capsys.readouterr().out
        assert "❌" in out and "Hint" in out and "ex.hint(" in out, wrong.__name__
    assert check(stub) is False
    assert "not yet implemented" in capsys.readouterr().out
    assert check(crash) is False
    assert "IndexError" in capsys.readouterr().out
    assert check("not a function") is False
    assert "expected a function" in capsys.readouterr().out


def test_first_failure_hides_the_expected_number_second_shows_it(capsys):
    ex.check_predicted_capacity(predicted_forgets_square)
    first = capsys.readouterr().out
    assert "expected" not in first and "too small" in first
    ex.check_predicted_capacity(predicted_forgets_square)
    assert "expected" not in capsys.readouterr().out          # the same answer again is not a second attempt
    ex.check_predicted_capacity(lambda d_k, threshold: predicted_forgets_square(d_k, threshold) + 1)
    assert "expected 16" not in capsys.readouterr().out   # nor on a different one: only once asked for


def test_exercise_2_cases_avoid_exact_whole_bounds():
    # 1/0.8**2 = 1.5624999999999998: d_k = 16, θ = 0.8 sits exactly on n = 10 and could round either way
    assert not ex._far_from_whole(16, 0.8)
    for (d_k, threshold), _ in ex._capacity_cases(0):
        assert ex._far_from_whole(d_k, threshold)
        assert (predicted_ok(d_k, threshold) == predicted_ok_with_guard(d_k, threshold)
                == predicted_ok_loop(d_k, threshold))


def test_references_agree_with_independent_computations():
    assert ex.predicted_capacity_reference(64, 0.9) == predicted_ok_loop(64, 0.9) == 16
    assert ex.capacity_reference(torch.tensor([1, 2, 4]), torch.tensor([1.0, 0.5, 0.9]), 0.8) == 1


# --- Exercise 4: the designed measurement ------------------------------------------------------

def _measure(d_k, reduce, trials=100, theta=0.8):
    """A learner's measurement written as a literal loop (independent of the package's prefix sums)."""
    gen = torch.Generator().manual_seed(d_k)
    keys = random_keys(trials, d_k, d=d_k, kind="sphere", generator=gen)
    values = random_values(trials, d_k, d=d_k, kind="sphere", generator=gen)
    alive, count = torch.ones(trials, dtype=torch.bool), torch.zeros(trials)
    for n in range(1, d_k + 1):
        reads = keys[:, :n] @ (values[:, :n].mT @ keys[:, :n]).mT
        alive &= reduce(torch.cosine_similarity(reads, values[:, :n], dim=-1)) >= theta
        count += alive
    return count.mean().item()


D_KS = [16, 32, 64, 128]


@pytest.mark.slow
def test_reference_capacity_matches_a_literal_loop():
    for d in (16, 64):
        assert abs(_measure(d, lambda c: c.amin(-1), trials=200) / ex.reference_capacity(d) - 1) < 0.15


@pytest.mark.slow
def test_designed_measurement_right_passes_typical_mistakes_fail(capsys, fresh_sessions):
    right = [_measure(d, lambda c: c.amin(-1)) for d in D_KS]
    assert ex.check_capacity_slope(D_KS, right) is True
    assert "✅" in capsys.readouterr().out
    fresh_sessions()
    mean_item = [_measure(d, lambda c: c.mean(-1)) for d in D_KS]            # the average item, not the worst
    assert ex.check_capacity_slope(D_KS, mean_item) is False
    first = capsys.readouterr().out
    assert "❌" in first and "well above" in first and "the package's" not in first
    assert ex.check_capacity_slope(D_KS, mean_item) is False
    assert "the package's" not in capsys.readouterr().out                 # the same answer again
    assert ex.check_capacity_slope(D_KS, [1.1 * c for c in mean_item]) is False
    assert "the package's" not in capsys.readouterr().out                 # nor on a 2nd: only once asked for
    ex.reveal(4)
    assert "the package's" in capsys.readouterr().out                     # the numbers, on request
    bound = []                                                             # the sufficient bound Σ|k_i·k_j| < 1
    for d in D_KS:
        K = random_keys(100, d, d=d, kind="sphere", generator=torch.Generator().manual_seed(d))
        bound.append(float(first_failure(adversarial_error_curve(K)[0] < 1).double().mean()))
    assert ex.check_capacity_slope(D_KS, bound) is False
    assert "well below" in capsys.readouterr().out


@pytest.mark.parametrize("d_ks, caps, words", [
    ([16, 32], [5.0, 10.0], "at least four"),
    ([16, 20, 24, 28], [5.0, 6.0, 7.0, 8.0], "factor of 8"),
    ([16, 32, 64, 128], [5.0, 10.0, 20.0], "one measured capacity"),
    ([16, 32, 64, 128], [0.0, 10.0, 20.0, 40.0], "0 or less"),
    ([16, 32, 64, 128], [float("nan"), 10.0, 20.0, 40.0], "NaN"),
    ([16, 32], ..., "not yet implemented"),
    (..., ..., "not yet implemented"),
    ("16 32 64", [1.0, 2.0, 3.0, 4.0], "list of key dimensions"),
])
def test_designed_measurement_malformed_results_are_explained(d_ks, caps, words, capsys):
    assert ex.check_capacity_slope(d_ks, caps) is False
    out = capsys.readouterr().out
    assert ("❌" in out or "⏳" in out) and words in out, out


def test_designed_measurement_stub_is_kind(capsys):
    def boom():
        raise NotImplementedError("Exercise 4")
    from pavlovlab.teach.exercises.checking import check_measurement
    assert check_measurement(boom, lambda r: (True, ""), name="x") is False
    assert "not yet implemented" in capsys.readouterr().out
