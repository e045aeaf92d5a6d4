"""One Hebbian memory and its crosstalk: many CS→US pairs stored as ``S = Σ_i v_i k_iᵀ``.

Reading the memory with a stored key gives the stored value plus *crosstalk* from every other pair:

    S k_j = v_j (k_j·k_j) + Σ_{i≠j} v_i (k_i·k_j)
            └─ signal ─┘   └──── crosstalk c_j ────┘

Orthonormal keys make the crosstalk vanish (perfect recall, at most ``d_k`` pairs); random unit keys
leave crosstalk whose components have variance ``(n − 1)/d_k`` when the values have unit-variance
components. Random keys come from :func:`pavlovlab.sampling.random_keys` (``kind="sphere"`` or
``"orthogonal"``). Notebook 02 teaches this; notebook 04 (capacity) follows its consequences.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import torch

from .._checks import (
    broadcast_lead,
    check_device,
    check_dim,
    check_fits,
    check_float_dtype,
    check_int,
    check_real,
    check_real_tensor,
    check_same_kind,
    check_tensor,
    checked_by,
    unchecked,
)
from ..sampling import _check_draw, random_keys


def check_pairs(keys: torch.Tensor, values: torch.Tensor) -> None:
    """Check a set of stored pairs: keys (..., n, d_k), values (..., n, d_v), same dtype/device, same n."""
    check_tensor("keys", keys, min_rank=2)
    check_tensor("values", values, min_rank=2)
    check_same_kind(keys=keys, values=values)
    check_dim("values", values.shape[-2], keys.shape[-2], "number of pairs n (dim -2 of keys)")
    broadcast_lead(keys=keys.shape[:-2], values=values.shape[:-2])


def _check_memory_pairs(keys: torch.Tensor, values: torch.Tensor,
                        repeats: float | torch.Tensor | None) -> dict[str, torch.Tensor] | None:
    """The pairs of :func:`outer_product_memory` and the numbers of writes r >= 0 as a tensor like ``keys`` that
    broadcasts to (..., n)."""
    check_pairs(keys, values)
    if repeats is None:
        return None
    if not isinstance(repeats, torch.Tensor):
        return {"repeats": torch.tensor(check_real("repeats", repeats, low=0.0), device=keys.device,
                                        dtype=keys.dtype)}
    check_real_tensor("repeats", repeats, low=0.0)
    n = keys.shape[-2]
    if repeats.dim() and repeats.shape[-1] not in (1, n):
        raise ValueError(f"repeats: expected a number or a tensor broadcasting to (n,) = ({n},), got shape "
                         f"{tuple(repeats.shape)}")
    return {"repeats": repeats.to(device=keys.device, dtype=keys.dtype)}


@checked_by(_check_memory_pairs, nonfinite=lambda given: "very large keys or values overflow the dtype"
            if given["repeats"] is None else "very large keys, values or repeats overflow the dtype")
def outer_product_memory(keys: torch.Tensor, values: torch.Tensor,
                         repeats: float | torch.Tensor | None = None) -> torch.Tensor:
    """The Hebbian memory of n pairs, ``S = Σ_i v_i k_iᵀ = Vᵀ K`` (one "post-it note" per pair).

    keys: (..., n, d_k), values: (..., n, d_v) → S: (..., d_v, d_k), read as ``S @ q``.
    repeats: pair i written r_i times, ``S = Σ_i r_i v_i kᵢᵀ`` (a number ≥ 0 or a tensor broadcasting
    to (..., n)). Equals ``AssociativeMemory(d_k, d_v, rule="hebbian")`` after writing the n pairs.

    >>> S = outer_product_memory(torch.eye(3), torch.ones(3, 2))   # (2, 3)
    """
    if repeats is None:
        return values.mT @ keys
    return (values * cast(torch.Tensor, repeats)[..., None]).mT @ keys  # repeats: made a tensor by the check


_outer_product_memory = unchecked(outer_product_memory)


def _check_overlaps(keys: torch.Tensor, values: torch.Tensor) -> None:
    """The pairs of :func:`crosstalk`, whose n × n overlaps must fit in the device's memory."""
    check_pairs(keys, values)
    check_fits("keys", (*keys.shape[:-2], keys.shape[-2], keys.shape[-2]), keys.dtype, keys.device,
               "the overlaps, batch × n × n", "store fewer pairs per memory")


