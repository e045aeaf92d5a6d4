"""Input checks shared by the package: each raises a ValueError/TypeError naming the argument,
what was expected and what was given.

**Non-finite policy** (the same in every public function of the package):

1. *Inputs.* A NaN or ±inf in a tensor argument or a number hyper-parameter raises ValueError naming
   the argument (``q: expected finite values, got 1 NaN/inf entries``): :func:`check_tensor` does it for
   every tensor it checks, :func:`check_real` for numbers. Nothing non-finite passes through silently.
2. *Documented bounds.* Where the maths states a bound on a hyper-parameter for the state to stay
   bounded (the delta rule's β ≤ 2 on unit keys, Rescorla–Wagner's αβ ≤ 2, Oja's step size), the bound
   is checked and raises.
3. *Data-dependent divergence.* Where finite, in-bound inputs can still blow up (unnormalised keys,
   very long runs), the function returns what it computed and warns once per call with a
   :class:`NonFiniteWarning` (a RuntimeWarning) naming the function and the cause (:func:`warn_nonfinite`).
   Turn it into an error with ``warnings.simplefilter("error", NonFiniteWarning)``.

**Accepted by contract** (documented here once, tested in ``tests/test_checks.py``):

- a *number* argument (``check_real``) takes a Python number, a NumPy scalar (``np.float32(0.5)``) or a
  one-element tensor without gradient (``torch.tensor(2.0)``), converted with ``float``; a tensor that
  requires grad is refused (converting it would cut the gradient silently);
- an *integer* argument (``check_int``) takes a Python or NumPy integer (``np.int64(4)``), never a bool or
  a float, not even ``4.0``;
- a *dtype* (``check_float_dtype``) takes a torch dtype or its name as torch spells it (``"float32"``,
  ``"torch.float64"``, ``"double"``);
- a *device* (``check_device``) takes a ``torch.device``, its name (``"cpu"``, ``"cuda:0"``) or None;
- a *shape* (``check_shape``) takes a tuple, a list or a ``torch.Size`` of such integers, never a bare int.

**Checks at the door.** A public function declares its check instead of writing it in its body::

    @checked_by(check_pairs, nonfinite="very large keys or values overflow the dtype")
    def crosstalk(keys, values): ...          # the body is the algorithm, on checked arguments

:func:`checked_by` runs the validator on the door's arguments before the body and warns on a non-finite result
after it; :func:`unchecked` gives the body back, for a caller whose inputs are already checked.
"""

from __future__ import annotations

import functools
import inspect
import linecache
import math
import numbers
import os
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence, Sized
from typing import Any, Literal, ParamSpec, TypeVar, overload

import torch


class NonFiniteWarning(RuntimeWarning):
    """A result became NaN or inf from finite inputs (data-dependent divergence), see the module docstring."""


def all_finite(x: torch.Tensor) -> bool:
    """Whether every entry of ``x`` is finite, exactly, at about the cost of one ``sum``.

    A NaN or ±inf entry makes the sum NaN or ±inf (IEEE arithmetic propagates both, and +inf + −inf is NaN), so
    a finite sum proves every entry finite: the common case costs one streaming reduction (0.1 ms for 4M
    float32 values on 2 cores, against 3.6 ms for ``isfinite(x).all()``, which writes a boolean tensor). Only a
    non-finite sum, which an overflow of the sum alone can also cause, pays for the entry-wise test. Meta
    tensors (shape-only runs) and empty tensors count as finite."""
    if x.device.type == "meta" or not x.numel():
        return True
    return bool(torch.isfinite(x.detach().sum())) or bool(torch.isfinite(x).all())


def check_finite(name: str, x: torch.Tensor) -> torch.Tensor:
    """Require every entry of ``x`` to be finite (the package's non-finite policy, rule 1)."""
    if not all_finite(x):
        bad = int((~torch.isfinite(x)).sum())
        raise ValueError(f"{name}: expected finite values, got {bad} NaN/inf entr{'y' if bad == 1 else 'ies'} "
                         "(non-finite inputs are rejected everywhere in pavlovlab)")
    return x


