"""The demo exercise of ``00_start_here``: how an exercise, its hints, its solution and its check work.

Exercise 1 (implement): ``match(bell, test)``, how strongly a test stimulus matches the bell (their dot product). In
the notebook: ``from pavlovlab.teach.exercises import start_here as ex`` (then ``ex.start()``), then
``ex.check_match(match)``, ``ex.hint(1)``, ``ex.solution(1)``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from pavlovlab.teach.language import N_, _

from .book import Book
from .checking import Case, Turn, check_function

BOOK = Book("00_start_here", __name__)
session, start, hint, solution, reveal, progress = (BOOK.session, BOOK.start, BOOK.hint, BOOK.solution,
                                                      BOOK.reveal, BOOK.progress)


def match_reference(bell: torch.Tensor, test: torch.Tensor) -> torch.Tensor:
    """How strongly a test stimulus matches the bell: the dot product ``bell · test``. bell, test: (d,) -> ()."""
    return (bell * test).sum(-1)


@BOOK.exercise(1, N_("how well a test stimulus matches the bell"), kind="implement", hints=[
    N_("The match should add up, feature by feature, how much the two patterns agree: a feature that is "
       "large in both counts a lot, a feature that is zero in either counts nothing. Which quantity of two "
       "vectors does exactly that?"),
    N_("It is the dot product: multiply the two vectors entry by entry, then add the products up (a sum, "
       "not an average: a longer pattern that agrees everywhere should match more)."),
    N_("In PyTorch: the elementwise product `bell * test`, then `.sum()`; or `torch.dot(bell, test)`."),
])
def check_match(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], *, turn: Turn, seed: int = 0) -> bool:
    """``fn(bell, test) -> bell · test`` on random vectors of a few lengths (float32 and float64); the first
    case has length 1, where a sum and an average agree, the others do not."""
    g = torch.Generator().manual_seed(seed)
    cases: list[Case] = []
    for d, dtype in ((1, torch.float64), (3, torch.float32), (8, torch.float64), (17, torch.float64)):
        cases.append(((torch.randn(d, generator=g, dtype=dtype), torch.randn(d, generator=g, dtype=dtype)), {}))
    return check_function(
        fn, match_reference, cases, turn=turn, rtol=1e-6, atol=1e-9,
        case_hints=[_("one feature"), _("three features"), _("eight features"), _("seventeen features")],
        mistakes=[(lambda b, t: (b * t).mean(-1), _("an average divides by the number of features: should a longer "
                                                    "pattern that agrees everywhere match more, or the same?")),
                  (lambda b, t: b * t, _("your match is one number per feature: how strongly do the two patterns "
                                         "agree as a whole, in one number?"))],
        hint=_("work the failing case out by hand: how much do the two patterns agree on each feature, and what "
               "is their agreement in total? Where does your function's result differ?"))


__all__ = ["BOOK", "check_match", "match_reference", "session"]
