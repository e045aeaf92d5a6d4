"""Shared runner of the bad-input tables: each module's table is ``bad_input_rows()`` in the test file that mirrors
its path (``pavlovlab/attention/forms.py`` → ``tests/attention/test_forms.py``), run by ``@parametrize(...)`` and
:func:`check`; ``tests/test_bad_input_coverage.py`` finds them all.

A row is ``(case, call, expect, fragment)``:

- ``expect`` an exception type: ``call()`` raises it, its message contains ``fragment`` (the argument named,
  ``"name: expected ..."``) and is one line;
- ``expect == "warn"``: ``call()`` returns and warns once with a :class:`NonFiniteWarning` whose message
  contains ``fragment`` (a divergence from finite inputs, the non-finite policy of ``pavlovlab._checks``);
- ``expect == "ok"``: ``call()`` returns True (a right result, checked against an independent value), without
  any RuntimeWarning.
"""

from __future__ import annotations

import math
import warnings

import pytest
import torch
import torch.nn.functional as F
from hypothesis import settings

FAST = settings(max_examples=30, deadline=None, derandomize=True, database=None)
"""The property tests of bad input (hypothesis): 30 examples, the same ones every run, no example database."""


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


# ------------------------------------------------------------------------ the tables' shared inputs
NAN = math.nan
LONG = 300_000                       # 300,000² float32 scores: 360 GB
VERY_LONG = 2 ** 20                  # 2²⁰ squared: 4.4 TB


def column(T: int) -> torch.Tensor:
    """A ``(T, 1)`` column of ones: a sequence of ``T`` one-feature steps, whose T × T square is what is too large."""
    return torch.ones(T, 1)


def randn(*shape, seed=0, dtype=torch.float32) -> torch.Tensor:
    """Standard normal draws of ``shape`` from a generator seeded with ``seed`` (the same numbers every run)."""
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def unit(*shape, seed=0) -> torch.Tensor:
    """:func:`randn` normalised to unit length along the last dim (unit keys)."""
    return F.normalize(randn(*shape, seed=seed), dim=-1)


def with_nan(x: torch.Tensor, where=(0, 0)) -> torch.Tensor:
    """A copy of ``x`` with a NaN at index ``where``."""
    x = x.clone()
    x[where] = float("nan")
    return x


def draw_qkv(T=6, d_k=4, d_v=2) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Queries and keys ``(T, d_k)`` and values ``(T, d_v)``, each from its own seed."""
    return randn(T, d_k, seed=1), randn(T, d_k, seed=2), randn(T, d_v, seed=3)