def warn_nonfinite(where: str, x: torch.Tensor, cause: str) -> torch.Tensor:
    """Warn once (a :class:`NonFiniteWarning`) if ``x`` holds NaN or inf; return ``x`` unchanged. A public
    function that needs another's algorithm calls its body (:func:`unchecked`), which does not warn: each call
    warns once, for its own result, as the policy says."""
    if not all_finite(x):
        warnings.warn(f"{where}: the result became NaN/inf from finite inputs ({cause})", NonFiniteWarning,
                      stacklevel=_callers_level())
    return x


def _callers_level() -> int:
    """The ``stacklevel`` of the line that called the public function that called :func:`warn_nonfinite`: past
    the door :func:`checked_by` wrote around it, if any, so that a warning points at the learner's own line."""
    level, frame = 3, sys._getframe(3)  # warnings.warn's caller's caller, seen from here
    while frame.f_code.co_filename.startswith("<checked_by ") and frame.f_back is not None:
        level, frame = level + 1, frame.f_back
    return level


@overload
def check_float_dtype(name: str, dtype: object, *, allow_none: Literal[False]) -> torch.dtype: ...
@overload
def check_float_dtype(name: str, dtype: object, *, allow_none: bool = True) -> torch.dtype | None: ...
def check_float_dtype(name: str, dtype: object, *, allow_none: bool = True) -> torch.dtype | None:
    """The one floating-point dtype check of the package.

    ``dtype``: a torch dtype (``torch.float32``), its name (``"float32"`` / ``"torch.float64"``), or a tensor,
    whose dtype is checked (TypeError naming ``name``: "expected a floating-point tensor"). Returns the dtype
    (None when ``dtype`` is None and ``allow_none``).
    """
    if isinstance(dtype, torch.Tensor):
        if not dtype.is_floating_point():
            raise TypeError(f"{name}: expected a floating-point tensor (float32 or float64), got dtype {dtype.dtype}")
        return dtype.dtype
    if dtype is None and allow_none:
        return None
    if isinstance(dtype, str):
        got = getattr(torch, dtype.removeprefix("torch."), None)
        if not isinstance(got, torch.dtype):
            raise TypeError(f"{name}: expected a floating-point dtype such as torch.float32, got the string {dtype!r}")
        dtype = got
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(f"{name}: expected a floating-point dtype such as torch.float32, got {dtype!r}")
    return dtype


def check_output(name: str, out: object, shape: Sequence[int], like: torch.Tensor) -> torch.Tensor:
    """Check what a user-supplied callable (a feature map, a learning rule) returned: a tensor of
    exactly ``shape`` and of ``like``'s dtype and device."""
    if not isinstance(out, torch.Tensor):
        raise TypeError(f"{name}: expected the callable to return a torch.Tensor, got {type(out).__name__}")
    if tuple(out.shape) != tuple(shape):
        raise ValueError(f"{name}: expected the callable to return shape {tuple(shape)}, got {tuple(out.shape)}")
    if out.dtype != like.dtype:
        raise TypeError(f"{name}: expected the callable to return dtype {like.dtype}, got {out.dtype}")
    if out.device != like.device:
        raise ValueError(f"{name}: expected the callable to return a tensor on {like.device}, got {out.device}")
    return out


