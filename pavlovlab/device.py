"""Reproducibility and device helpers: the only global state the package touches is the RNGs."""

from __future__ import annotations

import numbers
import random

import numpy as np
import torch


def seed_everything(seed: int = 0) -> torch.Generator:
    """Seed Python's, NumPy's and torch's RNGs (CPU and CUDA) and return a fresh CPU generator.

    >>> g = seed_everything(0)
    """
    seed = _check_seed(seed)
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)  # also seeds every CUDA device
    return torch.Generator().manual_seed(seed)


def _check_seed(seed: object) -> int:
    """A seed in [0, 2**64) (torch's generators take 64 bits), as an int."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed: expected a non-negative integer, got {type(seed).__name__}")
    if not 0 <= int(seed) < 2**64:
        raise ValueError(f"seed: expected an integer in [0, 2**64) (torch's generators take 64 bits), got {int(seed)}")
    return int(seed)


def default_device() -> torch.device:
    """``cuda`` when a GPU is available, else ``cpu``."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


__all__ = ["default_device", "seed_everything"]
