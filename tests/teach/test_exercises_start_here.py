"""The demo exercise of notebook 00: a right answer passes in float32 and float64, the classic mistake
(an average instead of a sum) fails with a question, a stub is greeted kindly, nothing raises."""

import torch

from pavlovlab.teach.exercises import start_here as start

ex = start
"""A learner's session; a fresh one before every test (``fresh_sessions`` in conftest.py)."""


def test_match_checker(capsys, fresh_sessions):
    assert ex.check_match(lambda bell, test: torch.dot(bell, test)) is True
    assert ex.check_match(lambda bell, test: float((bell * test).sum())) is True
    capsys.readouterr()
    fresh_sessions()
    assert ex.check_match(lambda bell, test: (bell * test).mean()) is False
    out = capsys.readouterr().out
    assert "❌" in out and "three features" in out and "ex.hint(1)" in out and "expected" not in out

    def stub(bell, test):
        raise NotImplementedError("Exercise 1: to do")

    assert ex.check_match(stub) is False
    assert "not yet implemented" in capsys.readouterr().out
    fresh_sessions()
    assert ex.check_match(lambda bell, test: bell * test) is False          # products, not added up: diagnosed
    out = capsys.readouterr().out
    assert "one number per feature" in out and "(expected" not in out
    for bad in (None, lambda b, t: "text", lambda b, t: torch.zeros(3)):
        assert ex.check_match(bad) is False
    assert "Traceback" not in capsys.readouterr().out


def test_reference_is_the_dot_product():
    a, b = torch.tensor([1.0, 0.0, 2.0]), torch.tensor([1.0, 0.5, 1.0])
    assert ex.match_reference(a, b).item() == 3.0