def check_tensor(name: str, x: object, *, min_rank: int = 1, rank: int | None = None,
                 finite: bool = True) -> torch.Tensor:
    """Require a floating-point tensor of at least ``min_rank`` (or exactly ``rank``) dimensions, with
    finite entries unless ``finite=False`` (see the non-finite policy above)."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(x).__name__}")
    check_float_dtype(name, x)
    if rank is not None and x.dim() != rank:
        raise ValueError(f"{name}: expected a tensor of rank {rank}, got shape {tuple(x.shape)}")
    if x.dim() < min_rank:
        raise ValueError(
            f"{name}: expected a tensor of rank >= {min_rank} (..., {'T, ' if min_rank > 1 else ''}d), "
            f"got shape {tuple(x.shape)}"
        )
    if finite:
        check_finite(name, x)
    return x


def check_same_kind(**tensors: torch.Tensor) -> None:
    """Require all tensors to share one dtype and one device."""
    items = list(tensors.items())
    first_name, first = items[0]
    for name, t in items[1:]:
        if t.dtype != first.dtype:
            raise TypeError(f"{name}: expected dtype {first.dtype} (the dtype of {first_name}), got {t.dtype}")
        if t.device != first.device:
            raise ValueError(f"{name}: expected device {first.device} (the device of {first_name}), got {t.device}")


def check_dim(name: str, got: int, expected: int, what: str) -> None:
    """Require one size to equal the size it must match."""
    if got != expected:
        raise ValueError(f"{name}: expected {what} = {expected}, got {got}")


def broadcast_lead(**shapes: Sequence[int]) -> torch.Size:
    """Broadcast the leading (batch, head) shapes of several tensors, or say which ones clash."""
    first, *rest = shapes.values()
    if all(tuple(s) == tuple(first) for s in rest):  # the common case, without torch.broadcast_shapes' set-up
        return torch.Size(first)
    try:
        return torch.broadcast_shapes(*shapes.values())
    except RuntimeError:
        described = ", ".join(f"{n}: {tuple(s)}" for n, s in shapes.items())
        raise ValueError(f"leading (batch/head) dims must broadcast; got {described}") from None


def check_real(name: str, value: object, *, low: float | None = None, high: float | None = None,
               low_open: bool = False) -> float:
    """Require a finite real number within [low, high] (or (low, high] when ``low_open``)."""
    if isinstance(value, torch.Tensor):
        if value.numel() != 1 or value.requires_grad:
            raise TypeError(f"{name}: expected a real number (a one-element tensor without gradient is accepted), "
                            f"got a tensor of shape {tuple(value.shape)}"
                            f"{' that requires grad' if value.requires_grad else ''}")
        value = value.item()  # a one-element tensor is a number here (accepted by contract)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a real number, got {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name}: expected a finite number, got {value}")
    if low is not None and (value <= low if low_open else value < low):
        raise ValueError(f"{name}: expected a number {'>' if low_open else '>='} {low}, got {value}")
    if high is not None and value > high:
        raise ValueError(f"{name}: expected a number <= {high}, got {value}")
    return value


def check_real_tensor(name: str, x: torch.Tensor, *, low: float | None = None, high: float | None = None) -> None:
    """Require every entry of a tensor hyper-parameter to be finite and within [low, high]."""
    if not all_finite(x):
        raise ValueError(f"{name}: expected finite values, got a tensor with inf or nan "
                         "(non-finite inputs are rejected everywhere in pavlovlab)")
    if low is not None and bool((x < low).any()):
        raise ValueError(f"{name}: expected values >= {low}, got a minimum of {x.min().item():.4g}")
    if high is not None and bool((x > high).any()):
        raise ValueError(f"{name}: expected values <= {high}, got a maximum of {x.max().item():.4g}")


def check_numbers(name: str, x: object, *, low: float | None = None, high: float | None = None,
                  low_open: bool = False) -> None:
    """Require a number, an array or a tensor of finite numbers within [low, high] (or (low, high]):
    for the theory helpers, whose arguments broadcast."""
    try:
        a = x.detach().cpu().double() if isinstance(x, torch.Tensor) else torch.as_tensor(x, dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(f"{name}: expected a number or an array of numbers, got {type(x).__name__}") from None
    if a.numel() == 0:
        raise ValueError(f"{name}: expected at least one number, got an empty {type(x).__name__}")
    if not bool(torch.isfinite(a).all()):
        raise ValueError(f"{name}: expected finite numbers, got {x!r} (non-finite inputs are rejected everywhere "
                         "in pavlovlab)")
    if low is not None and bool((a <= low).any() if low_open else (a < low).any()):
        raise ValueError(f"{name}: expected numbers {'>' if low_open else '>='} {low}, got {a.min().item():g}")
    if high is not None and bool((a > high).any()):
        raise ValueError(f"{name}: expected numbers <= {high}, got {a.max().item():g}")


def check_int(name: str, value: object, *, low: int | None = None, high: int | None = None) -> int:
    """Require an integer (Python or NumPy) within [low, high]."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: expected an integer, got {type(value).__name__}")
    value = int(value)
    if low is not None and value < low:
        raise ValueError(f"{name}: expected an integer >= {low}, got {value}")
    if high is not None and value > high:
        raise ValueError(f"{name}: expected an integer <= {high}, got {value}")
    return value


