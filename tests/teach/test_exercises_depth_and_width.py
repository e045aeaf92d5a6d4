"""Checkers of notebook 05: a correct answer passes, typical wrong ones fail with a hint that gives nothing away,
a stub is 'not yet implemented', and nothing raises. Expected values come from closed forms or literal loops."""

import math

import torch

from pavlovlab.sampling import random_keys
from pavlovlab.teach.exercises import depth_and_width as stacking

ex = stacking
"""A learner's session; a fresh one before every test (``fresh_sessions`` in conftest.py)."""


def _stub(*args, **kwargs):
    raise NotImplementedError("Exercise: not done yet")


def _broken(*args, **kwargs):
    return 1 / 0


def _numbers(*values):
    """The ways a message could spell each expected value (rounded as a learner would read it)."""
    return {f"{v:{f}}" for v in values for f in (".2f", ".3f", ".4f", ".3g", ".4g", ".6g")}


def test_predicted_error(capsys, fresh_sessions):
    fresh_sessions()
    assert ex.predicted_error_reference(3, 2, 0.5) == 1 - 0.75 ** 3          # closed form by hand
    assert ex.check_predicted_error(lambda L, H, p: 1 - (1 - p ** H) ** L)
    assert "✅" in capsys.readouterr().out
    fresh_sessions()
    assert not ex.check_predicted_error(lambda L, H, p: L * p ** H)        # only the approximation
    first = capsys.readouterr().out
    assert "❌" in first and "expected" not in first and "ex.hint(1)" in first and "small-error approximation" in first
    assert not ex.check_predicted_error(lambda L, H, p: 1 - (1 - p ** L) ** H)   # roles swapped
    second = capsys.readouterr().out
    assert "swapped roles" in second and "expected" not in second        # nor on a 2nd: only once asked for
    assert not ex.check_predicted_error(_stub)
    assert "not yet implemented" in capsys.readouterr().out
    assert not ex.check_predicted_error(_broken)
    assert "ZeroDivisionError" in capsys.readouterr().out
    assert ex.check_predicted_error(lambda L, H, p: float(torch.tensor(1 - (1 - p ** H) ** L, dtype=torch.float32)))
    assert not ex.check_predicted_error(lambda L, H, p: float("nan"))


def test_each_recognised_mistake_gets_its_own_hint(capsys, fresh_sessions, monkeypatch):
    """Every mistake of Exercise 1 is told apart from the others on the failing case (a hint that fits it), its ❌
    holds none of the expected values the check computed, and an unrecognised wrong answer gets the plain
    question."""
    expected: list[float] = []
    reference = stacking.predicted_error_reference

    def recording(L, H, p):
        expected.append(reference(L, H, p))
        return expected[-1]

    monkeypatch.setattr(stacking, "predicted_error_reference", recording)
    said = []
    for mistake, hint in ex.PREDICTION_MISTAKES:
        fresh_sessions()
        expected.clear()
        assert not ex.check_predicted_error(mistake)
        out = capsys.readouterr().out
        assert hint in out, out
        shown_inputs = {"0.3"}                        # case 1's answer is its input p = 0.3, printed with the case
        assert expected and not any(x in out for x in _numbers(*expected) - shown_inputs), out
        said.append(hint)
    assert len(set(said)) == len(said)
    fresh_sessions()
    assert not ex.check_predicted_error(lambda L, H, p: p * H)
    out = capsys.readouterr().out
    assert not any(h in out for h in said) and "at least one hop fails" in out


