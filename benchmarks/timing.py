"""Shared timer of the benchmark scripts (run as ``python benchmarks/<name>.py``, so ``from timing import ...``)."""

from __future__ import annotations

import resource
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


def interleaved_medians(fns: dict[str, Callable[[], object]], repeats: int, device: torch.device,
                        counts: dict[str, int] | None = None, faults: dict[str, float] | None = None,
                        clock: Callable[[], float] = time.perf_counter) -> dict[str, float]:
    """Median wall time in seconds of each of ``fns``, timed round-robin (A, B, C, A, B, C, ...).

    On a shared, loaded machine the load drifts within seconds; timing the candidates in alternation puts
    every one of them under the same drift, so that their ratios hold even when the absolute times do not.
    Each round starts one candidate further on, so that none always runs right after the same other one (after
    a large product, say, which leaves the caches full of its own data and the allocator with freed pages).
    Each function is called once as warm-up, then ``counts[name]`` times (default ``repeats``): the slow ones
    take part only in the first rounds. When ``faults`` is given, it receives each function's median number of
    minor page faults per call (memory the allocator had handed back to the system and takes again: on Linux,
    glibc returns freed blocks above its thresholds, and touching them again costs a fault per 4 KiB page).

    ``clock``: wall time by default; ``time.process_time`` (the CPU time of this process) measures one-thread
    code on a machine shared with other jobs without the time it spends descheduled."""
    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize()

    counts = counts or {}
    for fn in fns.values():
        fn()
    sync()
    times: dict[str, list[float]] = {name: [] for name in fns}
    faulted: dict[str, list[int]] = {name: [] for name in fns}
    order = list(fns.items())
    for r in range(max([repeats, *counts.values()])):
        for name, fn in order[r % len(order):] + order[:r % len(order)]:  # rotated: no one always follows the same
            if r >= counts.get(name, repeats):
                continue
            before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            start = clock()
            fn()
            sync()
            times[name].append(clock() - start)
            faulted[name].append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    if faults is not None:
        faults |= {name: statistics.median(f) for name, f in faulted.items()}
    return {name: statistics.median(t) for name, t in times.items()}
