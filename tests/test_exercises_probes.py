"""The checkers of notebook 08's exercises accept correct answers and reject the typical mistakes
(the registered ones are exercised by tests/test_exercise_pedagogy.py too)."""

from __future__ import annotations

import torch

from pavlovlab import designs, probes
from pavlovlab.statistics import summarize
from pavlovlab.teach.exercises import probes as ex


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
        e = summarize(probes.circuit_effects("blocking", rule=rule, lr=lr, n=n)[None])
        rows.append((lr, e.mean, e.hi - e.mean))
    return rows


def test_blocking_sweep_checker(capsys):
    assert ex.check_blocking_sweep(_sweep("delta", 200))
    assert not ex.check_blocking_sweep(_sweep("hebbian", 200))                  # the wrong memory
    assert not ex.check_blocking_sweep(_sweep("delta", 200, rates=(0.2, 0.4, 0.6)))   # too few rates
    assert not ex.check_blocking_sweep(_sweep("delta", 200, rates=(0.4, 0.5, 0.6, 0.7)))  # too narrow a range
    assert not ex.check_blocking_sweep(_sweep("delta", 8, rates=(0.1, 0.2, 0.4, 0.8)))    # intervals too wide
    # RW's own numbers with a tight interval pass; shifted by 0.1 they fail: the judge looks at the theory
    exact = [(lr, designs.rw_effect("blocking", lr=lr), 0.01) for lr in (0.1, 0.2, 0.4, 0.8)]
    assert ex.check_blocking_sweep(exact)
    assert not ex.check_blocking_sweep([(lr, m + 0.1, hw) for lr, m, hw in exact])
    assert not ex.check_blocking_sweep([(0.1, float("nan"), 0.01)] * 4)
    capsys.readouterr()
