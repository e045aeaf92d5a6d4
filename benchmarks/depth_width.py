"""Depth versus width, trained: K-hop pointer chasing at an equal parameter budget, with a width control.

The fuller version of notebook 05's reduced comparison. Three shapes with the same head dimensions in
total (``budget · d_head``) and, up to LayerNorms and biases, the same parameters
(:func:`pavlovlab.models.depth_width_configs` with ``width_control=True``):

    wide-shallow   1 layer  × budget heads of d_head
    narrow-deep    deep_layers layers × budget/deep_layers heads of d_head
    one-big-head   1 layer  × 1 head of budget·d_head   (the width control)

trained on :func:`pavlovlab.tasks.pointer_chasing` with K = 1 (plain recall: every shape can solve it)
and K = 2 (needs two retrievals in a row). Reported per shape: final held-out accuracy as mean ± sd
[min, max] over seeds, and the steps to reach ``--threshold`` (per seed; "never" if not reached),
so that speed and final accuracy are reported apart.

    python benchmarks/depth_width.py                                  # 3 seeds, 1500 steps, K = 1 and 2
    python benchmarks/depth_width.py --seeds 5 --steps 3000 --hops 2 --attention linear softmax --device cuda
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
    return f"{mean:5.3f} ± {sd:5.3f} [{min(values):.3f}, {max(values):.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--hops", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--budget", type=int, default=4, help="heads of d_head in total")
    parser.add_argument("--deep-layers", type=int, default=2)
    parser.add_argument("--n-pairs", type=int, default=6)
    parser.add_argument("--n-items", type=int, default=8)
    parser.add_argument("--d-model", type=int, default=32)
    parser.add_argument("--d-head", type=int, default=8)
    parser.add_argument("--lr", type=float, default=5e-3)
    parser.add_argument("--threshold", type=float, default=0.5)
    parser.add_argument("--attention", nargs="+", default=["linear"], choices=models.ATTENTIONS)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    configs = models.depth_width_configs(args.budget, d_model=args.d_model, d_head=args.d_head, width_control=True,
                                         deep_layers=args.deep_layers)
    print(f"pointer chasing: {args.n_pairs} pairs on a cycle of {args.n_items} items, every item queried; "
          f"{args.seeds} seeds × {args.steps} steps (batch 64, lr {args.lr}); budget {args.budget} heads of "
          f"d_head = {args.d_head}; threshold {args.threshold}; torch {torch.__version__} on {args.device}")
    print(f"{'attention':9s} {'K':>2s} {'shape':13s} {'L×H×d':>8s} {'params':>7s}  "
          f"{'final accuracy: mean ± sd [min, max]':37s} {'steps to threshold per seed':28s} {'s/run':>6s}")
    for attention in args.attention:
        for hops in args.hops:
            task = dict(n_pairs=args.n_pairs, hops=hops, n_queries=args.n_pairs, n_items=args.n_items)
            t0 = time.perf_counter()
            runs = models.train_configs(configs, vocab_size=tasks.pointer_vocab_size(args.n_items), attention=attention,
                                        seeds=range(args.seeds), task=tasks.pointer_chasing, task_kwargs=task,
                                        steps=args.steps, batch_size=64, lr=args.lr, eval_every=50, eval_size=512,
                                        progress=False, device=args.device)
            per_run = (time.perf_counter() - t0) / (len(configs) * args.seeds)
            for name, hist in runs.items():
                c = configs[name]
                reach = [models.steps_to_threshold(h, args.threshold) for h in hist]
                print(f"{attention:9s} {hops:2d} {name:13s} {c['n_layers']}×{c['n_heads']}×{c['d_head']:<3d} "
                      f"{hist[0]['parameters']:7d}  {summary([h['final_accuracy'] for h in hist]):37s} "
                      f"{', '.join('never' if s is None else str(s) for s in reach):28s} {per_run:6.1f}", flush=True)


if __name__ == "__main__":
    main()
