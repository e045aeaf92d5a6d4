"""One Hebbian memory and its crosstalk: many CS→US pairs stored as ``S = Σ_i v_i k_iᵀ``.

Reading the memory with a stored key gives the stored value plus *crosstalk* from every other pair:

    S k_j = v_j (k_j·k_j) + Σ_{i≠j} v_i (k_i·k_j)
            └─ signal ─┘   └──── crosstalk c_j ────┘

Orthonormal keys make the crosstalk vanish (perfect recall, at most ``d_k`` pairs); random unit keys
leave crosstalk whose components have variance ``(n − 1)/d_k`` when the values have unit-variance
components. Notebook 02 teaches this; notebook 04 (capacity) follows its consequences.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ._checks import broadcast_lead, check_choice, check_dim, check_int, check_same_kind, check_tensor

KEY_KINDS = ("unit", "orthonormal")


def _pairs(keys: torch.Tensor, values: torch.Tensor) -> None:
    """Check a set of stored pairs: keys (..., n, d_k), values (..., n, d_v), same dtype/device, same n."""
    check_tensor("keys", keys, min_rank=2)
    check_tensor("values", values, min_rank=2)
    check_same_kind(keys=keys, values=values)
    check_dim("values", values.shape[-2], keys.shape[-2], "number of pairs n (dim -2 of keys)")
    broadcast_lead(keys=keys.shape[:-2], values=values.shape[:-2])


def outer_product_memory(keys: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """The Hebbian memory of n pairs, ``S = Σ_i v_i k_iᵀ = Vᵀ K`` (one "post-it note" per pair).

    keys: (..., n, d_k), values: (..., n, d_v) → S: (..., d_v, d_k), read as ``S @ q``.
    Equals ``AssociativeMemory(d_k, d_v, rule="hebbian")`` after writing the n pairs.

    >>> S = outer_product_memory(torch.eye(3), torch.ones(3, 2))   # (2, 3)
    """
    _pairs(keys, values)
    return values.mT @ keys


def crosstalk(keys: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """The crosstalk of every stored pair when it is read back with its own key.

    ``c_j = S k_j − v_j (k_j·k_j) = Σ_{i≠j} v_i (k_i·k_j)``: what the other pairs add to the recall of v_j.

    keys: (..., n, d_k), values: (..., n, d_v) → (..., n, d_v), row j is ``c_j``.
    Zero for orthonormal keys; for random unit keys and values with unit-variance components, each
    component has mean 0 and variance ``(n − 1)/d_k``.
    """
    _pairs(keys, values)
    overlaps = keys @ keys.mT                              # (..., n, n): G_ij = k_i·k_j
    self_overlap = torch.diagonal(overlaps, dim1=-2, dim2=-1)[..., None]   # (..., n, 1): k_j·k_j
    return overlaps @ values - self_overlap * values       # row j: Σ_i (k_j·k_i) v_i minus the i = j term


def recall_cosine(keys: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """How well each stored value comes back: ``cos(S k_j, v_j)`` with ``S = Σ_i v_i k_iᵀ``.

    keys: (..., n, d_k), values: (..., n, d_v) → (..., n) in [−1, 1] (1 = perfect recall up to scale).
    For random unit keys and Gaussian values it is about ``1 / sqrt(1 + (n − 1)/d_k)``.
    """
    recalled = keys @ outer_product_memory(keys, values).mT    # (..., n, d_v): row j is S k_j
    return torch.nn.functional.cosine_similarity(recalled, values.expand_as(recalled), dim=-1)


def make_keys(n: int, d_k: int, *, kind: str = "unit", batch_shape: Sequence[int] = (),
              generator: torch.Generator | None = None, device: torch.device | str | None = None,
              dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """n keys (conditioned stimuli) of dimension d_k: (*batch_shape, n, d_k).

    - ``"unit"``: independent, uniform on the unit sphere (a normalised Gaussian), so ``k_i·k_j`` has
      mean 0 and variance ``1/d_k`` for i ≠ j;
    - ``"orthonormal"``: ``k_i·k_j = δ_ij`` (a random rotation's rows; needs ``n ≤ d_k``).

    Drawn on the CPU with ``generator`` and then moved, so every device sees the same numbers.
    """
    check_int("n", n, low=1)
    check_int("d_k", d_k, low=1)
    check_choice("kind", kind, KEY_KINDS)
    if not dtype.is_floating_point:
        raise TypeError(f"dtype: expected a floating-point dtype, got {dtype}")
    if kind == "orthonormal" and n > d_k:
        raise ValueError(f"n: expected at most d_k = {d_k} orthonormal keys (only d_k fit in d_k dimensions), "
                         f"got {n}")
    shape = tuple(batch_shape)
    if kind == "unit":
        z = torch.randn(*shape, n, d_k, generator=generator, dtype=torch.float64)
        keys = z / z.norm(dim=-1, keepdim=True)
    else:
        z = torch.randn(*shape, d_k, n, generator=generator, dtype=torch.float64)
        keys = torch.linalg.qr(z).Q.mT                   # (..., n, d_k) with orthonormal rows
    return keys.to(device=device, dtype=dtype)


__all__ = ["crosstalk", "make_keys", "outer_product_memory", "recall_cosine"]
