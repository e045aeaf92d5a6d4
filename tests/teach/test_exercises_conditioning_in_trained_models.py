"""The checkers of notebook 08's exercises accept correct answers and reject the typical mistakes
(the registered ones are exercised by tests/teach/test_exercise_pedagogy.py too)."""

from __future__ import annotations

import torch

from pavlovlab import statistics
from pavlovlab.phenomena import probes
from pavlovlab.phenomena import sequences as designs
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


def _sweep(rule: str, n: int, rates=(0.1, 0.2, 0.4, 0.6, 0.8)):
    rows = []
    for lr in rates:
        e = statistics.summarize(probes.circuit_effects("blocking", rule=rule, lr=lr, n=n)[None])
        rows.append((lr, e.mean, e.hi - e.mean))
    return rows


def _measures(rule_used=None, n=200, rates=(0.1, 0.2, 0.4, 0.6, 0.8)):
    """A learner's blocking_sweep(rule): measures the memory it is given (or always ``rule_used``)."""
    def blocking_sweep(rule="delta"):
        return _sweep(rule_used or rule, n, rates)
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
    exact = [(lr, designs.rw_effect("blocking", lr=lr), 0.01) for lr in (0.1, 0.2, 0.4, 0.8)]
    assert not ex.check_blocking_sweep(lambda rule="delta": exact)
    assert "return a prediction" in capsys.readouterr().out
    assert not ex.check_blocking_sweep(lambda rule="delta": [(lr, m + 0.1, hw) for lr, m, hw in exact])
    assert not ex.check_blocking_sweep(lambda rule="delta": [(0.1, float("nan"), 0.01)] * 4)
    assert not ex.check_blocking_sweep(lambda: exact)
    assert "rule" in capsys.readouterr().out
    capsys.readouterr()
