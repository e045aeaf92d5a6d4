"""Time of the full capacity sweep, with the bare Gram matrices it cannot avoid as the yardstick.

    python benchmarks/capacity.py [--repeats 3] [--trials 200] [--device cpu|cuda] [--dtype float32]

The sweep: d_k in {16, 32, 64, 128, 256}, 24 values of n up to 4·d_k (``n_grid``), 200 trials each,
every item read back (cosine, squared error, top-1 decoding, crosstalk). Goal: ≤ 2 s on the course's
2-core CPU (float32). Reading back every one of n = 4·d_k items needs the n×n Gram matrix of the keys,
so "Gram only" (drawing the keys and computing K Kᵀ for every trial, nothing else) is the floor; the
ratio "sweep / Gram only" says how much the metrics cost on top. Medians of ``--repeats`` runs, all in
one process, so the ratios hold even on a busy machine where the seconds do not.

Then the three retrieval criteria of notebook 04 (``capacity_scaling``: (a) every item's cosine ≥ 0.8,
(b) argmax over 32 fixed codewords, (c) adversarial values), with the notebook's n_max, ``--trials``
trials per d_k (default 200 here; the notebook uses 100): time, mean capacities, log–log slope ± 2 bootstrap
standard errors, and which law (d_k, d_k/log d_k, √d_k) leaves the flattest ratio.
"""

from __future__ import annotations

import argparse

import torch
from timing import median_time

from pavlovlab.capacity import average, criteria
from pavlovlab.sampling import random_keys

D_KS = (16, 32, 64, 128, 256)


def gram_only(d_k: int, trials: int, device: torch.device, dtype: torch.dtype) -> None:
    N = int(average.n_grid(d_k)[-1])
    chunk = average._chunk(N, dtype)
    g = torch.Generator().manual_seed(0)
    out = torch.empty(min(chunk, trials), N, N, device=device, dtype=dtype)
    for s in range(0, trials, chunk):
        K = random_keys(min(chunk, trials - s), N, d=d_k, generator=g, device=device, dtype=dtype)
        torch.matmul(K, K.mT, out=out[:K.shape[0]])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    args = parser.parse_args()
    device, dtype = torch.device(args.device), getattr(torch, args.dtype)
    print(f"capacity sweep: {args.trials} trials, 24 n per d_k up to 4·d_k, {args.dtype} on {device}, "
          f"{torch.get_num_threads()} threads, median of {args.repeats}")
    print(f"{'d_k':>5s} {'max n':>6s} {'sweep (s)':>10s} {'Gram only (s)':>14s} {'sweep / Gram':>13s}")
    total_sweep = total_gram = 0.0
    for d in D_KS:
        ns = average.n_grid(d)
        sweep = median_time(lambda d=d: average.capacity_sweep([d], trials=args.trials, device=device,
                                                               dtype=dtype,
                                                               generator=torch.Generator().manual_seed(0)),
                            args.repeats, device)
        gram = median_time(lambda d=d: gram_only(d, args.trials, device, dtype), args.repeats, device)
        total_sweep, total_gram = total_sweep + sweep, total_gram + gram
        print(f"{d:5d} {int(ns[-1]):6d} {sweep:10.3f} {gram:14.3f} {sweep / gram:13.2f}")
    print(f"{'all':>5s} {'':6s} {total_sweep:10.3f} {total_gram:14.3f} {total_sweep / total_gram:13.2f}")
    full = median_time(lambda: average.capacity_sweep(list(D_KS), trials=args.trials, device=device, dtype=dtype,
                                                      generator=torch.Generator().manual_seed(0)),
                       args.repeats, device)
    print(f"full sweep in one call (capacity_sweep over all d_k): {full:.3f} s   goal ≤ 2 s on the 2-core CPU: "
          f"{'met' if full <= 2.0 else 'not met here'}")
    n_max = {"cosine": lambda d: d // 2 + 32, "argmax": lambda d: 3 * d // 2 + 48, "adversarial": lambda d: d // 4 + 16}
    print(f"\nretrieval criteria, {args.trials} trials per d_k, d_k = {list(D_KS)} (median time of {args.repeats})")
    for c in criteria.CRITERIA:
        res = {}

        def run(res: dict = res, c: str = c) -> None:
            res["s"] = criteria.capacity_scaling(list(D_KS), c, trials=args.trials, n_max=n_max[c], device=device,
                                                 dtype=dtype, generator=torch.Generator().manual_seed(10))
        t = median_time(run, args.repeats, device)
        s = res["s"]
        r = criteria.scaling_residuals(s.d_ks, s.mean)
        best = min(r, key=lambda k: abs(r[k]))
        print(f"{c:>12}: {t:6.2f} s  capacities {[round(float(m), 1) for m in s.mean]}  slope {s.slope:.3f} ± "
              f"{2 * s.slope_se:.3f}  flattest: capacity / ({best})  censored {float(s.censored.max()):.2f}")


if __name__ == "__main__":
    main()