def check_choice(name: str, value: object, choices: Iterable[str]) -> str:
    """Require one of the named options."""
    choices = list(choices)
    if value not in choices:
        raise ValueError(f"{name}: expected one of {choices}, got {value!r}")
    return value


def check_generator(name: str, generator: object) -> torch.Generator | None:
    """``generator`` when it is a ``torch.Generator`` or None, else TypeError naming ``name``."""
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(f"{name}: expected a torch.Generator or None, got {type(generator).__name__}")
    return generator


def check_device(name: str, device: object) -> torch.device | None:
    """A device argument as a ``torch.device`` (None stays None): a ``torch.device`` or its name.

    Refuses a name torch does not know (``'gpu0'``, ``'tpu'``) and a CUDA device on a machine without one,
    before anything is allocated."""
    if device is None:
        return None
    if not isinstance(device, (str, torch.device)):
        raise TypeError(f"{name}: expected a torch.device, a device name such as 'cpu' or 'cuda', or None, "
                        f"got {type(device).__name__}")
    try:
        dev = torch.device(device)
    except RuntimeError:
        raise ValueError(f"{name}: expected a device name such as 'cpu', 'cuda' or 'cuda:0', got {device!r}") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"{name}: expected an available device, got {device!r} but this machine has no CUDA device "
                         "(use 'cpu' or pavlovlab.default_device())")
    return dev


def check_shape(name: str, shape: object, *, low: int = 1) -> tuple[int, ...]:
    """A shape (a tuple, list or ``torch.Size`` of integers >= ``low``, 1 by default) as a tuple of ints."""
    if isinstance(shape, (str, bytes)) or not isinstance(shape, (Sequence, torch.Size)):
        raise TypeError(f"{name}: expected a tuple of sizes such as (3,) or (), got {type(shape).__name__} "
                        f"{shape!r}")
    return tuple(check_int(f"{name}[{i}]", s, low=low) for i, s in enumerate(shape))


def check_lengths(**sequences: Sized) -> int:
    """Require sequences (lists, arrays, tensors) of one length; return it. Names the one that differs."""
    items = list(sequences.items())
    first_name, first = items[0]
    for name, seq in items[1:]:
        if len(seq) != len(first):
            raise ValueError(f"{name}: expected the length of {first_name}, {len(first)}, got {len(seq)}")
    return len(first)


def _memory_bytes(device: torch.device) -> int | None:
    """The total memory of ``device`` in bytes (None where it cannot be known)."""
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).total_memory
    if device.type == "cpu":
        try:
            return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            return None
    return None


