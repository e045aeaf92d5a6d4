"""The checker machinery that every notebook's exercises share."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import torch

Case = tuple[Sequence[Any], Mapping[str, Any]]


def verdict(ok: bool, name: str, message: str, hint: str = "") -> bool:
    """Print one friendly verdict and return ``ok``."""
    if ok:
        print(f"✅ {name}: correct! {message}")
    else:
        print(f"❌ {name}: not yet. {message}")
        if hint:
            print(f"   Hint: {hint}")
    return ok


def _not_implemented(name: str) -> bool:
    print(f"⏳ {name}: not yet implemented. Replace the `raise NotImplementedError(...)` line in the "
          "exercise cell with your code, run that cell, then run this one again.")
    return False


def _compare(got: Any, expected: Any, rtol: float, atol: float) -> tuple[bool, str]:
    """Compare a learner's result with the expected one; explain the first difference found."""
    if isinstance(expected, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(expected):
            return False, f"expected a sequence of {len(expected)} results, got {type(got).__name__}"
        for i, (g, e) in enumerate(zip(got, expected)):
            ok, why = _compare(g, e, rtol, atol)
            if not ok:
                return False, f"item {i}: {why}"
        return True, ""
    if isinstance(expected, torch.Tensor):
        if not isinstance(got, torch.Tensor):
            try:
                got = torch.as_tensor(got, dtype=expected.dtype, device=expected.device)
            except (TypeError, ValueError, RuntimeError):
                return False, f"expected a tensor of shape {tuple(expected.shape)}, got {type(got).__name__}"
        if got.shape != expected.shape:
            return False, f"expected shape {tuple(expected.shape)}, got shape {tuple(got.shape)}"
        got = got.to(dtype=expected.dtype, device=expected.device)
        if not torch.allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True):
            err = (got - expected).abs().max().item()
            return False, (f"values differ by up to {err:.3g}; expected e.g. {_short(expected)}, "
                           f"got {_short(got)}")
        return True, ""
    if isinstance(expected, (int, float)):
        try:
            g = float(got)
        except (TypeError, ValueError):
            return False, f"expected a number, got {type(got).__name__}"
        if abs(g - expected) > atol + rtol * abs(expected):
            return False, f"expected {expected:.4g}, got {g:.4g}"
        return True, ""
    return (got == expected, f"expected {expected!r}, got {got!r}")


def _short(t: torch.Tensor) -> str:
    flat = t.detach().flatten()[:4].cpu().tolist()
    return "[" + ", ".join(f"{x:.4g}" for x in flat) + (", ...]" if t.numel() > 4 else "]")


def check_function(fn: Callable[..., Any], reference: Callable[..., Any], cases: Iterable[Case], *,
                   name: str, hint: str = "", rtol: float = 1e-4, atol: float = 1e-5) -> bool:
    """Call ``fn`` and ``reference`` on each ``(args, kwargs)`` case and compare the results.

    Prints ✅ with the number of cases matched, ⏳ for a stub, or ❌ with what was expected and what
    was got on the first failing case (and the hint). Returns True when every case matched.
    """
    if not callable(fn):
        return verdict(False, name, f"expected a function, got {type(fn).__name__}", hint)
    cases = list(cases)
    for i, (args, kwargs) in enumerate(cases):
        try:
            got = fn(*args, **kwargs)
        except NotImplementedError:
            return _not_implemented(name)
        except Exception as e:  # the learner's code: report it, never a traceback
            return verdict(False, name, f"on test case {i + 1} your function raised {type(e).__name__}: {e}", hint)
        ok, why = _compare(got, reference(*args, **kwargs), rtol, atol)
        if not ok:
            return verdict(False, name, f"on test case {i + 1}: {why}", hint)
    return verdict(True, name, f"it matches the package on {len(cases)} random test cases.")


def check_value(get: Callable[[], Any] | Any, expected: Any, *, name: str, hint: str = "",
                rtol: float = 1e-3, atol: float = 1e-6) -> bool:
    """Compare a learner's value (or a zero-argument function that returns it) with the expected one."""
    try:
        got = get() if callable(get) else get
    except NotImplementedError:
        return _not_implemented(name)
    except Exception as e:
        return verdict(False, name, f"computing your answer raised {type(e).__name__}: {e}", hint)
    ok, why = _compare(got, expected, rtol, atol)
    return verdict(ok, name, "your answer matches the package's." if ok else why, hint)
