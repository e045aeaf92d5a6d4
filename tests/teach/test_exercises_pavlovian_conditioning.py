"""The notebook-01 checkers: a correct answer passes, a wrong one fails with a hint that gives nothing
away, a stub is "not yet implemented", and nothing the learner does makes a checker raise."""

import math

import torch

from pavlovlab.conditioning.learning import blocking_theory, hebbian_conditioning, rescorla_wagner
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


def test_rw_update_checker_diagnoses_the_prediction_of_absent_cues(capsys, fresh_sessions):
    """Counting an absent CS in the prediction, or letting it change, fails on the case with an absent light."""
    for wrong, says in ((lambda V, x, lam, alpha=0.3, beta=1.0: V + alpha * beta * (lam - V.sum()) * x,
                         "also one that is absent"),
                        (lambda V, x, lam, alpha=0.3, beta=1.0: V + alpha * beta * (lam - (x * V).sum()),
                         "carry its own x_i"),
                        (lambda V, x, lam, alpha=0.3, beta=1.0: alpha * beta * (lam - (x * V).sum()) * x,
                         "the strengths after it")):
        fresh_sessions()
        assert E.check_rw_update(wrong) is False
        out = capsys.readouterr().out
        assert says in out and "expected" not in out, out


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


def test_blocking_checker_diagnoses_the_mistake(capsys, fresh_sessions):
    def run(n_pre, n_comp, alpha, *, pre=None, col=1, row=-1, rule=rescorla_wagner):
        n = n_pre if pre is None else pre
        cs = torch.cat([torch.tensor([[1.0, 0.0]]).repeat(n, 1), torch.tensor([[1.0, 1.0]]).repeat(n_comp, 1)])
        return rule(cs, torch.ones(n + n_comp), alpha=alpha)[row, col].item()

    for wrong, says in ((lambda *a: run(*a, pre=0), "as much as with no pretraining"),
                        (lambda *a: run(*a, col=0), "the bell's strength"),
                        (lambda *a: run(*a, row=-2), "one trial before the end"),
                        (lambda *a: run(*a, rule=hebbian_conditioning), "learn from the surprise")):
        fresh_sessions()
        assert E.check_blocked_strength(wrong) is False
        out = capsys.readouterr().out
        assert says in out and "expected" not in out, out


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

def good_curve(n_pre, n_compound=30, alpha=0.2):
    return torch.tensor([float(good_blocking(int(n), n_compound, alpha)) for n in n_pre])


def test_blocking_sweep_checker_judges_the_curve(capsys, fresh_sessions):
    n_pre = torch.arange(0, 31, 3)
    assert E.check_blocking_sweep(good_curve, n_pre) is True
    out = capsys.readouterr().out
    assert "✅" in out and f"{-math.log(0.8):.3f}" in out
    # a literal float64 loop over a list of lengths, returning a list, passes too
    def loop(n_pre, n_compound=30, alpha=0.2):
        out = []
        for n in n_pre:
            V = torch.zeros(2, dtype=torch.float64)
            for t in range(n + n_compound):
                x = torch.tensor([1.0, float(t >= n)], dtype=torch.float64)
                V += alpha * (1.0 - (x * V).sum()) * x
            out.append(V[1].item())
        return out
    assert E.check_blocking_sweep(loop, [0, 2, 5, 10, 20, 40]) is True
    capsys.readouterr()
    # the Hebbian rule: no blocking at any length
    def heb(n_pre, n_compound=30, alpha=0.2):
        return torch.stack([hebbian_conditioning(torch.cat([torch.tensor([[1.0, 0.0]]).repeat(int(n), 1),
                            torch.tensor([[1.0, 1.0]]).repeat(n_compound, 1)]), torch.ones(int(n) + n_compound),
                            alpha=alpha)[-1, 1] for n in n_pre])
    fresh_sessions()
    assert E.check_blocking_sweep(heb, n_pre) is False
    first = capsys.readouterr().out
    assert "❌" in first and "the same strength whatever the pretraining" in first and "expected" not in first
    assert E.check_blocking_sweep(heb, n_pre) is False
    assert "expected" not in capsys.readouterr().out                      # the same answer again
    assert E.check_blocking_sweep(lambda n_pre, n_compound=30, alpha=0.2: heb(n_pre) * 0.5, n_pre) is False
    assert "expected" not in capsys.readouterr().out                      # nor on a 2nd: only once asked for
    # too few lengths, lengths that miss the control, a wrong shape, NaN, nothing, the stub's blanks
    for fn, n in ((good_curve, torch.tensor([30])), (good_curve, torch.arange(5, 31, 5)),
                  (lambda n_pre, n_compound=30, alpha=0.2: good_curve(n_pre)[:-1], n_pre),
                  (lambda n_pre, n_compound=30, alpha=0.2: torch.full((len(n_pre),), math.nan), n_pre),
                  (None, None), (good_curve, [0.5, 1, 2, 3, 20]), (lambda n_pre: good_curve(n_pre), n_pre)):
        assert E.check_blocking_sweep(fn, n) is False
    assert E.check_blocking_sweep(good_curve, ...) is False
    out = capsys.readouterr().out
    assert "Traceback" not in out and "not yet implemented" in out


