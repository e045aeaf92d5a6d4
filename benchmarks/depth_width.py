"""Depth versus width, trained: K-hop pointer chasing at an equal parameter budget, with a width control.

The fuller version of notebook 05's reduced comparison. Shapes with the same head dimensions in total
(``budget · d_head``) and, up to LayerNorms and biases, the same parameters
(:func:`pavlovlab.transformer.depth_width_configs`):

    wide-shallow    1 layer  × budget heads of d_head
    L×(budget/L)    L layers × budget/L heads of d_head, for every L in --deep-layers (default 2 and 4:
                    2×2, and the narrowest-deepest shape 4×1)
    one-big-head    1 layer  × 1 head of budget·d_head   (the width control)

trained on :func:`pavlovlab.models.tasks.pointer_chasing` with K = 1 (plain recall: every shape can solve it)
and K = 2 (needs two retrievals in a row: only shapes with at least two layers can chase). Reported per
shape: final held-out accuracy as mean ± sd [min, max] over seeds, and the steps to reach
``--threshold`` (per seed; "never" if not reached), so that speed and final accuracy are reported apart.
``--save FILE`` stores every run's history as JSON, rewritten after each shape (it refuses to replace an
existing file without ``--overwrite``); notebook 05 reads the stored runs, shipped with the package as
``pavlovlab/data/depth_width_{1,2}hop.json``, as cached fuller runs (:func:`pavlovlab.depth.contest.cached_shape_runs`).

    python benchmarks/depth_width.py                                  # 3 seeds, 1500 steps, K = 1 and 2
    python benchmarks/depth_width.py --seeds 5 --steps 1000 --hops 2 --shapes wide-shallow 2×2 4×1 \
        --save pavlovlab/data/depth_width_2hop.json                       # notebook 05's cached runs
    python benchmarks/depth_width.py --seeds 5 --steps 400 --hops 1 --save pavlovlab/data/depth_width_1hop.json
    python benchmarks/depth_width.py --hops 2 --attention linear softmax --device cuda
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import torch

from pavlovlab.models import tasks, training, transformer


def shapes(budget: int, deep_layers: list[int], *, d_model: int, d_head: int) -> dict[str, dict[str, int]]:
    """The wide-shallow shape, one deep shape per entry of ``deep_layers`` (named ``L×H``) and the width control."""
    base = transformer.depth_width_configs(budget, d_model=d_model, d_head=d_head, width_control=True)
    out = {"wide-shallow": base["wide-shallow"]}
    for L in deep_layers:
        deep = transformer.depth_width_configs(budget, d_model=d_model, d_head=d_head, deep_layers=L)["narrow-deep"]
        out[f"{L}×{budget // L}"] = deep
    out["one-big-head"] = base["one-big-head"]
    return out


def summary(values: list[float]) -> str:
    mean = statistics.fmean(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{mean:5.3f} ± {sd:5.3f} [{min(values):.3f}, {max(values):.3f}]"


def save(path: pathlib.Path, record: dict, overwrite: bool) -> None:
    """Write ``record`` as JSON atomically (a temporary file renamed over the target)."""
    if path.exists() and not overwrite:
        raise SystemExit(f"--save: {path} exists; pass --overwrite to replace it")
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    os.chmod(tmp, 0o644)
    with os.fdopen(fd, "w") as f:
        json.dump(record, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def accuracy_by_backward_steps(model: transformer.TinyTransformer, task: dict, seed: int,
                               device: str) -> dict[int, float]:
    """Held-out accuracy of a trained model split by query type (:func:`pavlovlab.models.tasks.backward_steps`), on
    the held-out batch its training used (drawn from seed 10 000 + seed)."""
    batch = tasks.pointer_chasing(512, **task, generator=torch.Generator().manual_seed(10_000 + seed), device=device)
    kinds = tasks.backward_steps(batch, n_pairs=task["n_pairs"], hops=task["hops"], separator=task["separator"])
    model.eval()
    with torch.no_grad():
        right = (model(batch.tokens).argmax(-1)[batch.answer_mask] == batch.targets[batch.answer_mask]).cpu()
    kinds = kinds.flatten()
    return {int(b): right[kinds == b].float().mean().item() for b in kinds.unique()}


def last_quarter_slope(steps: list[int], accuracy: list[float]) -> float:
    """Least-squares slope of held-out accuracy against step over the last quarter of the evaluations
    (accuracy per step): near 0 when the curve has flattened."""
    k = max(2, len(steps) // 4)
    x, y = torch.tensor(steps[-k:], dtype=torch.float64), torch.tensor(accuracy[-k:], dtype=torch.float64)
    x = x - x.mean()
    return float((x * (y - y.mean())).sum() / (x * x).sum())


def provenance_command() -> str:
    """The command line that made this record, as it can be re-run from the repository root."""
    return "python " + " ".join([pathlib.Path(sys.argv[0]).as_posix(), *sys.argv[1:]])


def git_commit() -> str:
    """The repository's commit (with ``+dirty`` when tracked files other than the cached runs in
    ``pavlovlab/data``, which a run writes, have changes), or "unknown"."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".",
                                ":!pavlovlab/data"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--hops", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--budget", type=int, default=4, help="heads of d_head in total")
    parser.add_argument("--deep-layers", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--shapes", nargs="+", help="train only these shapes (names as printed), e.g. 2×2 4×1")
    parser.add_argument("--separator", action="store_true",
                        help="close every pair with a separator token (no spurious item → item pair at the boundaries)")
    parser.add_argument("--eval-every", type=int, default=50)
    parser.add_argument("--n-pairs", type=int, default=6)
    parser.add_argument("--n-items", type=int, default=8)
    parser.add_argument("--d-model", type=int, default=32)
    parser.add_argument("--d-head", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=5e-3)
    parser.add_argument("--threshold", type=float, default=0.5)
    parser.add_argument("--attention", nargs="+", default=["linear"], choices=transformer.ATTENTIONS)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--save", type=pathlib.Path, help="store every run's history here (JSON)")
    parser.add_argument("--overwrite", action="store_true", help="let --save replace an existing file")
    args = parser.parse_args()
    if args.save is not None and args.save.exists() and not args.overwrite:
        raise SystemExit(f"--save: {args.save} exists; pass --overwrite to replace it")
    torch.set_num_threads(args.threads)

    configs = shapes(args.budget, args.deep_layers, d_model=args.d_model, d_head=args.d_head)
    if args.shapes:
        unknown = sorted(set(args.shapes) - set(configs))
        if unknown:
            raise SystemExit(f"--shapes: expected names among {', '.join(configs)}, got {', '.join(unknown)}")
        configs = {name: c for name, c in configs.items() if name in args.shapes}
    setup = dict(n_pairs=args.n_pairs, n_items=args.n_items, separator=args.separator, seeds=args.seeds,
                 steps=args.steps, batch_size=args.batch_size, lr=args.lr, eval_every=args.eval_every, eval_size=512,
                 budget=args.budget, d_model=args.d_model, d_head=args.d_head, torch=torch.__version__,
                 device=args.device, threads=args.threads, command=provenance_command(), commit=git_commit(),
                 made=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    print(f"pointer chasing: {args.n_pairs} pairs on a cycle of {args.n_items} items, every item queried; "
          f"{args.seeds} seeds × {args.steps} steps (batch {args.batch_size}, lr {args.lr}); budget {args.budget} "
          f"heads of d_head = {args.d_head}; threshold {args.threshold}; torch {torch.__version__} on {args.device}")
    print(f"{'attention':9s} {'K':>2s} {'shape':13s} {'L×H×d':>8s} {'params':>7s}  "
          f"{'final accuracy: mean ± sd [min, max]':37s} {'steps to threshold per seed':28s} {'s/run':>6s}")
    record: dict = {"setup": setup, "runs": []}
    for attention in args.attention:
        for hops in args.hops:
            task = dict(n_pairs=args.n_pairs, hops=hops, n_queries=args.n_pairs, n_items=args.n_items,
                        separator=args.separator)
            vocab = tasks.pointer_vocab_size(args.n_items, separator=args.separator)
            for name, c in configs.items():
                t0 = time.perf_counter()
                seeds = list(range(args.seeds))
                nets = [transformer.TinyTransformer(vocab, attention=attention, seed=seed, **c) for seed in seeds]
                hist = training.train_recall_batched(nets, seeds=seeds, task=tasks.pointer_chasing, task_kwargs=task,
                                                     steps=args.steps, batch_size=args.batch_size, lr=args.lr,
                                                     eval_every=args.eval_every, eval_size=512, progress=False,
                                                     device=args.device)
                per_run = (time.perf_counter() - t0) / args.seeds
                reach = [training.steps_to_threshold(h, args.threshold) for h in hist]
                by_type = [accuracy_by_backward_steps(net, task, seed, args.device)
                           for net, seed in zip(nets, seeds, strict=True)]
                slopes = [last_quarter_slope(h["step"], h["accuracy"]) for h in hist]
                print(f"{attention:9s} {hops:2d} {name:13s} {c['n_layers']}×{c['n_heads']}×{c['d_head']:<3d} "
                      f"{hist[0]['parameters']:7d}  {summary([h['final_accuracy'] for h in hist]):37s} "
                      f"{', '.join('never' if s is None else str(s) for s in reach):28s} {per_run:6.1f}", flush=True)
                print(f"{'':26s} last-quarter slope per 1000 steps {summary([1000 * x for x in slopes])}; by backward "
                      "steps: " + "; ".join(f"{b}: {summary([t[b] for t in by_type])}" for b in sorted(by_type[0])),
                      flush=True)
                record["runs"].append({"attention": attention, "hops": hops, "shape": name, **c,
                                       "parameters": hist[0]["parameters"],
                                       "step": hist[0]["step"], "accuracy": [h["accuracy"] for h in hist],
                                       "final_accuracy": [h["final_accuracy"] for h in hist],
                                       "last_quarter_slope": slopes,
                                       "accuracy_by_backward_steps": [{str(b): a for b, a in t.items()}
                                                                      for t in by_type],
                                       "seconds": [round(h["seconds"], 2) for h in hist]})
                if args.save is not None:  # after every shape, so that an interrupted run keeps what it measured
                    save(args.save, record, overwrite=True)


if __name__ == "__main__":
    main()
