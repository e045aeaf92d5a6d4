"""Checkers for the exercises of ``03_linear_attention`` (and the warm-up of ``00_start_here``).

Each ``check_*`` takes the learner's function, calls it and the package's reference on several random
cases (float64, drawn from a seeded CPU generator), and prints one friendly verdict. They never raise.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from ..attention import linear_attention
from ._core import Case, check_function

_DTYPE = torch.float64


def _randn(g: torch.Generator, *shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=g, dtype=_DTYPE)


# --------------------------------------------------------------------------- warm-up (00_start_here)

def dot_product_reference(bell: torch.Tensor, test: torch.Tensor) -> torch.Tensor:
    """How strongly a test stimulus matches the bell: the dot product ``bell · test``. bell, test: (d,) -> ()."""
    return (bell * test).sum(-1)


def check_dot_product(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], *, seed: int = 0) -> bool:
    """Check ``fn(bell, test) -> bell · test`` on random vectors of a few lengths."""
    g = torch.Generator().manual_seed(seed)
    cases: list[Case] = [((_randn(g, d), _randn(g, d)), {}) for d in (1, 3, 8, 17)]
    return check_function(fn, dot_product_reference, cases, name="Dot product of bell and test stimulus",
                          hint="multiply the two vectors entry by entry and add up: (bell * test).sum(), "
                               "or torch.dot(bell, test).", rtol=1e-9, atol=1e-12)


# --------------------------------------------------------------------------- Exercise 1: recurrent form

def recurrent_reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """The conditioning circuit ``S_t = S_{t-1} + v_t k_tᵀ, o_t = S_t q_t`` (S_0 = 0).

    q, k: (T, d_k), v: (T, d_v) -> o: (T, d_v); the package's ``linear_attention(mode="recurrent")``.
    """
    return linear_attention(q, k, v, mode="recurrent")


def _qkv_cases(g: torch.Generator) -> list[Case]:
    shapes = [(1, 3, 2), (5, 4, 4), (12, 6, 3), (33, 5, 7)]  # (T, d_k, d_v): T = 1, d_v ≠ d_k, odd sizes
    return [((_randn(g, T, dk), _randn(g, T, dk), _randn(g, T, dv)), {}) for T, dk, dv in shapes]


def check_recurrent(fn: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor], *,
                    seed: int = 0) -> bool:
    """Check the learner's recurrent form ``fn(q, k, v) -> o`` against ``linear_attention(mode="recurrent")``."""
    g = torch.Generator().manual_seed(seed)
    return check_function(fn, recurrent_reference, _qkv_cases(g), name="Exercise 1 (recurrent form)",
                          hint="start from S = torch.zeros(d_v, d_k); at each step t first write "
                               "S = S + torch.outer(v[t], k[t]), then read o_t = S @ q[t]; "
                               "stack the reads with torch.stack(..., dim=0).", rtol=1e-8, atol=1e-10)


# --------------------------------------------------------------------------- Exercise 2: the chunk carry

def inter_chunk_reference(q_c: torch.Tensor, k_c: torch.Tensor, v_c: torch.Tensor,
                          S: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """What the state carried into a chunk contributes, and the state carried out of it.

    q_c, k_c: (C, d_k), v_c: (C, d_v), S: (d_v, d_k) (everything written before the chunk).
    Returns ``(Q_c Sᵀ, S + V_cᵀ K_c)``: the inter-chunk term (C, d_v) and the next state (d_v, d_k).
    Computed from the package: the chunk's output started from S minus its output started from 0.
    """
    with_past, S_next = linear_attention(q_c, k_c, v_c, mode="parallel", initial_state=S, return_state=True)
    alone = linear_attention(q_c, k_c, v_c, mode="parallel")
    return with_past - alone, S_next


def _chunk_cases(g: torch.Generator) -> list[Case]:
    shapes = [(1, 3, 2), (4, 4, 4), (8, 6, 3), (5, 7, 5)]  # (C, d_k, d_v)
    return [((_randn(g, C, dk), _randn(g, C, dk), _randn(g, C, dv), _randn(g, dv, dk)), {})
            for C, dk, dv in shapes]


def check_inter_chunk(fn: Callable[..., tuple[torch.Tensor, torch.Tensor]], *, seed: int = 0) -> bool:
    """Check ``fn(q_c, k_c, v_c, S) -> (inter, S_next)`` against the package (see ``inter_chunk_reference``)."""
    g = torch.Generator().manual_seed(seed)
    return check_function(fn, inter_chunk_reference, _chunk_cases(g), name="Exercise 2 (inter-chunk term)",
                          hint="every query of the chunk reads the carried memory: inter = q_c @ S.T "
                               "(shape (C, d_v)); the chunk then adds all its writes at once: "
                               "S_next = S + v_c.T @ k_c. Return both, as a pair.", rtol=1e-8, atol=1e-10)


__all__ = ["check_dot_product", "check_inter_chunk", "check_recurrent", "dot_product_reference",
           "inter_chunk_reference", "recurrent_reference"]
