"""Tests of ``pavlovlab.teach.exercises.checking``."""

from __future__ import annotations

import contextlib
import io

import numpy as np
from badinput import check, parametrize

from pavlovlab.teach.exercises import checking


# ---------------------------------------------------------------------------------------------------- bad input
def bad_input_rows() -> list:
    """Bad input of ``pavlovlab.teach.exercises.checking``: one row ``(case, call, expect, fragment)`` a case."""
    def quiet(fn):
        def run():
            with contextlib.redirect_stdout(io.StringIO()) as out:
                ok = fn()
            return ok, out.getvalue()
        return run

    def nan_is_wrong():
        ok, text = quiet(lambda: checking.check_value(float("nan"), 1.0, name="x"))()
        return ok is False and "❌" in text

    def array_vs_letter():
        ok, text = quiet(lambda: checking.check_value(np.array([1, 2]), "A", name="x"))()
        return ok is False and "❌" in text and "Traceback" not in text

    return [
        ("check_value(nan, 1.0) is ❌", nan_is_wrong, "ok", ""),
        ("check_value(np.array([1, 2]), 'A') is ❌, no traceback", array_vs_letter, "ok", ""),
    ]


@parametrize(bad_input_rows())
def test_bad_input_row(call, expect, fragment):
    check(call, expect, fragment)
