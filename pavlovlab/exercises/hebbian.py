"""Checkers for the exercises of ``02_hebbian_memory``.

Each ``check_*`` takes the learner's function, calls it and the package's reference on several random
cases (float64, drawn from a seeded CPU generator), and prints one friendly verdict. They never raise.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from ..capacity import random_keys
from ..hebbian import crosstalk
from ..memory import AssociativeMemory
from ._core import Case, check_function

_DTYPE = torch.float64
_SHAPES = [(1, 3, 2), (3, 4, 4), (6, 5, 3), (9, 16, 7)]  # (n, d_k, d_v): one pair, d_v ≠ d_k, n > d_k


def _pairs(g: torch.Generator, n: int, d_k: int, d_v: int) -> tuple[torch.Tensor, torch.Tensor]:
    keys = random_keys(n, d=d_k, kind="sphere", generator=g, dtype=_DTYPE)
    return keys, torch.randn(n, d_v, generator=g, dtype=_DTYPE)


# --------------------------------------------------------------------------- Exercise 1: build S

def memory_reference(keys: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """``S = Σ_i v_i k_iᵀ``, computed by writing the pairs one by one into the package's memory.

    keys: (n, d_k), values: (n, d_v) -> S: (d_v, d_k).
    """
    mem = AssociativeMemory(keys.shape[-1], values.shape[-1], rule="hebbian", dtype=keys.dtype)
    mem.write(keys, values)
    return mem.S


def check_memory(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], *, seed: int = 0) -> bool:
    """Check ``fn(keys, values) -> S`` against ``AssociativeMemory(rule="hebbian")`` after writing the pairs."""
    g = torch.Generator().manual_seed(seed)
    cases: list[Case] = [(_pairs(g, n, d_k, d_v), {}) for n, d_k, d_v in _SHAPES]
    return check_function(fn, memory_reference, cases, name="Exercise 1 (memory from outer products)",
                          hint="S has shape (d_v, d_k): start from S = torch.zeros(d_v, d_k) and add "
                               "torch.outer(values[i], keys[i]) for every pair i (value first, then key); "
                               "or all at once: values.T @ keys.", rtol=1e-6, atol=1e-9)


# --------------------------------------------------------------------------- Exercise 2: the crosstalk

def crosstalk_reference(keys: torch.Tensor, values: torch.Tensor, j: int) -> torch.Tensor:
    """The crosstalk on pair j: ``c_j = Σ_{i≠j} v_i (k_i·k_j)``. keys: (n, d_k), values: (n, d_v) -> (d_v,)."""
    return crosstalk(keys, values)[j]


def check_crosstalk(fn: Callable[[torch.Tensor, torch.Tensor, int], torch.Tensor], *, seed: int = 0) -> bool:
    """Check ``fn(keys, values, j) -> c_j`` against ``pavlovlab.hebbian.crosstalk`` for several j."""
    g = torch.Generator().manual_seed(seed)
    cases: list[Case] = []
    for n, d_k, d_v in _SHAPES[1:]:  # at least two pairs, so there is some crosstalk
        keys, values = _pairs(g, n, d_k, d_v)
        cases += [((keys, values, j), {}) for j in (0, n // 2, n - 1)]
    return check_function(fn, crosstalk_reference, cases, name="Exercise 2 (crosstalk)",
                          hint="add up values[i] * (keys[i] @ keys[j]) over every i except j itself; or read "
                               "the whole memory, S @ keys[j], and subtract the signal "
                               "values[j] * (keys[j] @ keys[j]). The result has shape (d_v,).",
                          rtol=1e-6, atol=1e-9)


__all__ = ["check_crosstalk", "check_memory", "crosstalk_reference", "memory_reference"]
