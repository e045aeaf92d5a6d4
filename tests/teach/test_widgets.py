"""Tests of ``pavlovlab.teach.widgets``."""

from __future__ import annotations

from badinput import check, parametrize

from pavlovlab.teach import widgets as W


# ---------------------------------------------------------------------------------------------------- bad input
def bad_input_rows() -> list:
    """Bad input of ``pavlovlab.teach.widgets``: one row ``(case, call, expect, fragment)`` a case."""
    return [
        ("slider min > max", lambda: W.control("n", (10, 1, 1, 5)), ValueError, "n: expected (min, max, step, value)"),
        ("slider 3-tuple", lambda: W.control("n", (1, 10, 1)), TypeError, "n: expected (min, max, step, value)"),
        ("draw not callable", lambda: W.interactive_plot(None, n=(1, 4, 1, 2)), TypeError, "draw: expected a function"),
    ]


@parametrize(bad_input_rows())
def test_bad_input_row(call, expect, fragment):
    check(call, expect, fragment)
