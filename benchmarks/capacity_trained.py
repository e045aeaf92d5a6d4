"""The fuller trained capacity run behind notebook 04, section 7 (minutes; ``--jobs`` runs in parallel).

    python benchmarks/capacity_trained.py [--d-head 4 8] [--pairs 1 2 4 8 16] [--steps 1500]
                                          [--seeds 0 1 2] [--n-keys 16] [--n-values 16] [--jobs 4]

One-layer, one-head TinyTransformers (d_model = 32) with linear (Hebbian) or softmax attention are trained
on associative recall: S key–value pairs in context, then one query (``--n-keys`` key tokens, ``--n-values``
value tokens, chance 1/n_values), for every key dimension d_head, every S and every seed. Notebook 04's
reduced run is ``--d-head 4 --pairs 2 8 --n-keys 8 --n-values 8`` at 300 steps with early stopping. No early
stopping: every run gets the same ``--steps``, so the table shows where each model ends, not how fast it learns.

Memory load. A context of S pairs is 2S + 1 tokens, and *every* token writes one pair (k_t, v_t) into the
linear-attention state (a d_head × d_head matrix): the key tokens too, not only the value tokens. The model's
"token shift" (each layer sees [x_t, x_{t−1}], the token and its predecessor) lets a value token's write be
keyed by the key token just before it; the key tokens' writes are crosstalk. So the load on the bucket is
(2S + 1)/d_head ≈ 2S/d_head writes per key dimension, not S/d_head.

Columns: mean ± standard deviation over seeds of the held-out accuracy at the end (``final``), of the mean
accuracy over the last quarter of training (``plateau``: if it equals ``final``, more steps would not have
changed the verdict), and the first step at which accuracy reached 0.9 (``-`` if never, in any seed: the
median over the seeds that did is shown otherwise, with how many did).
Training runs on one CPU thread per job (tiny models are faster that way).
"""

from __future__ import annotations

import argparse
import statistics
from concurrent.futures import ProcessPoolExecutor

import torch

from pavlovlab.models import tasks, training, transformer


def run(config: tuple[int, int, str, int, int, int, int]) -> tuple[tuple[int, int, str], float, float, int | None]:
    dh, S, att, seed, steps, n_keys, n_values = config
    torch.set_num_threads(1)
    net = transformer.TinyTransformer(tasks.vocab_size(n_keys, n_values), d_model=32, n_layers=1, n_heads=1, d_head=dh,
                                 attention=att, seed=seed)
    hist = training.train_recall(net, task_kwargs=dict(n_pairs=S, n_keys=n_keys, n_values=n_values), steps=steps,
                               batch_size=64, lr=1e-2, target_accuracy=None, eval_size=512, progress=False,
                               seed=seed, device="cpu")
    acc, step = hist["accuracy"], hist["step"]
    tail = acc[-max(1, len(acc) // 4):]
    reached = next((s for s, a in zip(step, acc, strict=True) if a >= 0.9), None)
    return (dh, S, att), hist["final_accuracy"], sum(tail) / len(tail), reached


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--d-head", type=int, nargs="+", default=[4, 8])
    parser.add_argument("--pairs", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--n-keys", type=int, default=16)
    parser.add_argument("--n-values", type=int, default=16)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    configs = [(dh, S, att, seed, args.steps, args.n_keys, args.n_values) for dh in args.d_head for S in args.pairs
               for att in ("linear", "softmax") for seed in args.seeds]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(run, configs))
    table: dict[tuple[int, int, str], list[tuple[float, float, int | None]]] = {}
    for key, final, plateau, reached in results:
        table.setdefault(key, []).append((final, plateau, reached))

    def ms(xs: list[float]) -> str:
        sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
        return f"{statistics.mean(xs):.2f}±{sd:.2f}"

    def first(rs: list[int | None]) -> str:
        ok = [r for r in rs if r is not None]
        return f"{statistics.median(ok):.0f} ({len(ok)}/{len(rs)})" if ok else "-"

    print(f"held-out recall accuracy, mean ± sd over seeds {args.seeds}, {args.steps} steps each, "
          f"chance 1/{args.n_values}")
    print(f"{'d_head':>6} {'S':>3} {'load (2S+1)/d':>13} | {'linear final':>12} {'plateau':>10} {'step≥0.9':>10} | "
          f"{'softmax final':>13} {'plateau':>10} {'step≥0.9':>10}")
    for dh in args.d_head:
        for S in args.pairs:
            row = [f"{dh:6d} {S:3d} {(2 * S + 1) / dh:13.2f}"]
            for att in ("linear", "softmax"):
                rs = table[dh, S, att]
                row.append(f"{ms([r[0] for r in rs]):>12} {ms([r[1] for r in rs]):>10} "
                           f"{first([r[2] for r in rs]):>10}")
            print(" | ".join(row))


if __name__ == "__main__":
    main()
