"""Training speed of the notebooks' tiny Transformers: steps per second at one thread, and what a step costs.

Every configuration that notebooks 04, 05 and 08 train (model shape, task and training keywords as the
notebooks pass them) is trained for ``--steps`` steps with :func:`pavlovlab.models.train_recall` on one
thread, without early stopping, and timed in CPU time (``time.process_time``: on a loaded machine the wall
clock also counts the other processes' turns). The held-out evaluations the notebooks run are included.

``--against REF`` also times the package as it is at the git revision REF (exported with ``git archive``
into a temporary folder) in child processes, alternating with this tree's, so that both see the same
load: the table then gives REF's steps per second, this tree's and their ratio (medians of ``--repeats``).

``--profile NAME`` prints the shares of one step's phases (drawing the batch, forward, backward, clipping
and the optimizer step) and the operations that dominate it (``torch.profiler``, self CPU time), for the
``pavlovlab`` this process imports (set ``PYTHONPATH`` to choose a checkout).

    python benchmarks/models.py                                  # this tree, every configuration
    python benchmarks/models.py --against main --repeats 3       # before/after ratios in one run
    python benchmarks/models.py --profile "08 delta" --only "08 delta"
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]

RECALL_08 = dict(n_pairs=8, n_keys=16, n_values=16)
CHASE_05 = dict(n_pairs=6, hops=2, n_queries=6, n_items=8)
TRAIN_04 = dict(batch_size=64, lr=1e-2, eval_size=256)
TRAIN_05 = dict(task="pointer_chasing", batch_size=64, lr=5e-3, eval_every=50, eval_size=256)
SHAPE_05 = dict(d_model=32, d_head=8)  # the shapes of depth_width_configs(4, width_control=True, deep_layers=2)
CONFIGS: dict[str, dict[str, Any]] = {
    "04 linear S=2": dict(vocab=16, model=dict(d_model=32, n_layers=1, n_heads=1, d_head=4, attention="linear"),
                          train=dict(task_kwargs=dict(n_pairs=2, n_keys=8, n_values=8), **TRAIN_04)),
    "04 linear S=8": dict(vocab=16, model=dict(d_model=32, n_layers=1, n_heads=1, d_head=4, attention="linear"),
                          train=dict(task_kwargs=dict(n_pairs=8, n_keys=8, n_values=8), **TRAIN_04)),
    "04 softmax S=8": dict(vocab=16, model=dict(d_model=32, n_layers=1, n_heads=1, d_head=4, attention="softmax"),
                           train=dict(task_kwargs=dict(n_pairs=8, n_keys=8, n_values=8), **TRAIN_04)),
    "05 wide-shallow": dict(vocab=9, model=dict(n_layers=1, n_heads=4, mlp_ratio=8, attention="linear", **SHAPE_05),
                            train=dict(task_kwargs=CHASE_05, **TRAIN_05)),
    "05 narrow-deep": dict(vocab=9, model=dict(n_layers=2, n_heads=2, mlp_ratio=4, attention="linear", **SHAPE_05),
                           train=dict(task_kwargs=CHASE_05, **TRAIN_05)),
    "05 one-big-head": dict(vocab=9, model=dict(n_layers=1, n_heads=1, mlp_ratio=8, d_model=32, d_head=32,
                                                attention="linear"),
                            train=dict(task_kwargs=CHASE_05, **TRAIN_05)),
    **{f"08 {a}": dict(vocab=32, model=dict(d_model=32, n_layers=1, n_heads=2, d_head=16, attention=a),
                       train=dict(task_kwargs=RECALL_08)) for a in ("linear", "delta", "softmax")},
}


def _train_kwargs(config: dict[str, Any]) -> dict[str, Any]:
    from pavlovlab import tasks

    kw = dict(config["train"])
    if "task" in kw:
        kw["task"] = getattr(tasks, kw["task"])
    return kw


def steps_per_second(name: str, steps: int) -> float:
    """Train a fresh model of configuration ``name`` for ``steps`` steps at one thread: steps per CPU second."""
    from pavlovlab import models

    config = CONFIGS[name]
    model = models.TinyTransformer(config["vocab"], seed=0, **config["model"])
    kw = _train_kwargs(config)
    models.train_recall(model, steps=5, progress=False, **kw)                    # warm-up: first calls allocate
    start = time.process_time()
    models.train_recall(model, steps=steps, progress=False, target_accuracy=None, **kw)
    return steps / (time.process_time() - start)


def profile(name: str, steps: int = 30) -> None:
    """Print the phase shares of a training step of ``name`` and the operations that dominate it."""
    from torch.profiler import ProfilerActivity, record_function
    from torch.profiler import profile as torch_profile

    from pavlovlab import models, tasks

    config = CONFIGS[name]
    model = models.TinyTransformer(config["vocab"], seed=0, **config["model"])
    kw = _train_kwargs(config)
    task, task_kwargs = kw.get("task", tasks.associative_recall), kw["task_kwargs"]
    opt = torch.optim.AdamW(model.parameters(), lr=kw.get("lr", 3e-3), foreach=True)
    gen = torch.Generator().manual_seed(0)
    phases = ("draw batch", "forward + loss", "backward", "clip gradients", "optimizer step")
    seconds = dict.fromkeys(phases, 0.0)

    def step(timed: bool) -> None:
        marks = [time.process_time()]
        with record_function(phases[0]):
            batch = task(64, **task_kwargs, generator=gen)
        marks.append(time.process_time())
        with record_function(phases[1]):
            logits = model(batch.tokens)
            loss = F.cross_entropy(logits.flatten(0, 1), batch.targets.flatten(), ignore_index=tasks.IGNORE)
        marks.append(time.process_time())
        with record_function(phases[2]):
            opt.zero_grad(set_to_none=True)
            loss.backward()
        marks.append(time.process_time())
        with record_function(phases[3]):
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=True)
        marks.append(time.process_time())
        with record_function(phases[4]):
            opt.step()
        marks.append(time.process_time())
        if timed:
            for phase, a, b in zip(phases, marks, marks[1:], strict=False):
                seconds[phase] += b - a

    for _ in range(5):
        step(False)
    for _ in range(steps):
        step(True)
    total = sum(seconds.values())
    print(f"\n{name}: {1e3 * total / steps:.2f} ms of CPU per step (harness as train_recall's loop) — "
          + ", ".join(f"{p} {100 * s / total:.0f} %" for p, s in seconds.items()))
    with torch_profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(steps):
            step(False)
    ops = [e for e in prof.key_averages() if e.key.startswith("aten::")]
    print(f"aten operations per step: {sum(e.count for e in ops) / steps:.0f} (nested calls included); "
          "top self CPU time:")
    total_self = sum(e.self_cpu_time_total for e in ops)
    for e in sorted(ops, key=lambda e: -e.self_cpu_time_total)[:12]:
        print(f"  {e.key:<36} {100 * e.self_cpu_time_total / total_self:5.1f} %  {e.count / steps:6.1f} calls/step")


def _child(names: list[str], steps: int) -> None:
    torch.set_num_threads(1)
    print(json.dumps({name: steps_per_second(name, steps) for name in names}))


def _run_child(tree: Path, names: list[str], steps: int) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(tree), OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1")
    out = subprocess.run([sys.executable, __file__, "--child", "--steps", str(steps), "--only", *names],
                         env=env, capture_output=True, text=True, check=True, cwd=tree)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100, help="timed training steps per configuration")
    parser.add_argument("--repeats", type=int, default=1, help="timings per configuration (the median is shown)")
    parser.add_argument("--only", nargs="+", default=list(CONFIGS), choices=list(CONFIGS), metavar="NAME")
    parser.add_argument("--against", metavar="REF", help="also time the package at this git revision")
    parser.add_argument("--profile", nargs="*", metavar="NAME", default=["08 delta"],
                        help="configurations to profile (none: no profile)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.only, args.steps)
        return
    trees = {"this tree": ROOT}
    with tempfile.TemporaryDirectory() as tmp:
        if args.against:
            archive = subprocess.run(["git", "archive", args.against, "pavlovlab"], cwd=ROOT, capture_output=True,
                                     check=True).stdout
            subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
            trees = {args.against: Path(tmp), "this tree": ROOT}
        times: dict[str, dict[str, list[float]]] = {t: {n: [] for n in args.only} for t in trees}
        for _ in range(args.repeats):                                    # interleaved: both trees see the load
            for label, tree in trees.items():
                for name, value in _run_child(tree, args.only, args.steps).items():
                    times[label][name].append(value)
    print(f"Training steps per CPU second at one thread ({args.steps} steps, median of {args.repeats}; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
    header = "".join(f"{label:>14}" for label in trees) + ("         ratio" if args.against else "")
    print(f"{'configuration':<18}{header}")
    for name in args.only:
        med = [statistics.median(times[label][name]) for label in trees]
        ratio = f"{med[-1] / med[0]:13.2f}×" if args.against else ""
        print(f"{name:<18}" + "".join(f"{m:14.1f}" for m in med) + ratio)
    torch.set_num_threads(1)
    for name in args.profile:
        profile(name)


if __name__ == "__main__":
    main()