@checked_by(_check_overlaps, nonfinite="very large keys or values overflow the dtype")
def crosstalk(keys: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """The crosstalk of every stored pair when it is read back with its own key.

    ``c_j = S k_j − v_j (k_j·k_j) = Σ_{i≠j} v_i (k_i·k_j)``: what the other pairs add to the recall of v_j.

    keys: (..., n, d_k), values: (..., n, d_v) → (..., n, d_v), row j is ``c_j``.
    Zero for orthonormal keys; for random unit keys and values with unit-variance components, each
    component has mean 0 and variance ``(n − 1)/d_k``.
    """
    overlaps = keys @ keys.mT                              # (..., n, n): G_ij = k_i·k_j
    self_overlap = torch.diagonal(overlaps, dim1=-2, dim2=-1)[..., None]   # (..., n, 1): k_j·k_j
    return overlaps @ values - self_overlap * values       # row j: Σ_i (k_j·k_i) v_i − (i = j)


_crosstalk = unchecked(crosstalk)


def _check_read(keys: torch.Tensor, values: torch.Tensor, memory: torch.Tensor | None) -> None:
    """The pairs, and the memory (..., d_v, d_k) they are read from when one is given."""
    check_pairs(keys, values)
    if memory is not None:
        check_tensor("memory", memory, min_rank=2)
        check_same_kind(keys=keys, memory=memory)
        check_dim("keys", keys.shape[-1], memory.shape[-1], "key dimension d_k (last dim of memory)")
        check_dim("values", values.shape[-1], memory.shape[-2], "value dimension d_v (dim -2 of memory)")


@checked_by(_check_read, nonfinite="very large keys, values or memory overflow the dtype")
def recall_cosine(keys: torch.Tensor, values: torch.Tensor, memory: torch.Tensor | None = None) -> torch.Tensor:
    """How well each stored value comes back: ``cos(S k_j, v_j)``.

    keys: (..., n, d_k), values: (..., n, d_v) → (..., n) in [−1, 1] (1 = perfect recall up to scale).
    memory: the matrix S (..., d_v, d_k) to read (e.g. after unlearning); by default the Hebbian memory
    of these pairs, ``S = Σ_i v_i k_iᵀ``, for which, with random unit keys and Gaussian values, the
    cosine is about ``1 / sqrt(1 + (n − 1)/d_k)``. A zero read-out gives 0.
    """
    if memory is None:
        memory = values.mT @ keys                               # the Hebbian memory of the pairs
    recalled = keys @ memory.mT                                # (..., n, d_v): row j is S k_j
    cosine = torch.nn.functional.cosine_similarity(recalled, values.expand_as(recalled), dim=-1, eps=1e-12)
    return cosine


_recall_cosine = unchecked(recall_cosine)


_random_keys = unchecked(random_keys)
"""The draw of :func:`pavlovlab.sampling.random_keys` on arguments checked by the door that draws."""


def _check_crosstalk_sweep(ns: Sequence[int] | torch.Tensor, d_k: int, trials: int, d_v: int,
                           generator: torch.Generator | None, dtype: torch.dtype,
                           device: torch.device | str | None) -> dict[str, object]:
    """The sizes of :func:`measure_crosstalk_variance` (the numbers of pairs, each >= 2, as a list of ints), with
    the largest memories' overlaps and each draw of keys checked to fit in memory."""
    sizes = [check_int(f"ns[{i}]", int(x) if isinstance(x, torch.Tensor) else x, low=2)
             for i, x in enumerate(ns)]
    if not sizes:
        raise ValueError("ns: expected at least one number of pairs")
    trials = check_int("trials", trials, low=1)
    checked = {"ns": sizes, "d_k": check_int("d_k", d_k, low=1), "trials": trials, "d_v": check_int("d_v", d_v, low=1),
               "dtype": check_float_dtype("dtype", dtype), "device": check_device("device", device)}
    check_fits("keys", (trials, max(sizes), max(sizes)), checked["dtype"], checked["device"],  # type: ignore[arg-type]
               "the overlaps, batch × n × n", "store fewer pairs per memory")
    for n in sizes:
        _check_draw((trials, n), checked["d_k"], "sphere", generator, None, checked["dtype"])  # type: ignore[arg-type]
    return checked


@checked_by(_check_crosstalk_sweep)
def measure_crosstalk_variance(ns: Sequence[int] | torch.Tensor, d_k: int, *, trials: int = 200, d_v: int = 16,
                       generator: torch.Generator | None = None, dtype: torch.dtype = torch.float64,
                       device: torch.device | str | None = None) -> torch.Tensor:
    """Measure the crosstalk variance: for each number of pairs ``n`` in ``ns``, ``trials`` independent
    memories of ``n`` random unit keys (uniform on the sphere in ``d_k`` dimensions) and Gaussian values
    (unit-variance components, ``d_v`` of them); each memory's mean square crosstalk component
    ``mean_{j,m} c_{j,m}²``, with ``c_j = Σ_{i≠j} v_i (k_i·k_j)``.

    ns: (P,) whole numbers ≥ 2 → (trials, P): one measured variance per memory (the theory is
    ``(n − 1)/d_k``). Random numbers are drawn on the CPU from ``generator`` (then moved to ``device``),
    so a seed gives the same numbers on any device. One batched draw per ``n``.
    """
    cols = []
    for n in ns:
        keys = _random_keys(trials, n, d=d_k, kind="sphere", generator=generator, dtype=dtype)
        values = torch.randn(trials, n, d_v, generator=generator, dtype=dtype)
        cols.append(_crosstalk(keys.to(device), values.to(device)).pow(2).mean((-2, -1)))
    return torch.stack(cols, dim=-1)


__all__ = ["crosstalk", "measure_crosstalk_variance", "outer_product_memory", "recall_cosine"]
