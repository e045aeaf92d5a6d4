"""Depth versus width, trained: wide-shallow against narrow-deep models at an equal parameter budget.

The fuller version of notebook 05's reduced comparison: several seeds, longer training, both linear
and softmax attention, reported as mean ± spread (standard deviation over seeds, and min–max).

    python benchmarks/depth_width.py                      # 5 seeds, 600 steps, linear and softmax
    python benchmarks/depth_width.py --seeds 3 --steps 300 --attention linear --device cuda
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from pavlovlab import models, tasks


def summary(values: list[float]) -> str:
    mean = statistics.fmean(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{mean:6.3f} ± {sd:5.3f} [{min(values):.3f}, {max(values):.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--budget", type=int, default=4, help="heads in total (L·H)")
    parser.add_argument("--n-pairs", type=int, default=8)
    parser.add_argument("--n-queries", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=16, help="keys and values each")
    parser.add_argument("--d-model", type=int, default=32)
    parser.add_argument("--d-head", type=int, default=8)
    parser.add_argument("--attention", nargs="+", default=["linear", "softmax"], choices=models.ATTENTIONS)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()

    task = dict(n_pairs=args.n_pairs, n_queries=args.n_queries, n_keys=args.vocab, n_values=args.vocab)
    configs = models.depth_width_configs(args.budget, d_model=args.d_model, d_head=args.d_head)
    print(f"associative recall: {args.n_pairs} pairs, {args.n_queries} queries, {args.vocab}+{args.vocab} tokens; "
          f"{args.seeds} seeds × {args.steps} steps; budget {args.budget} heads of d_head={args.d_head}; "
          f"torch {torch.__version__} on {args.device}")
    print(f"{'attention':9s} {'shape':13s} {'params':>7s}  {'final accuracy: mean ± sd [min, max]':38s} "
          f"{'best accuracy':>13s} {'s/run':>6s}")
    for attention in args.attention:
        t0 = time.perf_counter()
        runs = models.train_configs(configs, vocab_size=tasks.vocab_size(args.vocab, args.vocab), attention=attention,
                                    seeds=range(args.seeds), task_kwargs=task, steps=args.steps, batch_size=64,
                                    lr=3e-3, eval_every=25, progress=True, device=args.device)
        per_run = (time.perf_counter() - t0) / (len(configs) * args.seeds)
        finals = {}
        for name, hist in runs.items():
            finals[name] = statistics.fmean(h["final_accuracy"] for h in hist)
            print(f"{attention:9s} {name:13s} {hist[0]['parameters']:7d}  "
                  f"{summary([h['final_accuracy'] for h in hist]):38s} "
                  f"{statistics.fmean(max(h['accuracy']) for h in hist):13.3f} {per_run:6.1f}")
        deep_err, wide_err = 1 - finals["narrow-deep"], 1 - finals["wide-shallow"]
        ratio = "both error-free" if max(deep_err, wide_err) == 0 else \
            ("wide-shallow error-free" if wide_err == 0 else f"{deep_err / wide_err:.2f}")
        print(f"{attention:9s} ratio of error rates, narrow-deep / wide-shallow: {ratio}")


if __name__ == "__main__":
    main()
