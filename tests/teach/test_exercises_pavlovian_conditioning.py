"""The notebook-01 checkers: a correct answer passes, a wrong one fails with a hint that gives nothing
away, a stub is "not yet implemented", and nothing the learner does makes a checker raise."""

import math

import torch

from pavlovlab.conditioning.learning import hebbian_conditioning, rescorla_wagner
from pavlovlab.teach.exercises import pavlovian_conditioning as conditioning

E = conditioning
"""A learner's session; a fresh one before every test (``fresh_sessions`` in conftest.py)."""




def good_update(V, x, lam, alpha=0.3, beta=1.0):
    return V + alpha * beta * (lam - (x * V).sum()) * x


def in_place_update(V, x, lam, alpha=0.3, beta=1.0):
    V += alpha * beta * (lam - (x * V).sum()) * x
    return V


def hebbian_update(V, x, lam, alpha=0.3, beta=1.0):  # the classic mistake: no prediction error
    return V + alpha * beta * lam * x


def stub(*args, **kwargs):
    raise NotImplementedError("Exercise: to do")


def good_blocking(n_pretrain, n_compound, alpha):
    cs = torch.cat([torch.tensor([[1.0, 0.0]]).repeat(n_pretrain, 1), torch.tensor([[1.0, 1.0]]).repeat(n_compound, 1)])
    return rescorla_wagner(cs, torch.ones(n_pretrain + n_compound), alpha=alpha)[-1, 1]


def test_rw_update_checker(capsys, fresh_sessions):
    assert E.check_rw_update(good_update) is True
    assert "✅" in capsys.readouterr().out
    assert E.check_rw_update(in_place_update) is True  # copies are passed: in-place is fine
    capsys.readouterr()
    fresh_sessions()                                            # a learner's first attempt
    assert E.check_rw_update(hebbian_update) is False
    out = capsys.readouterr().out
    assert "❌" in out and "Hint" in out and "already predicts" in out   # fails at once, on the telling case
    assert "lam - " not in out and "expected [" not in out                # no formula, no numbers yet
    assert E.check_rw_update(hebbian_update) is False
    assert "expected [" not in capsys.readouterr().out                    # the same answer again: no numbers
    assert E.check_rw_update(lambda V, x, lam, alpha=0.3, beta=1.0: V + alpha * lam * x) is False
    assert "expected [" not in capsys.readouterr().out                    # nor on a 2nd: only once asked for
    assert E.check_rw_update(stub) is False
    assert "not yet implemented" in capsys.readouterr().out


def test_blocking_checker(capsys):
    assert E.check_blocked_strength(good_blocking) is True
    assert "✅" in capsys.readouterr().out
    assert E.check_blocked_strength(lambda n_pre, n_comp, alpha: 0.0) is False  # "blocking is total": no
    assert "❌" in capsys.readouterr().out
    assert E.check_blocked_strength(lambda n_pre, n_comp, alpha: float(good_blocking(n_comp, n_pre, alpha))) is False
    capsys.readouterr()
    assert E.check_blocked_strength(stub) is False
    assert "not yet implemented" in capsys.readouterr().out


def test_checkers_never_raise(capsys):
    def broken(*args, **kwargs):
        return torch.zeros(3, 3) @ torch.zeros(2, 2)

    for bad in (broken, None, 42, lambda *a, **k: "text", lambda *a, **k: None, lambda *a, **k: torch.zeros(7)):
        assert E.check_rw_update(bad) is False
        assert E.check_blocked_strength(bad) is False
    out = capsys.readouterr().out
    assert "Traceback" not in out and out.count("❌") == 12


def test_references_agree_with_hand_computation():
    V, x = torch.tensor([0.2, -0.1]), torch.tensor([1.0, 1.0])
    torch.testing.assert_close(E.reference_rw_update(V, x, 1.0, alpha=0.5), torch.tensor([0.65, 0.35]))
    assert E.reference_blocked_strength(0, 40, 0.3) > 0.49
    assert E.reference_blocked_strength(40, 10, 0.3) < 0.01


# --- Exercise 3: the designed measurement ---------------------------------------------------------

def test_blocking_sweep_checker_judges_the_curve(capsys, fresh_sessions):
    n_pre = torch.arange(0, 31, 3)
    good = torch.tensor([float(good_blocking(int(n), 30, 0.2)) for n in n_pre])
    assert E.check_blocking_sweep(n_pre, good, 0.2, 30) is True
    out = capsys.readouterr().out
    assert "✅" in out and f"{-math.log(0.8):.3f}" in out
    # float32 simulation (the learner's natural dtype) passes too
    assert E.check_blocking_sweep(n_pre.tolist(), good.float(), 0.2, 30) is True
    capsys.readouterr()
    # the Hebbian rule: no blocking at any length
    heb = torch.tensor([hebbian_conditioning(torch.cat([torch.tensor([[1.0, 0.0]]).repeat(int(n), 1),
                        torch.tensor([[1.0, 1.0]]).repeat(30, 1)]), torch.ones(int(n) + 30), alpha=0.2)[-1, 1].item()
                        for n in n_pre])
    fresh_sessions()
    assert E.check_blocking_sweep(n_pre, heb, 0.2, 30) is False
    first = capsys.readouterr().out
    assert "❌" in first and "expected" not in first
    assert E.check_blocking_sweep(n_pre, heb, 0.2, 30) is False
    assert "expected" not in capsys.readouterr().out                      # the same answer again
    assert E.check_blocking_sweep(n_pre, heb * 0.5, 0.2, 30) is False
    assert "expected" not in capsys.readouterr().out                      # nor on a 2nd: only once asked for
    # too few lengths, lengths that miss the control, mismatched shapes, NaN
    for n, v in ((torch.tensor([30]), good[-1:]), (torch.arange(5, 31, 5), good[:6]),
                 (n_pre, good[:-1]), (n_pre, torch.full_like(good, math.nan)), (None, None)):
        assert E.check_blocking_sweep(n, v, 0.2, 30) is False
    assert "Traceback" not in capsys.readouterr().out
