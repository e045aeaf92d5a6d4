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


def test_predicted_error(capsys, fresh_sessions):
    fresh_sessions()
    assert ex.predicted_error_reference(3, 2, 0.5) == 1 - 0.75 ** 3          # closed form by hand
    assert ex.check_predicted_error(lambda L, H, p: 1 - (1 - p ** H) ** L)
    assert "✅" in capsys.readouterr().out
    fresh_sessions()
    assert not ex.check_predicted_error(lambda L, H, p: L * p ** H)        # only the approximation
    first = capsys.readouterr().out
    assert "❌" in first and "expected" not in first and "ex.hint(1)" in first
    assert not ex.check_predicted_error(lambda L, H, p: 1 - (1 - p ** L) ** H)   # roles swapped
    assert "expected" not in capsys.readouterr().out                    # nor on a 2nd: only once asked for
    assert not ex.check_predicted_error(_stub)
    assert "not yet implemented" in capsys.readouterr().out
    assert not ex.check_predicted_error(_broken)
    assert "ZeroDivisionError" in capsys.readouterr().out
    assert ex.check_predicted_error(lambda L, H, p: float(torch.tensor(1 - (1 - p ** H) ** L, dtype=torch.float32)))
    assert not ex.check_predicted_error(lambda L, H, p: float("nan"))


def test_predicted_errors_need_the_numbers(capsys):
    errs = ex.predicted_errors()
    right = (errs["A"], errs["B"])
    assert errs[ex.winner()] < errs["B" if ex.winner() == "A" else "A"]
    assert not ex.check_predicted_errors(lambda: (right[1], right[0]))      # A and B swapped
    first = capsys.readouterr().out
    assert "❌" in first and "(expected" not in first
    assert not ex.check_predicted_errors(lambda: "B")                       # a letter is not a prediction
    assert "expected a sequence of 2 results" in capsys.readouterr().out
    assert ex.check_predicted_errors(lambda: right)
    out = capsys.readouterr().out
    assert "✅" in out and f"{ex.winner()} makes fewer errors" in out
    assert not ex.check_predicted_errors(_stub)
    assert "not yet implemented" in capsys.readouterr().out
    assert not ex.check_predicted_errors(_broken)
    assert "ZeroDivisionError" in capsys.readouterr().out


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
    ok, msg = ex.judge_depth_curve(_loop_depth_curve(), chains=250 * ex.DEPTH_N)[:2]
    assert ok, msg
    ok, msg = ex.judge_depth_curve(_loop_depth_curve(seed=2, relay=False))[:2]   # no relay: flat curve
    assert not ok and "previous layer" in msg
    p = ex.depth_theory()
    assert p[2] == 1 - (1 - p[0]) ** 3 and 0.08 < p[0] < 0.14
    assert not ex.judge_depth_curve([p[0], 2 * p[1], 3 * p[2]])[0]              # accumulated twice
    assert not ex.judge_depth_curve([0.5, 0.6, 0.7])[0]
    assert not ex.judge_depth_curve([1, 2])[0]


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