def test_predicted_errors_accept_reasoning_within_the_stated_band(capsys, fresh_sessions):
    """A reasoned estimate, Exercise 1's independent-heads picture and the theory itself pass; a guess, the two
    swapped, one hop of B or one head of A fail with a hint that names that slip, and no ❌ holds the expected
    numbers."""
    from pavlovlab.depth.theory import hop_error_theory, stack_error_theory
    errs = ex.predicted_errors()
    right = (errs["A"], errs["B"])
    assert errs[ex.winner()] < errs["B" if ex.winner() == "A" else "A"]
    independent = (hop_error_theory(24, 16) ** 2, 1 - (1 - hop_error_theory(24, 32)) ** 3)
    for good in (right, (0.05, 0.012), independent, torch.tensor(right)):
        fresh_sessions()
        assert ex.check_predicted_errors(lambda good=good: good)
        out = capsys.readouterr().out
        assert "✅" in out and f"{ex.winner()} makes fewer errors" in out
    wrong = [((right[1], right[0]), "the other architecture"),                       # A and B swapped
             ((0.1, 0.2), "too large"),                                              # a guess
             ((right[0], float(stack_error_theory(1, 1, 24, 32))), "makes 3 hops"),  # one hop of B only
             ((float(stack_error_theory(1, 1, 24, 16)), right[1]), "2 heads"),       # one head of A only
             ((4.2, 1.1), "not 5 %")]                                                # percentages
    for answer, says in wrong:
        fresh_sessions()
        assert not ex.check_predicted_errors(lambda answer=answer: answer)
        out = capsys.readouterr().out
        assert "❌" in out and says in out, out
        assert not any(x in out for x in _numbers(*right)), out
        assert ex.judge_predicted_errors(answer).detail          # the numbers are kept for when the learner asks
    fresh_sessions()
    assert not ex.check_predicted_errors(lambda: "B")                       # a letter is not a prediction
    assert "two numbers" in capsys.readouterr().out
    assert not ex.check_predicted_errors(_stub)
    assert "not yet implemented" in capsys.readouterr().out
    assert not ex.check_predicted_errors(_broken)
    assert "ZeroDivisionError" in capsys.readouterr().out


def test_the_prediction_band_separates_a_forgotten_hop_or_head():
    """The band is wide enough for reasoning and narrow enough for the slips: one hop of B and one head of A lie a
    factor of about 3 or more from the theory, well outside it."""
    from pavlovlab.depth.theory import stack_error_theory
    errs = ex.predicted_errors()
    assert errs["B"] / stack_error_theory(1, 1, 24, 32) > 1.4 * ex.PREDICTION_FACTOR
    assert stack_error_theory(1, 1, 24, 16) / errs["A"] > 1.4 * ex.PREDICTION_FACTOR


def _loop_depth_curve(trials=250, seed=1, relay=True):
    """An independent measurement: a literal loop over chains (numbers of one stack at a time)."""
    g = torch.Generator().manual_seed(seed)
    n, d, L = ex.DEPTH_N, ex.DEPTH_D, ex.DEPTH_L
    wrong = [0] * L
    for _ in range(trials):
        item = list(range(n))
        truth = list(range(n))
        for layer in range(L):
            K = random_keys(n, d=d, kind="sphere", generator=g, dtype=torch.float64)
            V = random_keys(n, d=d, kind="sphere", generator=g, dtype=torch.float64)
            perm = torch.randperm(n, generator=g).tolist()
            S = sum(torch.outer(V[perm[i]], K[i]) for i in range(n))
            for c in range(n):
                query = item[c] if relay else truth[c]
                item[c] = int((V @ (S @ K[query])).argmax())
                truth[c] = perm[truth[c]]
                wrong[layer] += item[c] != truth[c]
    return [w / (trials * n) for w in wrong]


