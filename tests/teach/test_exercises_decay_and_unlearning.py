"""The checkers of notebook 07: right answers pass, wrong ones fail, stubs are greeted kindly, nothing
raises, and the designed half-life measurement is judged on its result."""

import math
import re

import pytest
import torch

from pavlovlab.teach.exercises import decay_and_unlearning as forgetting

ex = forgetting
"""A learner's session; a fresh one before every test (``fresh_sessions`` in conftest.py)."""


def stub(*args):
    raise NotImplementedError("Exercise: write me")


def crash(*args):
    raise ZeroDivisionError("float division by zero")


# --- correct answers, written the way a learner would ---------------------------------------------

def half_life_ok(gamma):
    return math.log(2) / -math.log(gamma)


def half_life_torch_ok(gamma):
    return torch.log(torch.tensor(0.5, dtype=torch.float64)) / torch.log(torch.tensor(gamma, dtype=torch.float64))


def unlearn_ok(S, k):
    error = torch.zeros(S.shape[0], dtype=S.dtype) - S @ k
    return S + torch.outer(error, k) / (k @ k)


# --- typical mistakes -----------------------------------------------------------------------------

def half_life_window(gamma, max_lag=120):  # the effective window 1/(1 − γ), not the half-life
    return 1 / (1 - gamma)


def half_life_log10(gamma):  # mixes log bases
    return math.log10(2) / -math.log(gamma)


def unlearn_unnormalised(S, k):  # forgets β = 1/‖k‖²: overshoots for long keys
    return S - torch.outer(S @ k, k)


def unlearn_wipes_everything(S, k):
    return torch.zeros_like(S)


@pytest.mark.parametrize("check,fn", [(ex.check_half_life, half_life_ok), (ex.check_half_life, half_life_torch_ok),
                                      (ex.check_unlearn, unlearn_ok)])
def test_correct_passes(check, fn, capsys):
    assert check(fn) is True
    assert "✅" in capsys.readouterr().out


@pytest.mark.parametrize("check,fn", [(ex.check_half_life, half_life_window), (ex.check_half_life, half_life_log10),
                                      (ex.check_unlearn, unlearn_unnormalised),
                                      (ex.check_unlearn, unlearn_wipes_everything)])
def test_wrong_fails_with_hint(check, fn, capsys):
    assert check(fn) is False
    out = capsys.readouterr().out
    assert "❌" in out and "Hint" in out


@pytest.mark.parametrize("check", [ex.check_half_life, ex.check_unlearn])
def test_stub_is_not_yet_implemented(check, capsys):
    assert check(stub) is False
    assert "not yet implemented" in capsys.readouterr().out


@pytest.mark.parametrize("check", [ex.check_half_life, ex.check_unlearn])
@pytest.mark.parametrize("bad", [crash, None, 3.0])
def test_nothing_raises(check, bad, capsys):
    assert check(bad) is False
    assert "❌" in capsys.readouterr().out


def test_references_are_the_package():
    assert ex.half_life_reference(0.5) == pytest.approx(1.0)
    S = torch.randn(3, 4, dtype=torch.float64)
    k = torch.randn(4, dtype=torch.float64)
    assert torch.allclose(ex.unlearn_reference(S, k) @ k, torch.zeros(3, dtype=torch.float64), atol=1e-12)


# --- Exercise 1: a measured half-life, judged on the result ------------------------------------------

def measured_by_literal_loop(gamma, trials=150, d=48, max_lag=120):
    """An independent measurement: a literal loop over the writes of a decayed memory, no pavlovlab."""
    g = torch.Generator().manual_seed(3)
    k = torch.nn.functional.normalize(torch.randn(trials, max_lag + 1, d, generator=g, dtype=torch.float64), dim=-1)
    v = torch.nn.functional.normalize(torch.randn(trials, max_lag + 1, d, generator=g, dtype=torch.float64), dim=-1)
    S = torch.zeros(trials, d, d, dtype=torch.float64)
    strength = []
    for t in range(max_lag + 1):
        S = gamma * S + v[:, t, :, None] * k[:, t, None, :]
        strength.append(((S @ k[:, 0, :, None])[..., 0] * v[:, 0]).sum(-1).mean().item())
    first = next((t for t, s in enumerate(strength) if s < 0.5), math.inf)  # inf: never within the window
    return first                                    # the first whole lag below one half (no interpolation)


