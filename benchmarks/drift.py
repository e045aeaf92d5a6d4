"""The main drift comparison of notebook 06: 4 rules × 5 seeds × 5,000 steps (budget: ≤ 3 s on one CPU).

    python benchmarks/drift.py

Prints the time of ``drift.track`` (all rules and seeds as one batched recurrence) next to a plain loop
over rules and seeds with ``AssociativeMemory`` (measured on 1,000 steps and scaled ×5), as ratios from one
run, with torch's default number of threads and with one thread (tiny tensors: one thread is often faster).
"""

from __future__ import annotations

import torch
from timing import median_time

from pavlovlab import AssociativeMemory
from pavlovlab.forgetting import drift

RULES, SEEDS, STEPS = ("hebbian", "delta", "oja_subspace", "oja_clamped"), 5, 5000


CPU = torch.device("cpu")


def batched(stream: drift.DriftStream) -> None:
    drift.track(stream, RULES, lr=0.5)


def looped(stream: drift.DriftStream, steps: int) -> None:
    """One memory per (rule, seed), one write and one read of every key per step: the unvectorised way."""
    for rule in RULES:
        for s in range(SEEDS):
            mem = AssociativeMemory(stream.keys.shape[-1], stream.values.shape[-1], rule=rule, lr=0.5)
            for t in range(steps):
                mem.write(stream.keys[s, t], stream.values[s, t])
                mem.read(stream.probes[s])


def main() -> None:
    default_threads = torch.get_num_threads()
    stream = drift.redraw_stream(8, 16, 16, STEPS, 500, batch_shape=(SEEDS,),
                                 generator=torch.Generator().manual_seed(0))
    make = median_time(lambda: drift.redraw_stream(8, 16, 16, STEPS, 500, batch_shape=(SEEDS,),
                                                   generator=torch.Generator().manual_seed(0)), 3, CPU)
    print(f"{len(RULES)} rules × {SEEDS} seeds × {STEPS:,} steps (d_k = d_v = 16, 8 keys); "
          f"stream built in {make:.2f} s")
    print(f"{'threads':>8s} {'track (s)':>10s} {'loop (s, ×5 of 1k)':>19s} {'loop / track':>13s} {'budget 3 s':>11s}")
    for threads in sorted({default_threads, 1}, reverse=True):
        torch.set_num_threads(threads)
        t_track = median_time(lambda: batched(stream), 3, CPU)
        t_loop = 5 * median_time(lambda: looped(stream, STEPS // 5), 1, CPU)
        ok = "ok" if t_track + make <= 3.0 else "OVER"
        print(f"{threads:8d} {t_track:10.2f} {t_loop:19.2f} {t_loop / t_track:13.1f} {ok:>11s}")
    torch.set_num_threads(default_threads)


if __name__ == "__main__":
    main()
