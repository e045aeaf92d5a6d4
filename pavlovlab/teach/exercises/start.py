"""The demo exercise of ``00_start_here``: how an exercise, its hints, its solution and its check work.

Exercise 1 (implement): ``match(bell, test)``, how strongly a test stimulus matches the bell (their dot
product). Learners type ``ex.hint(1)`` for the next hint tier and ``ex.solution(1)`` for the reference.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from ._core import Case, Exercise, Exercises, check_function

BOOK = Exercises("00_start_here")

BOOK.add(Exercise(
    number=1, title="how well a test stimulus matches the bell", kind="implement",
    hints=[
        "The match should add up, feature by feature, how much the two patterns agree: a feature that is "
        "large in both counts a lot, a feature that is zero in either counts nothing. Which quantity of two "
        "vectors does exactly that?",
        "It is the dot product: multiply the two vectors entry by entry, then add the products up (a sum, "
        "not an average: a longer pattern that agrees everywhere should match more).",
        "In PyTorch: the elementwise product `bell * test`, then `.sum()`; or `torch.dot(bell, test)`.",
    ],
    solution='''
def match(bell, test):
    return (bell * test).sum()         # or torch.dot(bell, test)


bell = torch.tensor([1.0, 0.0, 2.0])
# try it: should give 3
match(bell, torch.tensor([1.0, 0.5, 1.0]))
''',
    check="ex.check_match(match);",
    wrong='''
def match(bell, test):
    return (bell * test).mean()
''',
))

hint, solution = BOOK.hint, BOOK.solution


def match_reference(bell: torch.Tensor, test: torch.Tensor) -> torch.Tensor:
    """How strongly a test stimulus matches the bell: the dot product ``bell · test``. bell, test: (d,) -> ()."""
    return (bell * test).sum(-1)


def check_match(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], *, seed: int = 0) -> bool:
    """Exercise 1: check ``fn(bell, test) -> bell · test`` on random vectors of a few lengths (float32 and
    float64); the first case has length 1, where a sum and an average agree, the others do not."""
    g = torch.Generator().manual_seed(seed)
    cases: list[Case] = []
    for d, dtype in ((1, torch.float64), (3, torch.float32), (8, torch.float64), (17, torch.float64)):
        cases.append(((torch.randn(d, generator=g, dtype=dtype), torch.randn(d, generator=g, dtype=dtype)), {}))
    return check_function(
        fn, match_reference, cases, name="Exercise 1 (match of bell and test stimulus)", rtol=1e-6, atol=1e-9,
        number=1, book=BOOK,
        case_hints=["one feature", "three features", "eight features", "seventeen features"],
        hint="try match(bell, bell) for a bell with more and more features that all agree: should the "
             "match grow with the number of agreeing features, or stay the same?")


__all__ = ["BOOK", "check_match", "hint", "match_reference", "solution"]
