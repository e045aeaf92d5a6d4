"""Input checks shared by the package: each raises a ValueError/TypeError naming the argument,
what was expected and what was given."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import torch


def check_tensor(name: str, x: object, *, min_rank: int = 1, rank: int | None = None) -> torch.Tensor:
    """Require a floating-point tensor of at least ``min_rank`` (or exactly ``rank``) dimensions."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(x).__name__}")
    if not x.is_floating_point():
        raise TypeError(f"{name}: expected a floating-point tensor (float32 or float64), got dtype {x.dtype}")
    if rank is not None and x.dim() != rank:
        raise ValueError(f"{name}: expected a tensor of rank {rank}, got shape {tuple(x.shape)}")
    if x.dim() < min_rank:
        raise ValueError(
            f"{name}: expected a tensor of rank >= {min_rank} (..., {'T, ' if min_rank > 1 else ''}d), "
            f"got shape {tuple(x.shape)}"
        )
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
    if got != expected:
        raise ValueError(f"{name}: expected {what} = {expected}, got {got}")


def broadcast_lead(**shapes: Sequence[int]) -> torch.Size:
    """Broadcast the leading (batch, head) shapes of several tensors, or say which ones clash."""
    try:
        return torch.broadcast_shapes(*shapes.values())
    except RuntimeError:
        described = ", ".join(f"{n}: {tuple(s)}" for n, s in shapes.items())
        raise ValueError(f"leading (batch/head) dims must broadcast; got {described}") from None


def check_real(name: str, value: object, *, low: float | None = None, high: float | None = None,
               low_open: bool = False) -> float:
    """Require a finite real number within [low, high] (or (low, high] when ``low_open``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
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
    if not bool(torch.isfinite(x).all()):
        raise ValueError(f"{name}: expected finite values, got a tensor with inf or nan")
    if low is not None and bool((x < low).any()):
        raise ValueError(f"{name}: expected values >= {low}, got a minimum of {x.min().item():.4g}")
    if high is not None and bool((x > high).any()):
        raise ValueError(f"{name}: expected values <= {high}, got a maximum of {x.max().item():.4g}")


def check_int(name: str, value: object, *, low: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name}: expected an integer, got {type(value).__name__}")
    if low is not None and value < low:
        raise ValueError(f"{name}: expected an integer >= {low}, got {value}")
    return value


def check_choice(name: str, value: object, choices: Iterable[str]) -> str:
    choices = list(choices)
    if value not in choices:
        raise ValueError(f"{name}: expected one of {choices}, got {value!r}")
    return value  # type: ignore[return-value]
