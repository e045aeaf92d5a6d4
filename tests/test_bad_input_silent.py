"""Calls that used to return a wrong or meaningless result without a word: each now raises naming the argument
or warns (the non-finite policy of ``pavlovlab._checks``), and the valid call next to it still works."""

from __future__ import annotations

import math

import torch
from badinput import check, parametrize

from pavlovlab import AssociativeMemory, softmax_attention
from pavlovlab.forgetting import decay as D
from pavlovlab.forgetting import oja as O
from pavlovlab.forgetting import unlearning as U


def _memory_of_huge_writes() -> AssociativeMemory:
    mem = AssociativeMemory(4, 4)
    for _ in range(3):
        mem.write(torch.full((4,), 1e19), torch.full((4,), 1e19))  # S stays finite (3e38), S q overflows
    return mem


def _unlearn_strengthens() -> torch.Tensor:
    g = torch.Generator().manual_seed(0)
    S = torch.randn(3, 4, generator=g, dtype=torch.float64)
    k = torch.tensor([2.0, 1.5, 0.9, 0.3], dtype=torch.float64)        # ‖k‖² = 7.15
    return U.unlearn_delta(S, k, beta=3.0)


def _unlearn_at_the_bound() -> bool:
    S = torch.tensor([[1.0, 2.0]], dtype=torch.float64)
    k = torch.tensor([2.0, 0.0], dtype=torch.float64)                    # ‖k‖² = 4: β = 0.5 reflects the error
    after = U.unlearn_delta(S, k, beta=0.5) @ k
    return bool(torch.allclose(after, -(S @ k)))


def _curve() -> torch.Tensor:
    return torch.linspace(1, 0, 10)


ROWS = [
    ("unlearn_delta(beta=3) with ‖k‖² = 7.15", _unlearn_strengthens, ValueError, "beta: expected beta·‖k‖² <= 2"),
    ("unlearn_delta(beta·‖k‖² = 2) reflects the error", _unlearn_at_the_bound, "ok", ""),
    ("unlearn_delta(protect=..., beta=2.5)",
     lambda: U.unlearn_delta(torch.eye(3), torch.eye(3)[0], beta=2.5, protect=torch.eye(3)[1:2]), ValueError,
     "beta: expected a number <= 2 with protect"),
    ("unlearn_delta with a key whose ‖k‖² overflows float32",
     lambda: U.unlearn_delta(torch.ones(3, 4), torch.full((4,), 1e20)), ValueError,
     "k: expected a key whose squared norm ‖k‖² fits in torch.float32"),
    ("AssociativeMemory.read overflowing to inf", lambda: _memory_of_huge_writes().read(torch.full((4,), 1e19)),
     "warn", "AssociativeMemory.read"),
    ("AssociativeMemory.read of a sequence overflowing", lambda: _memory_of_huge_writes().read(
        torch.full((2, 4), 1e19)), "warn", "AssociativeMemory.read"),
    ("softmax_attention(causal='yes')", lambda: softmax_attention(*(torch.ones(3, 2),) * 3, causal="yes"), TypeError,
     "causal: expected True or False, got str"),
    ("softmax_attention(causal=1)", lambda: softmax_attention(*(torch.ones(3, 2),) * 3, causal=1), TypeError,
     "causal: expected True or False, got int"),
    ("oja_pca(lr=0)", lambda: O.oja_pca(torch.randn(20, 3), lr=0.0), ValueError, "lr: expected a number > 0"),
    ("oja_subspace(lr=0)", lambda: O.oja_subspace(torch.randn(20, 3), 2, lr=0.0), ValueError,
     "lr: expected a number > 0"),
    ("measured_half_life(level above the curve)", lambda: D.measured_half_life(_curve(), level=1.5), ValueError,
     "level: expected a level the curves reach"),
    ("measured_half_life(level at the start)", lambda: D.measured_half_life(_curve(), level=1.0).item() == 0.0,
     "ok", ""),
    ("measured_half_life(level below the curve)",
     lambda: math.isinf(D.measured_half_life(_curve(), level=-0.5).item()), "ok", ""),
]


@parametrize(ROWS)
def test_no_silent_result(call, expect, fragment):
    check(call, expect, fragment)