def test_depth_measurement_judge():
    v = ex.judge_depth_curve(_loop_depth_curve(), chains=250 * ex.DEPTH_N)
    assert v.ok, v.message
    p = ex.depth_theory()
    no_relay = ex.judge_depth_curve(_loop_depth_curve(seed=2, relay=False))      # no relay: flat curve
    assert not no_relay.ok and "stay wrong at the next" in no_relay.message and "relay" in no_relay.hint
    assert p[2] == 1 - (1 - p[0]) ** 3 and 0.08 < p[0] < 0.14
    twice = ex.judge_depth_curve([p[0], 2 * p[1], 3 * p[2]])                      # accumulated twice
    assert not twice.ok and "counted once" in twice.message and "running total" in twice.hint
    high = ex.judge_depth_curve([0.36, 0.5, 0.6])                                # keys not of unit length
    assert not high.ok and "more than one hop" in high.message and "kind='sphere'" in high.hint
    keys = ex.judge_depth_curve([0.93, 0.94, 0.94])                              # cleaned up against the keys
    assert not keys.ok and "not its keys" in keys.hint
    low = ex.judge_depth_curve([0.01, 0.02, 0.03])
    assert not low.ok and "less than one hop" in low.message and "fresh memory" in low.hint
    assert not ex.judge_depth_curve([1, 2]).ok
    for v in (no_relay, twice, high, keys, low):                                  # the theory only in detail
        assert not any(x in v.message for x in _numbers(*p)), v.message
        assert v.detail


def test_depth_checker_never_raises(capsys, fresh_sessions):
    fresh_sessions()
    assert not ex.check_depth_curve(lambda: [float("nan")] * 3)
    assert "❌" in capsys.readouterr().out
    assert not ex.check_depth_curve(_stub)
    assert "not yet implemented" in capsys.readouterr().out
    assert not ex.check_depth_curve(lambda: "three")
    assert "❌" in capsys.readouterr().out
    assert math.isfinite(ex.depth_theory().sum())


def test_exercise_2s_expected_errors_compose_the_hop_error_independently():
    """The checker's expected (err_A, err_B) is 1 − (1 − p_hop)^L with p_hop the averaged heads' hop error,
    recomposed here by hand: a checker that drifted from the theory (say 1 − error) would fail this."""
    from pavlovlab.depth.theory import hop_error_theory
    from pavlovlab.teach.exercises import depth_and_width as ex_stacking

    got = ex_stacking.predicted_errors()
    for name, a in ex_stacking.ARCHITECTURES.items():
        p_hop = float(hop_error_theory(ex_stacking.N_PAIRS, a["d_k"], H=a["H"]))
        assert 0 < p_hop < 1
        assert abs(got[name] - (1 - (1 - p_hop) ** a["L"])) < 1e-12
    assert got["A"] != got["B"]


def test_the_closing_verdicts_say_which_section_to_run():
    """Notebook 05's closing verdict cell, run with sections skipped (a kernel restarted after the set-up cell):
    one line per claim, naming the sections still to run, and no NameError; every section it names records its
    evidence somewhere in the notebook."""
    import contextlib
    import io
    import json
    import re
    from pathlib import Path

    notebook = Path(__file__).resolve().parents[2] / "course" / "05_depth_and_width.ipynb"
    cells = json.loads(notebook.read_text())["cells"]
    sources = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    verdicts = next(s for s in sources if s.startswith("# NBVAL_CHECK_OUTPUT\nclaims = "))
    recorded = {k for s in sources for k in re.findall(r'evidence\["(\w+)"\] =', s)}
    scope: dict = {"evidence": {}}
    exec(verdicts.split("for claim")[0], scope)
    assert {s for sections in scope["claims"].values() for s in sections} == recorded
    everything = {k: f"evidence of section {k}" for k in recorded}
    for skipped in [set(), {"5"}, {"3", "4"}, recorded]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(verdicts, {"evidence": {k: v for k, v in everything.items() if k not in skipped}})
        lines = out.getvalue().splitlines()
        assert len(lines) == len(scope["claims"])
        for claim, sections in scope["claims"].items():
            line = next(ln for ln in lines if ln.startswith(claim))
            missing = [s for s in sections if s in skipped]
            if missing:
                assert f"run section {' and '.join(missing)} first" in line, line
            else:
                assert all(f"evidence of section {s}" in line for s in sections), line
