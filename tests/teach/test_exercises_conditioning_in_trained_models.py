"""The checkers of notebook 08's exercises accept correct answers and reject the typical mistakes
(the registered ones are exercised by tests/teach/test_exercise_pedagogy.py too)."""

from __future__ import annotations

import re

import pytest
import torch

from pavlovlab import statistics
from pavlovlab.models import head_memory
from pavlovlab.phenomena import probes, sequences
from pavlovlab.teach.exercises import conditioning_in_trained_models as probe_exercises

ex = probe_exercises
"""A learner's session; a fresh one before every test (``fresh_sessions`` in conftest.py)."""


def _crosstalk_loop(keys: torch.Tensor) -> torch.Tensor:
    """A literal loop: an independent reference for the learner's vectorised answer."""
    n = keys.shape[-2]
    total = 0.0
    for j in range(n):
        for i in range(n):
            if i != j:
                total = total + (keys[..., i, :] * keys[..., j, :]).sum(-1) ** 2
    return total / n


def test_crosstalk_checker(capsys):
    assert ex.check_crosstalk(_crosstalk_loop)
    assert not ex.check_crosstalk(lambda k: (k @ k.mT).pow(2).sum((-2, -1)) / k.shape[-2])     # diagonal counted
    assert not ex.check_crosstalk(lambda k: (k @ k.mT).pow(2).sum((-2, -1)) - k.shape[-2])     # no average
    assert ex.check_crosstalk(lambda k: _crosstalk_loop(k.float()).double())                   # float32 passes
    out = capsys.readouterr().out
    assert out.count("✅") == 2 and out.count("❌") == 2


def _sweep(rule: str, n: int, rates=(0.1, 0.2, 0.4, 0.6, 0.8), hi: bool = False, **design):
    rows = []
    for lr in rates:
        e = statistics.summarize(probes.circuit_effects("blocking", rule=rule, lr=lr, n=n, **design)[None])
        rows.append((lr, e.mean, e.hi if hi else e.hi - e.mean))
    return rows


def _measures(rule_used=None, n=200, rates=(0.1, 0.2, 0.4, 0.6, 0.8), hi=False, **design):
    """A learner's blocking_sweep(rule): measures the memory it is given (or always ``rule_used``), with the
    probe's ``design`` arguments; ``hi`` reports the interval's upper end instead of its half-width."""
    def blocking_sweep(rule="delta"):
        return _sweep(rule_used or rule, n, rates, hi, **design)
    return blocking_sweep


def test_blocking_sweep_checker(capsys):
    assert ex.check_blocking_sweep(_measures())
    assert not ex.check_blocking_sweep(_measures("hebbian"))                      # the wrong memory
    assert not ex.check_blocking_sweep(_measures(rates=(0.2, 0.4, 0.6)))           # too few rates
    assert not ex.check_blocking_sweep(_measures(rates=(0.4, 0.5, 0.6, 0.7)))      # too narrow a range
    assert not ex.check_blocking_sweep(_measures(n=8, rates=(0.1, 0.2, 0.4, 0.8)))  # intervals too wide
    assert not ex.check_blocking_sweep(_measures("delta"))                        # probes delta whatever the rule
    capsys.readouterr()
    # RW's own numbers with a tight interval: right for the delta memory, but not a measurement
    exact = [(lr, sequences.rw_effect("blocking", lr=lr), 0.01) for lr in (0.1, 0.2, 0.4, 0.8)]
    assert not ex.check_blocking_sweep(lambda rule="delta": exact)
    assert "return a prediction" in capsys.readouterr().out
    assert not ex.check_blocking_sweep(lambda rule="delta": [(lr, m + 0.1, hw) for lr, m, hw in exact])
    assert not ex.check_blocking_sweep(lambda rule="delta": [(0.1, float("nan"), 0.01)] * 4)
    assert not ex.check_blocking_sweep(lambda: exact)
    assert "rule" in capsys.readouterr().out
    capsys.readouterr()


