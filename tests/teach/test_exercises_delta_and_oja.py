"""The checkers of notebook 06: right answers pass, typical mistakes fail with a hint, a stub says "not yet
implemented", nothing raises; the designed measurement is judged on its result."""

import math
import re

import pytest
import torch

from pavlovlab.teach.exercises import delta_and_oja as rules


def _stub(*args, **kwargs):
    raise NotImplementedError("Exercise: to do")


def _broken(*args, **kwargs):
    raise IndexError("oops")


def test_delta_write(capsys):
    assert rules.check_delta_write(lambda S, k, v, beta: S + beta * torch.outer(v - S @ k, k))
    assert "✅" in capsys.readouterr().out
    assert not rules.check_delta_write(lambda S, k, v, beta: (S + beta * torch.outer(v - S @ k, k)).float())
    assert "less precise" in capsys.readouterr().out                     # float32 for float64 inputs: named
    # float64 in, float64 out, but off by one part in 10⁷: far outside float64 rounding, so not accepted
    assert not rules.check_delta_write(lambda S, k, v, beta: (S + beta * torch.outer(v - S @ k, k)) * (1 + 1e-7))
    assert "❌" in capsys.readouterr().out
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


def _literal_recovery(beta, n_keys=6, period=120, seeds=3):
    """An independent measurement: plain tensors and a literal loop, no pavlovlab at all."""
    g = torch.Generator().manual_seed(11)
    K = torch.linalg.qr(torch.randn(seeds, 12, 12, generator=g, dtype=torch.float64))[0][..., :n_keys]  # (s, 12, n)
    waits = []
    S = torch.zeros(seeds, 12, 12, dtype=torch.float64)
    V = None
    for regime in range(4):
        V = torch.nn.functional.normalize(torch.randn(seeds, 12, n_keys, generator=g, dtype=torch.float64), dim=1)
        found = torch.full((seeds,), math.inf, dtype=torch.float64)
        for t in range(period):
            i = (t * 5 + regime) % n_keys                   # a fixed round-robin order (not the package's)
            k, v = K[..., i], V[..., i]
            S = S + beta * (v - (S @ k[..., None])[..., 0])[..., :, None] * k[..., None, :]
            cos = torch.nn.functional.cosine_similarity(S @ K, V, dim=1).mean(-1)
            found = torch.where(torch.isinf(found) & (cos >= 0.95), torch.tensor(float(t), dtype=torch.float64), found)
        if regime:
            waits.append(found)
    return torch.stack(waits).mean().item()


def test_recovery_measurement_judged_on_its_result(capsys):
    assert rules.check_recovery_time(_literal_recovery)        # a different stream, order and key count
    assert "✅" in capsys.readouterr().out
    assert not rules.check_recovery_time(lambda beta, n_keys=8: math.inf)  # a memory that never recovers
    assert "never recovered" in capsys.readouterr().out
    assert not rules.check_recovery_time(lambda beta, n_keys=8: 0.0)  # a search that ignores "never"
    assert "do not shrink" in capsys.readouterr().out
    assert not rules.check_recovery_time(lambda beta, n_keys=8: 10.0 / beta ** 0.1)  # shrinks, but far too slowly
    assert "recovery(0.2) / recovery(1)" in capsys.readouterr().out
    assert not rules.check_recovery_time(_stub)
    assert "not yet implemented" in capsys.readouterr().out
    assert not rules.check_recovery_time(lambda beta, n_keys=8: [1.0, 2.0])
    assert "❌" in capsys.readouterr().out
    assert not rules.check_recovery_time(lambda beta: 5.0)
    assert "should take beta and n_keys" in capsys.readouterr().out
    assert rules.RECOVERY_RATIO_BAND[0] <= (6 * 8 + 1) / (2 * 8 - 1) and rules.RECOVERY_RATIO_BAND[1] >= (6 * 3 + 1) / 2


def _top(C):
    return torch.linalg.eigh(C).eigenvectors[:, -1]


