"""Checkers of notebook 05: a correct answer passes, a wrong one fails, a stub is 'not yet implemented',
and nothing raises."""

from pavlovlab.teach.exercises import stacking as ex


def _stub(*args, **kwargs):
    raise NotImplementedError("Exercise: not done yet")


def _broken(*args, **kwargs):
    return 1 / 0


def test_predicted_error(capsys):
    assert ex.check_predicted_error(ex.predicted_error_reference)
    assert "✅" in capsys.readouterr().out
    assert not ex.check_predicted_error(lambda L, H, p: L * p ** H)        # only the approximation
    assert not ex.check_predicted_error(lambda L, H, p: 1 - (1 - p ** L) ** H)   # roles swapped
    out = capsys.readouterr().out
    assert out.count("❌") == 2 and "Hint" in out
    assert not ex.check_predicted_error(_stub)
    assert "not yet implemented" in capsys.readouterr().out
    assert not ex.check_predicted_error(_broken)
    assert "ZeroDivisionError" in capsys.readouterr().out


def test_which_wins(capsys):
    right = ex.winner()
    wrong = "A" if right == "B" else "B"
    assert right in ("A", "B")
    errs = ex.predicted_errors()
    assert errs[right] < errs[wrong]
    assert ex.check_which_wins(lambda: right.lower() + " ")
    assert "✅" in capsys.readouterr().out
    assert not ex.check_which_wins(lambda: wrong)
    assert "❌" in capsys.readouterr().out
    assert not ex.check_which_wins(lambda: "both")
    assert 'expected "A" or "B"' in capsys.readouterr().out
    assert not ex.check_which_wins(_stub)
    assert "not yet implemented" in capsys.readouterr().out
    assert not ex.check_which_wins(_broken)
    assert "ZeroDivisionError" in capsys.readouterr().out