def _numbers(text: str) -> set[str]:
    return set(re.findall(r"\d+\.\d+", text))


def _expected_crosstalk_numbers() -> set[str]:
    """The expected crosstalk of the checker's cases, written as a verdict or a learner would write them."""
    g = torch.Generator().manual_seed(0)
    eye = torch.eye(4, dtype=torch.float64)
    sets = [eye, torch.stack([eye[0], eye[0], eye[1]])]
    for shape in [(5, 8), (3, 6, 4), (2, 2, 7, 16)]:
        k = torch.randn(*shape, generator=g, dtype=torch.float64)
        sets.append(k / k.norm(dim=-1, keepdim=True))
    values = torch.cat([head_memory.mean_squared_overlap(k).flatten() for k in sets]).tolist()
    return {f"{v:.{p}f}" for v in values for p in (2, 3, 4)} | {f"{v:.4g}" for v in values}


@pytest.mark.parametrize("mistake, says", [(m, h) for m, h in probe_exercises.CROSSTALK_MISTAKES])
def test_each_crosstalk_mistake_gets_its_own_hint_and_no_expected_number(mistake, says, capsys):
    assert not ex.check_crosstalk(mistake)
    out = capsys.readouterr().out
    assert says in out, out
    assert not _numbers(out.split("Hint:")[0]) & _expected_crosstalk_numbers(), out


def test_a_repeated_key_is_labelled_as_crosstalk_not_as_self_overlap(capsys):
    """The case of a key stored twice says that the copy is another key (it counts), never that a key
    interferes with itself (which would point the learner the wrong way)."""
    def per_pair(k):
        n = k.shape[-2]
        return head_memory.mean_squared_overlap(k) / (n - 1)
    assert not ex.check_crosstalk(per_pair)
    out = capsys.readouterr().out
    assert "each copy is another key to the other" in out and "interfere with itself" not in out, out


def _rw_numbers(rates) -> set[str]:
    values = [sequences.rw_effect("blocking", lr=lr) for lr in rates]
    values += [probe_exercises.hebbian_blocking(lr)[0] for lr in rates]
    return {f"{v:.{p}f}" for v in values for p in (2, 3, 4)}


@pytest.mark.slow
@pytest.mark.parametrize("what, sweep, says", [
    ("the Hebbian memory probed", _measures("hebbian"), "writes a prediction error"),
    ("too few sequences", _measures(n=20, rates=(0.1, 0.2, 0.4, 0.8)), "how many did you use"),
    ("the additive compound", _measures(compound="sum"), "additive compound"),
    ("three trials per block", _measures(m=3), "another number of trials per block"),
    ("the interval's upper end for its half-width", _measures(hi=True), "or its upper end"),
    ("rates too small to block", _measures(rates=(0.02, 0.04, 0.06, 0.08)), "where is blocking large"),
])
def test_each_blocking_sweep_mistake_gets_a_hint_that_fits_and_no_expected_number(what, sweep, says, capsys):
    assert not ex.check_blocking_sweep(sweep), what
    out = capsys.readouterr().out
    assert says in out, out
    assert not _numbers(out) & _rw_numbers(r[0] for r in sweep()), out


@pytest.mark.parametrize("rates", [(0.1, 0.2, 0.4, 0.8), (0.02, 0.04, 0.06, 0.08)])
def test_the_closed_form_is_never_taken_for_a_measurement(rates, capsys):
    """Rescorla–Wagner's numbers with an interval as wide as the task allows fail, also at small rates, where
    both memories block almost nothing and the Hebbian run alone cannot tell them apart."""
    exact = [(lr, sequences.rw_effect("blocking", lr=lr), probe_exercises.WIDEST) for lr in rates]
    assert not ex.check_blocking_sweep(lambda rule="delta": exact)
    out = capsys.readouterr().out
    assert "❌" in out and not _numbers(out) & _rw_numbers(rates), out
