"""Shared runner of the bad-input tables (``tests/test_bad_input_*.py``).

A row is ``(case, call, expect, fragment)``:

- ``expect`` an exception type: ``call()`` raises it, its message contains ``fragment`` (the argument named,
  ``"name: expected ..."``) and is one line;
- ``expect == "warn"``: ``call()`` returns and warns once with a :class:`NonFiniteWarning` whose message
  contains ``fragment`` (a divergence from finite inputs, the non-finite policy of ``pavlovlab._checks``);
- ``expect == "ok"``: ``call()`` returns True (a right result, checked against an independent value), without
  any RuntimeWarning.
"""

from __future__ import annotations

import warnings

import pytest


def check(call, expect, fragment) -> None:
    """The assertion of one row."""
    from pavlovlab._checks import NonFiniteWarning

    if isinstance(expect, type):
        with pytest.raises(expect) as info:
            call()
        assert fragment in str(info.value), str(info.value)
        assert "\n" not in str(info.value).strip(), "one line"
    elif expect == "warn":
        with pytest.warns(NonFiniteWarning) as record:
            call()
        hits = [w for w in record if issubclass(w.category, NonFiniteWarning)]
        assert len(hits) == 1 and fragment in str(hits[0].message), [str(w.message) for w in record]
    else:
        assert expect == "ok"
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            assert call() is True


def classify(call, expect, fragment) -> tuple[str, str]:
    """``(class, detail)`` for the before/after count: ``clear error`` (the expected exception type with
    ``fragment``, or the documented warning), ``correct``, ``unclear error`` (another exception or message) or
    ``silent`` (a wrong value, or no error where one was due)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got = call()
        except Exception as e:
            message = f"{type(e).__name__}: {e}".splitlines()[0][:160]
            if isinstance(expect, type) and isinstance(e, expect) and fragment in str(e):
                return "clear error", message
            return "unclear error", message
    if expect == "ok":
        return ("correct", "") if got is True else ("silent", f"returned {got!r}"[:160])
    if expect == "warn":
        hits = [w for w in caught if issubclass(w.category, RuntimeWarning) and fragment in str(w.message)]
        return ("clear error", str(hits[0].message)[:160]) if hits else ("silent", "no warning")
    return "silent", "no error"


def parametrize(rows):
    """``pytest.mark.parametrize`` over a table, ids = the case names."""
    return pytest.mark.parametrize("call, expect, fragment", [r[1:] for r in rows], ids=[r[0] for r in rows])