@pytest.mark.parametrize("answer, said", [
    (lambda C: _top(C)[None, :], "expected shape (2,), got shape (1, 2)"),
    (lambda C: _top(C).tolist(), "expected a tensor of shape (2,), got a list"),
    (lambda C: _top(C).numpy(), "expected a tensor of shape (2,), got a ndarray"),
    (lambda C: _top(C).half(), "your result is in torch.float16, less precise than the torch.float64"),
    (lambda C: _top(C).float(), "your result is in torch.float32, less precise than the torch.float64"),
])
def test_oja_fixed_point_judges_type_shape_and_dtype_as_every_checker(answer, said, capsys):
    assert not rules.check_oja_fixed_point(answer)
    out = capsys.readouterr().out
    assert said in out, out


def _expected_numbers(first, revealed):
    """The numbers the detail adds once the expected values may be shown, leaving out the learner's own
    ("got ...", "yours ...")."""
    line, more = (next(ln for ln in out.splitlines() if ln.startswith("❌")) for out in (first, revealed))
    assert more.startswith(line + " ("), (line, more)
    detail = re.sub(r"(got|yours) [^;,]*", "", more[len(line) + 2:-1])
    return set(re.findall(r"\d+(?:\.\d+)?", detail))


def _first_and_revealed(check, number, answer, capsys):
    """A wrong answer's first ❌ in a fresh session, and the same answer's ❌ once the solution was read (which
    adds the expected numbers)."""
    rules.session()
    check(rules, answer)
    first = capsys.readouterr().out
    rules.session()
    rules.solution(number)
    capsys.readouterr()
    check(rules, answer)
    return first, capsys.readouterr().out


@pytest.mark.parametrize("number, check, answer", [
    (2, lambda ex, a: ex.check_delta_write(a), lambda S, k, v, beta: S + beta * torch.outer(v, k)),
    (2, lambda ex, a: ex.check_delta_write(a), lambda S, k, v, beta: S + beta * torch.outer(v - S @ k, k) / (k @ k)),
    (3, lambda ex, a: ex.check_unstable_beta(a), lambda: 1.0),
    (3, lambda ex, a: ex.check_unstable_beta(a), lambda: 2.5),
    (4, lambda ex, a: ex.check_oja_fixed_point(a), lambda C: torch.linalg.eigh(C).eigenvectors[:, 0]),
    (4, lambda ex, a: ex.check_oja_fixed_point(a), lambda C: 2 * torch.linalg.eigh(C).eigenvectors[:, -1]),
    (1, lambda ex, a: ex.check_recovery_time(a), lambda beta, n_keys=8, period=100: 9.0 / beta ** 0.5),
    (1, lambda ex, a: ex.check_recovery_time(a), lambda beta, n_keys=8, period=100: 2.5 * n_keys / beta),
])
def test_a_first_wrong_answer_shows_no_expected_number(number, check, answer, capsys):
    first, revealed = _first_and_revealed(check, number, answer, capsys)
    expected = _expected_numbers(first, revealed)
    assert expected, f"the revealed verdict adds no expected number:\n{revealed}"
    said = set(re.findall(r"\d+(?:\.\d+)?", first.split("Stuck?")[0]))
    assert not expected & said, f"a first ❌ holds the expected numbers {expected & said}:\n{first}"


def test_the_closed_form_is_caught_at_a_setting_where_it_is_off(capsys):
    """Counting writes per key gives numbers inside every band of the main setting; with drifts every 20 steps
    the count is off (a simulation never recovers) and the check says so."""
    def counted(beta, n_keys=8, seeds=3, period=100):
        return float(n_keys * rules.writes_to_recover(beta))
    assert not rules.check_recovery_time(counted)
    out = capsys.readouterr().out
    assert "another setting" in out and "20 steps" in out, out
    assert rules.writes_to_recover(0.2) == 7 and rules.writes_to_recover(1.0) == 1
    assert rules.writes_to_recover(1.6) == 3        # an overshoot that flips sign still needs writes to settle


def test_a_result_of_the_wrong_form_is_said_plainly_without_a_hint_about_the_idea(capsys):
    assert not rules.check_recovery_time(lambda beta, n_keys=8, period=100: [1.0, 2.0])
    out = capsys.readouterr().out
    assert "should return one number, got shape (2,)" in out and "Hint:" not in out, out
    assert not rules.check_unstable_beta(lambda: "two")
    out = capsys.readouterr().out
    assert "should be one number" in out and "Hint:" not in out, out
