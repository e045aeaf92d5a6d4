"""The checkers of notebook 06: a right answer passes, a wrong one fails, a stub says "not yet implemented",
and nothing ever raises."""

import torch

from pavlovlab.exercises import rules


def _stub(*args, **kwargs):
    raise NotImplementedError("Exercise: to do")


def _broken(*args, **kwargs):
    raise IndexError("oops")


def test_delta_write(capsys):
    assert rules.check_delta_write(lambda S, k, v, beta: S + beta * torch.outer(v - S @ k, k))
    assert "✅" in capsys.readouterr().out
    assert not rules.check_delta_write(lambda S, k, v, beta: S + beta * torch.outer(v, k))   # Hebbian: no error
    out = capsys.readouterr().out
    assert "❌" in out and "Hint" in out
    assert not rules.check_delta_write(_stub)
    assert "not yet implemented" in capsys.readouterr().out
    assert not rules.check_delta_write(_broken)
    assert "IndexError" in capsys.readouterr().out


def test_oja_fixed_point_accepts_either_sign(capsys):
    assert rules.check_oja_fixed_point(lambda C: torch.linalg.eigh(C).eigenvectors[:, -1])
    assert rules.check_oja_fixed_point(lambda C: -torch.linalg.eigh(C).eigenvectors[:, -1])
    assert capsys.readouterr().out.count("✅") == 2
    assert not rules.check_oja_fixed_point(lambda C: torch.linalg.eigh(C).eigenvectors[:, 0])   # smallest
    assert "❌" in capsys.readouterr().out
    assert not rules.check_oja_fixed_point(lambda C: 2 * torch.linalg.eigh(C).eigenvectors[:, -1])  # not unit
    assert "❌" in capsys.readouterr().out
    assert not rules.check_oja_fixed_point(_stub)
    assert "not yet implemented" in capsys.readouterr().out
    assert not rules.check_oja_fixed_point("eigenvector")
    assert "❌" in capsys.readouterr().out
    assert not rules.check_oja_fixed_point(lambda C: "top")
    assert "❌" in capsys.readouterr().out


def test_unstable_beta(capsys):
    assert rules.check_unstable_beta(lambda: 2.0) and rules.check_unstable_beta(2)
    assert "✅" in capsys.readouterr().out
    assert not rules.check_unstable_beta(lambda: 1.0)
    assert "❌" in capsys.readouterr().out
    assert not rules.check_unstable_beta(_stub)
    assert "not yet implemented" in capsys.readouterr().out
    assert not rules.check_unstable_beta(lambda: "two")
    assert "❌" in capsys.readouterr().out
