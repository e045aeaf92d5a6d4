"""Running a learner's code for a checker: in a helper thread, within a time limit, on fresh copies of a case's
inputs, with the learner's own exits and interrupts turned into plain sentences (never a traceback)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

from pavlovlab.teach.language import _

PROGRESS_AFTER = 5.0
"""Seconds after which a check still waiting on the learner's measurement prints one progress line (with its
time limit and how to stop it)."""


class TookTooLong(Exception):
    """The learner's function did not return within its time limit."""


class Stopped(Exception):
    """The learner interrupted the kernel (Ctrl-C, the ■ button) while the check waited for their code."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"stopped after {seconds:.1f} s")
        self.seconds = seconds


class Exited(Exception):
    """The learner's code raised ``SystemExit`` (``sys.exit``, ``exit()``) or a ``KeyboardInterrupt`` of its own
    (a key press reaches the kernel's main thread, never the thread that runs the learner's code): the message
    says what happened, in a sentence."""


def copy_case(x: Any) -> Any:
    """A fresh copy of a case's inputs: tensors cloned (lists, tuples and dicts of them copied too)."""
    if isinstance(x, torch.Tensor):
        return x.detach().clone()
    if isinstance(x, list):
        return [copy_case(v) for v in x]
    if isinstance(x, tuple):
        return tuple(copy_case(v) for v in x)
    if isinstance(x, dict):
        return {k: copy_case(v) for k, v in x.items()}
    return x


def call_with_limit(fn: Callable[..., Any], args: Sequence[Any] = (), kwargs: Mapping[str, Any] | None = None, *,
                    limit: float, waiting: str = "") -> Any:
    """``fn(*args, **kwargs)``, or :class:`TookTooLong` after ``limit`` seconds.

    The call runs in a helper thread that the checker waits for. Python cannot stop a thread from outside,
    so a function that never returns keeps running in the background (the message says so: restarting the
    kernel stops it); the notebook itself gets its verdict and stays usable. Exceptions of ``fn`` propagate,
    except ``SystemExit`` and a ``KeyboardInterrupt`` raised by ``fn`` itself, which become :class:`Exited`.
    With ``waiting`` (what is running, e.g. the exercise's name), a call still running after
    :data:`PROGRESS_AFTER` seconds prints one line saying so, with the limit. An interrupt of the kernel while
    waiting raises :class:`Stopped`.
    """
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn(*args, **(kwargs or {}))
        except SystemExit as e:
            call = f"sys.exit({'' if e.code is None else repr(e.code)})"
            box["error"] = Exited(_("it called {call}, which ends a whole program, not a function: return the "
                                    "result instead").format(call=call))
        except KeyboardInterrupt:
            box["error"] = Exited(_("it raised KeyboardInterrupt itself (nobody pressed stop): return the result "
                                    "instead"))
        except BaseException as e:  # handed to the caller's thread below
            box["error"] = e

    worker = threading.Thread(target=run, name="pavlovlab-learner-answer", daemon=True)
    start = time.monotonic()
    worker.start()
    told = not waiting
    try:
        while worker.is_alive() and (left := limit - (time.monotonic() - start)) > 0:
            worker.join(min(left, 0.25))        # short slices: an interrupt is seen at once on every platform
            if not told and worker.is_alive() and time.monotonic() - start >= PROGRESS_AFTER:
                # Translators: {name} is the exercise ("Exercise 3 (…)"); the times are in seconds.
                print(_("⏳ {name}: still running after {after:.0f} s. The check waits up to {limit:.0f} s; "
                        "interrupt the kernel (the ■ button) to stop waiting.").format(
                          name=waiting, after=PROGRESS_AFTER, limit=limit), flush=True)
                told = True
    except KeyboardInterrupt:
        raise Stopped(time.monotonic() - start) from None
    if worker.is_alive():
        raise TookTooLong()
    if "error" in box:
        raise box["error"]
    return box["value"]


def too_long(limit: float, where: str) -> str:
    """The verdict's sentence for a learner's function that ran past ``limit`` seconds ``where`` (a phrase in the
    language in use: "on test case 2 (…)", "to run")."""
    # Translators: {where} is "on test case 2 (…)", "to run" or "to compute its answer", translated on its own.
    return _("your function took more than {limit:.0f} s {where}, so the check stopped waiting (it may still be "
             "running in the background: restart the kernel if the notebook stays busy). Does a loop never end, "
             "or does it wait for something?").format(limit=limit, where=where)


def raised(e: BaseException, doing: str) -> str:
    """A learner's exception in plain words (their own code: its type and message, never a traceback); ``doing``
    is the phrase, in the language in use, that says what raised it ("running your measurement")."""
    if isinstance(e, Exited):
        # Translators: {doing} is "running your measurement", "on test case 2 (…) your function", …
        return _("{doing} stopped early: {why}").format(doing=doing, why=e)
    text = str(e).strip() or _("(no message)")
    # Translators: {doing} as above; {error} is the name of a Python exception (ValueError), {text} its message.
    return _("{doing} raised {error}: {text}").format(doing=doing, error=type(e).__name__, text=text)
