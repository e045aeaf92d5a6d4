"""The larger trained capacity check behind notebook 04, section 7 (several minutes on a 2-core CPU).

    python benchmarks/capacity_trained.py [--d-head 4 8] [--pairs 2 4 8 16 32] [--steps 500] [--seeds 0 1]

One-layer, one-head TinyTransformers (d_model = 32) with linear (Hebbian) or softmax attention are trained
on associative recall with S key–value pairs in context and one query (32 key tokens, 16 value tokens), for
every key dimension d_head and every S. The table gives the held-out accuracy (mean over seeds; chance is
1/16): linear attention should recall well only while S stays below about d_head, softmax at every S.
Training runs on one CPU thread (tiny models are faster that way).
"""

from __future__ import annotations

import argparse

import torch
from tqdm.auto import tqdm

from pavlovlab import models, tasks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--d-head", type=int, nargs="+", default=[4, 8])
    parser.add_argument("--pairs", type=int, nargs="+", default=[2, 4, 8, 16, 32])
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--n-keys", type=int, default=32)
    args = parser.parse_args()
    torch.set_num_threads(1)
    runs = [(dh, S, att, seed) for dh in args.d_head for S in args.pairs for att in ("linear", "softmax")
            for seed in args.seeds]
    acc: dict[tuple[int, int, str], list[float]] = {}
    for dh, S, att, seed in tqdm(runs, desc="training"):
        net = models.TinyTransformer(tasks.vocab_size(args.n_keys, 16), d_model=32, n_layers=1, n_heads=1,
                                     d_head=dh, attention=att, seed=seed)
        hist = models.train_recall(net, task_kwargs=dict(n_pairs=S, n_keys=args.n_keys, n_values=16),
                                   steps=args.steps, batch_size=64, lr=1e-2, target_accuracy=0.99, eval_size=512,
                                   progress=False, seed=seed, device="cpu")
        acc.setdefault((dh, S, att), []).append(hist["final_accuracy"])
    print(f"held-out recall accuracy (mean of seeds {args.seeds}, {args.steps} steps at most; chance 0.06)")
    print(f"{'d_head':>6} {'S':>4} {'S/d_head':>8} {'linear':>8} {'softmax':>8}")
    for dh in args.d_head:
        for S in args.pairs:
            lin, soft = (sum(acc[dh, S, a]) / len(acc[dh, S, a]) for a in ("linear", "softmax"))
            print(f"{dh:6d} {S:4d} {S / dh:8.2f} {lin:8.2f} {soft:8.2f}")


if __name__ == "__main__":
    main()
