"""The checkers of notebook 04: right answers pass, wrong ones fail, stubs are greeted kindly, and nothing raises."""

import math

import pytest
import torch

from pavlovlab.teach.exercises import capacity as ex


def stub(*args):
    raise NotImplementedError("Exercise: write me")


def crash(*args):
    raise IndexError("index 3 is out of bounds")


# --- correct answers, written the way a learner would ------------------------------------------

def fidelity_ok(n, d_k):
    return 1 / torch.sqrt(1 + (n - 1) / d_k)


def predicted_ok(d_k, threshold):
    return math.floor(1 + d_k * (1 / threshold**2 - 1) + 1e-9)


def capacity_ok(ns, mean_cosine, threshold):
    best = 0
    for n, c in zip(ns.tolist(), mean_cosine.tolist()):
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
    (ex.check_fidelity_theory, fidelity_ok, [fidelity_forgets_minus_one, fidelity_no_sqrt]),
    (ex.check_predicted_capacity, predicted_ok, [predicted_forgets_square, predicted_rounds]),
    (ex.check_capacity_estimate, capacity_ok, [capacity_last_above, capacity_returns_index]),
]


@pytest.mark.parametrize("check, right, wrongs", CHECKS, ids=[c[0].__name__ for c in CHECKS])
def test_right_passes_wrong_fails_stub_is_kind(check, right, wrongs, capsys):
    assert check(right) is True
    assert "✅" in capsys.readouterr().out
    for wrong in wrongs:
        assert check(wrong) is False
        out = capsys.readouterr().out
        assert "❌" in out and "Hint" in out, wrong.__name__
    assert check(stub) is False
    assert "not yet implemented" in capsys.readouterr().out
    assert check(crash) is False
    assert "IndexError" in capsys.readouterr().out
    assert check("not a function") is False
    assert "expected a function" in capsys.readouterr().out


def test_references_agree_with_the_package():
    assert ex.predicted_capacity_reference(64, 0.9) == 16
    assert ex.capacity_reference(torch.tensor([1, 2, 4]), torch.tensor([1.0, 0.5, 0.9]), 0.8) == 1