def test_measured_half_life_judged_on_its_result(capsys):
    assert ex.check_measured_half_life(measured_by_literal_loop)
    assert "✅" in capsys.readouterr().out
    assert not ex.check_measured_half_life(half_life_window)         # the effective window, not the half-life
    assert "too late" in capsys.readouterr().out
    assert not ex.check_measured_half_life(lambda gamma, max_lag=120: math.inf)
    assert "never fell" in capsys.readouterr().out
    assert not ex.check_measured_half_life(lambda gamma, max_lag=120: 0.5 * half_life_ok(gamma))
    assert "too early" in capsys.readouterr().out
    assert not ex.check_measured_half_life(lambda gamma, max_lag=120: half_life_ok(gamma))   # the formula itself
    assert "another setting" in capsys.readouterr().out
    assert not ex.check_measured_half_life(stub)
    assert "not yet implemented" in capsys.readouterr().out
    # the band is narrower than the classic confusion: 1/(1 − γ) is 46-48 % off at the checked γ
    for gamma in ex.HALF_LIFE_GAMMAS:
        assert abs(1 / (1 - gamma) / half_life_ok(gamma) - 1) > 4 * ex.HALF_LIFE_RTOL


def _expected_numbers(first, revealed):
    """The numbers the detail adds once the expected values may be shown, leaving out the learner's own."""
    line, more = (next(ln for ln in out.splitlines() if ln.startswith("❌")) for out in (first, revealed))
    assert more.startswith(line + " ("), (line, more)
    detail = re.sub(r"(got|yours) [^;,]*", "", more[len(line) + 2:-1])
    return set(re.findall(r"\d+(?:\.\d+)?", detail))


@pytest.mark.parametrize("number, checker, answer", [
    (1, "check_measured_half_life", half_life_window),
    (1, "check_measured_half_life", lambda gamma, max_lag=120: 0.8 * half_life_ok(gamma)),
    (2, "check_half_life", half_life_window),
    (2, "check_half_life", lambda gamma: 0.69 / (1 - gamma)),
    (3, "check_unlearn", unlearn_unnormalised),
    (3, "check_unlearn", lambda S, k: S - torch.outer(S @ k, k) / k.norm()),
])
def test_a_first_wrong_answer_shows_no_expected_number(number, checker, answer, capsys):
    forgetting.session()
    getattr(forgetting, checker)(answer)
    first = capsys.readouterr().out
    forgetting.session()
    forgetting.solution(number)
    capsys.readouterr()
    getattr(forgetting, checker)(answer)
    expected = _expected_numbers(first, capsys.readouterr().out)
    assert expected
    said = set(re.findall(r"\d+(?:\.\d+)?", first.split("Stuck?")[0]))
    assert not expected & said, f"a first ❌ holds the expected numbers {expected & said}:\n{first}"


@pytest.mark.parametrize("answer, says", [
    (half_life_window, "effective window"),
    (lambda gamma: math.log(2) / math.log(gamma), "negative"),
    (lambda gamma: 0.69 / (1 - gamma), "approximation"),
    (half_life_log10, "different bases"),
])
def test_half_life_mistakes_get_the_hint_that_fits(answer, says, capsys):
    assert not ex.check_half_life(answer)
    assert says in capsys.readouterr().out


@pytest.mark.parametrize("answer, says", [
    (unlearn_unnormalised, "right for a key of length 1"),
    (unlearn_wipes_everything, "wipes the whole memory"),
    (lambda S, k: S + torch.outer(S @ k, k) / (k @ k), "doubles the bell's answer"),
])
def test_unlearn_mistakes_get_the_hint_that_fits(answer, says, capsys):
    assert not ex.check_unlearn(answer)
    assert says in capsys.readouterr().out


def test_a_measurement_of_the_wrong_form_is_said_plainly_without_a_hint_about_the_idea(capsys):
    assert not ex.check_measured_half_life(lambda gamma, max_lag=120: [1.0, 2.0])
    out = capsys.readouterr().out
    assert "should return one number" in out and "Hint:" not in out, out