def _bytes(n: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB", "TB", "PB"):
        if n < 1000 or unit == "PB":
            return f"{n:.3g} {unit}"
        n /= 1000
    return f"{n:.3g} PB"  # pragma: no cover


def check_fits(name: str, shape: Sequence[int], dtype: torch.dtype | None, device: torch.device | str | None,
               what: str, advice: str = "") -> None:
    """Refuse, before allocating, a tensor of ``shape`` that cannot fit in the memory of ``device``.

    ``what`` says where the size comes from (``"d_value × d_key"``); the message gives the size in bytes
    and the memory available, e.g. ``S: d_value × d_key = 1e+12 float32 entries (4 TB) do not fit in the
    135 GB of cpu memory``, then ``advice`` (what to do instead) when given. Every quadratic form of the
    package (a T × T score matrix, an n × n Gram matrix) calls it before its product."""
    dtype = dtype or torch.get_default_dtype()
    dev = torch.device("cpu") if device is None else torch.device(device)
    entries = math.prod(int(s) for s in shape)
    need = entries * torch.empty((), dtype=dtype).element_size()
    have = _memory_bytes(dev)
    if have is not None and need > have:
        raise ValueError(f"{name}: {what} = {entries:.4g} {str(dtype).removeprefix('torch.')} entries "
                         f"({_bytes(need)}) do not fit in the {_bytes(have)} of {dev.type} memory"
                         + (f"; {advice}" if advice else ""))


P = ParamSpec("P")
R = TypeVar("R")
Validator = Callable[..., Mapping[str, Any] | None]
"""A door's validator: its parameters are some of the door's, by name; it raises on bad input and returns None
or the checked values of some of the door's arguments by name (a number as a float, a name resolved, tensors
broadcast), which the body then receives in their place."""


def checked_by(validator: Validator, *, nonfinite: str | Callable[[Mapping[str, Any]], str] | None = None,
               finite: tuple[str, ...] = ()) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Declare a public function's check at its door, so that its body is its algorithm.

    The door keeps its body's name, signature, annotations and docstring (``help()``, Sphinx and mypy see the
    body). A call binds the arguments as Python does (a binding error is the door's own TypeError), then

    1. ``validator`` is called with the arguments it names (its parameters are some of the door's, by name:
       one validator serves several doors) and raises on bad input; what it returns (None or a mapping of
       some of its argument names to checked values) replaces those arguments;
    2. the body runs on the checked arguments;
    3. with ``nonfinite`` (the cause, or a function of the arguments as given that says it), a NaN/inf result
       warns once (a :class:`NonFiniteWarning` named after the door, as :func:`warn_nonfinite` does); the
       result is checked whole, or its first element when it is a plain tuple (an output and its state).
       ``finite`` names tensor arguments whose finiteness is checked, as the body received them, together
       with the result, in one reduction each and one synchronisation, instead of one synchronisation per
       tensor in the validator: a non-finite one raises as :func:`check_finite` does.

    The door is written out for its signature, as :mod:`dataclasses` writes ``__init__``, so that a call costs
    what the two calls cost and Python binds the arguments itself; its source is in :mod:`linecache`, so a
    traceback shows its lines (``checked = validator(q, k, v, beta)``). A door that calls another door's
    algorithm calls its body, ``unchecked(door)``, which checks nothing.
    """
    wants = tuple(f"{n}={n}" if p.kind is inspect.Parameter.KEYWORD_ONLY else n
                  for n, p in inspect.signature(validator).parameters.items())
    if finite and nonfinite is None:
        raise TypeError("finite: expected a nonfinite cause to warn with when the inputs are finite, got None")

    def declare(body: Callable[P, R]) -> Callable[P, R]:
        parameters = inspect.signature(body).parameters
        kinds = {p.kind for p in parameters.values()}
        if kinds - {inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.VAR_POSITIONAL,
                    inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.VAR_KEYWORD}:
            raise TypeError(f"{body.__qualname__}: a checked door takes named parameters (with *args and **kwargs) "
                            f"only, got {kinds}")
        if unknown := {w.split("=")[0] for w in wants} - set(parameters) or set(finite) - set(parameters):
            raise TypeError(f"{validator.__name__}: checks {sorted(unknown)}, which {body.__qualname__} does not take")
        if taken := _DOOR_NAMES & set(parameters):
            raise TypeError(f"{body.__qualname__}: a checked door's parameters cannot be named {sorted(taken)} (the "
                            "names its door is written with)")
        door = _write_door(body, validator, wants, parameters, finite, nonfinite)
        return functools.wraps(body)(door)

    return declare


_DOOR_NAMES = frozenset({"validator", "body", "nonfinite", "own", "defaults", "_check_result", "checked", "result",
                         "given"})
"""The names :func:`_write_door` writes a door with, besides the door's parameters."""


def _write_door(body: Callable[..., Any], validator: Validator, wants: tuple[str, ...],
                parameters: Mapping[str, inspect.Parameter], finite: tuple[str, ...],
                nonfinite: str | Callable[[Mapping[str, Any]], str] | None) -> Callable[..., Any]:
    """The door of :func:`checked_by`, written out with the body's parameters (their defaults are the body's own
    objects) and compiled once."""
    kw_only, var = inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.VAR_POSITIONAL
    named = [n for n, p in parameters.items() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    options = next((n for n, p in parameters.items() if p.kind is inspect.Parameter.VAR_KEYWORD), None)
    signature, star = [], False
    for n in named:
        if parameters[n].kind is var:
            signature.append(f"*{n}")
            star = True
            continue
        if parameters[n].kind is kw_only and not star:
            signature.append("*")
            star = True
        signature.append(n if parameters[n].default is inspect.Parameter.empty else f"{n}=defaults[{n!r}]")
    if options:
        signature.append(f"**{options}")
    own = [w.split("=")[0] for w in wants]
    positional = [f"*{n}" if parameters[n].kind is var else n for n in named if parameters[n].kind is not kw_only]
    call = ", ".join([*positional, *(f"{n}={n}" for n in named if parameters[n].kind is kw_only),
                      *([f"**{options}"] if options else [])])
    lines = [f"def {body.__name__}({', '.join(signature)}):"]
    if callable(nonfinite):  # says the cause from the arguments as given
        lines += ["    given = {" + ", ".join(f"{n!r}: {n}" for n in named) + "}"]
    lines += [f"    checked = validator({', '.join(wants)})",
              "    if checked is not None:",
              "        if not checked.keys() <= own:",
              "            raise TypeError(f'{validator.__name__}: returned checked values of "
              "{sorted(checked.keys() - own)}, which it does not take')"]
    lines += [f"        {n} = checked.get({n!r}, {n})" for n in own]
    lines += [f"    result = body({call})"]
    if nonfinite is not None:
        received = "".join(f"{n}, " for n in finite)
        lines += [f"    _check_result({body.__qualname__!r}, result, {finite!r}, ({received}), nonfinite, "
                  f"{'given' if callable(nonfinite) else 'None'})"]
    lines += ["    return result"]
    source = "\n".join(lines) + "\n"
    filename = f"<checked_by {body.__module__}.{body.__qualname__}>"
    namespace: dict[str, Any] = {"validator": validator, "body": body, "nonfinite": nonfinite,
                                 "_check_result": _check_result, "own": frozenset(own),
                                 "defaults": {n: p.default for n, p in parameters.items()}}
    exec(compile(source, filename, "exec"), namespace)  # the source: parameter names, built above
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    door = namespace[body.__name__]
    door.__code__ = door.__code__.replace(co_qualname=body.__qualname__)
    return door


def _check_result(where: str, result: object, names: tuple[str, ...], received: tuple[torch.Tensor, ...],
                  nonfinite: str | Callable[[Mapping[str, Any]], str], given: Mapping[str, Any] | None) -> None:
    """The non-finite policy on a door's result (see :func:`checked_by`): raise for a non-finite argument of
    ``names`` (``received`` by the body), else warn for a non-finite result, at the caller's line."""
    whole: Any = result
    out: torch.Tensor = whole[0] if type(whole) is tuple else whole
    if all_finite(torch.stack([*(x.detach().sum() for x in received), out.detach().sum()]) if received else out):
        return
    for name, x in zip(names, received, strict=True):
        check_finite(name, x)
    if not all_finite(out):  # not only a sum that overflowed
        warn_nonfinite(where, out, nonfinite if isinstance(nonfinite, str) else nonfinite(given or {}))


def unchecked(door: Callable[P, R]) -> Callable[P, R]:
    """The body of a door declared with :func:`checked_by`: its algorithm, checking nothing (for a caller whose
    arguments are already checked, so that nothing is checked twice)."""
    body: Callable[P, R] = door.__wrapped__  # type: ignore[attr-defined]
    return body
