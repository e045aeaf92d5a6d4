"""Shared timer of the benchmark scripts (run as ``python benchmarks/<name>.py``, so ``from timing import ...``)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import torch


def median_time(fn: Callable[[], object], repeats: int, device: torch.device) -> float:
    """Median wall time in seconds of ``repeats`` calls of ``fn`` after one warm-up call (CUDA synchronised)."""
    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize()

    fn()
    sync()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