def test_blocking_sweep_catches_the_closed_form_returned_as_a_measurement(capsys, fresh_sessions):
    """The closed form equals the simulation at the exercise's setting; the checker runs the learner's function
    again with a light fainter than the bell, where the closed form is off (by a factor of about 2.5)."""
    n_pre = torch.arange(0, 31, 3)
    formulas = [
        lambda n_pre, n_compound=30, alpha=0.2: blocking_theory(torch.as_tensor(n_pre), n_compound=n_compound,
                                                                alpha=alpha),
        lambda n_pre, n_compound=30, alpha=0.2: [0.8 ** int(n) * (1 - 0.6 ** 30) / 2 for n in n_pre],
        lambda n_pre, n_compound=30, alpha=0.2: good_curve(n_pre),          # simulates, but ignores the saliences
    ]
    for formula in formulas:
        fresh_sessions()
        assert E.check_blocking_sweep(formula, n_pre) is False
        out = capsys.readouterr().out
        assert "another setting" in out and "where the closed form with one α is off" in out, out
        assert "simulated" not in out                                      # no numbers on a first attempt
    saliences = torch.tensor(E.STRESS_SALIENCES, dtype=torch.float64)
    ratio = good_curve(n_pre, alpha=saliences) / blocking_theory(n_pre, n_compound=30, alpha=E.BLOCKING_ALPHA)
    assert bool(((ratio - 1).abs() > 0.5).all())                       # the second setting is far from the formula


def test_a_first_wrong_curve_shows_none_of_the_expected_numbers(capsys, fresh_sessions):
    """Neither the closed form's values at the learner's lengths nor the simulated ones at the fainter light
    appear in a first ❌, in any of the roundings a message could use."""
    n_pre = torch.arange(0, 31, 3)
    saliences = torch.tensor(E.STRESS_SALIENCES, dtype=torch.float64)
    expected = torch.cat([blocking_theory(n_pre, n_compound=30, alpha=0.2), good_curve(n_pre, alpha=saliences)])
    shown = {f"{x:{fmt}}" for x in expected.tolist() for fmt in (".2g", ".3g", ".4g", ".6g", ".2f", ".3f")}
    wrong = [lambda n_pre, n_compound=30, alpha=0.2: good_curve(n_pre, alpha=0.3),
             lambda n_pre, n_compound=30, alpha=0.2: good_curve(n_pre),
             lambda n_pre, n_compound=30, alpha=0.2: [0.8 ** int(n) * (1 - 0.6 ** 30) / 2 for n in n_pre]]
    for fn in wrong:
        fresh_sessions()
        assert E.check_blocking_sweep(fn, n_pre) is False
        out = capsys.readouterr().out
        assert "❌" in out and not [s for s in shown if s in out and s not in ("0.2", "0.05")], out


def test_the_fainter_light_follows_the_two_salience_closed_form():
    """What 01's folded derivation says of the checker's second setting: with saliences a (bell) and b (light)
    the light ends at (1 − a)^n · b / (a + b) · (1 − (1 − a − b)^m), derived by hand, not at
    (1 − a)^n (1 − (1 − 2a)^m) / 2."""
    a, b = E.STRESS_SALIENCES
    n = torch.arange(0, 31, 3).double()
    by_hand = (1 - a) ** n * b / (a + b) * (1 - (1 - a - b) ** 30)
    simulated = good_curve(n.long(), alpha=torch.tensor([a, b], dtype=torch.float64)).double()
    torch.testing.assert_close(simulated, by_hand, rtol=1e-5, atol=1e-7)
