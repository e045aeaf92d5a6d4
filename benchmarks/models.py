"""Training speed of the notebooks' tiny Transformers: steps per second at one thread, and what a step costs.

Every configuration that notebooks 04, 05 and 08 train (model shape, task, training keywords and number of
seeds as the notebooks pass them) is trained for ``--steps`` steps on one thread, without early stopping,
and timed in CPU time (``time.process_time``: on a loaded machine the wall clock also counts the other
processes' turns). The held-out evaluations the notebooks run are included. Two paths are timed:

- *one model*: :func:`pavlovlab.models.training.train_recall` of one model (how every model was trained before seeds
  were batched);
- *seeds together*: :func:`pavlovlab.models.training.train_recall_batched` of the configuration's E seeds in one
  batched pass (what the notebooks run now), reported as steps per second **per model** (E · steps / time).

``--against REF`` also times the package as it is at the git revision REF (exported with ``git archive``
into a temporary folder) in child processes, alternating with this tree's, so that both see the same
load: the tables then give REF's steps per second and this tree's (medians of ``--repeats``), and per path
the ratio this tree / REF of the runs that followed each other (median and range over the repeats);
a tree without ``train_recall_batched`` is timed one model at a time.

``--profile NAME`` prints the shares of one step's phases (drawing the batch, forward, backward, clipping
and the optimizer step) and the operations that dominate it (``torch.profiler``, self CPU time), for the
``pavlovlab`` this process imports (set ``PYTHONPATH`` to choose a checkout); ``--profile-batched NAME``
the operations of a step of the configuration's seeds trained together.

    python benchmarks/models.py                                  # this tree, every configuration
    python benchmarks/models.py --against main --repeats 3       # before/after ratios in one run
    python benchmarks/models.py --profile "08 delta" --profile-batched "08 delta" --only "08 delta"
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
RECALL_05 = dict(n_pairs=6, hops=1, n_queries=6, n_items=8, separator=True)
TRAIN_04 = dict(batch_size=64, lr=1e-2, eval_size=256)
TRAIN_05 = dict(task="pointer_chasing", batch_size=64, lr=5e-3, eval_every=25, eval_size=256)
SHAPES_05 = {  # what 05 trains in front of the reader: depth_width_configs(4, d_model=32, d_head=8)'s wide-shallow
    "wide-shallow": dict(n_layers=1, n_heads=4, mlp_ratio=8, d_head=8),
}
CONFIGS: dict[str, dict[str, Any]] = {
    **{f"04 {a} S={S}": dict(vocab=16, seeds=3,
                             model=dict(d_model=32, n_layers=1, n_heads=1, d_head=4, attention=a),
                             train=dict(task_kwargs=dict(n_pairs=S, n_keys=8, n_values=8), **TRAIN_04))
       for a, S in (("linear", 2), ("linear", 8), ("softmax", 8))},
    **{f"05 {shape}": dict(vocab=10, seeds=3, model=dict(d_model=32, attention="linear", **kw),
                           train=dict(task_kwargs=RECALL_05, **TRAIN_05)) for shape, kw in SHAPES_05.items()},
    **{f"08 {a}": dict(vocab=32, seeds=5, model=dict(d_model=32, n_layers=1, n_heads=2, d_head=16, attention=a),
                       train=dict(task_kwargs=RECALL_08)) for a in ("linear", "delta", "softmax")},
}


def _train_kwargs(config: dict[str, Any]) -> dict[str, Any]:
    from pavlovlab.models import tasks

    kw = dict(config["train"])
    if "task" in kw:
        kw["task"] = getattr(tasks, kw["task"])
    return kw



def _training() -> Any:
    """The module with the training loops: ``pavlovlab.models.training``, or ``pavlovlab.models`` in an older tree
    (``--against`` a revision from before the two were separate rooms)."""
    import importlib

    try:
        return importlib.import_module("pavlovlab.models.training")
    except ImportError:
        return importlib.import_module("pavlovlab.models")


def steps_per_second(name: str, steps: int, together: bool) -> float:
    """Train configuration ``name`` for ``steps`` steps at one thread: steps per CPU second of one model, or
    with ``together`` of each of its E seeds trained in one batched pass (E · steps per CPU second)."""
    from pavlovlab.models import transformer

    training = _training()
    config = CONFIGS[name]
    kw = _train_kwargs(config)
    seeds = list(range(config["seeds"] if together else 1))
    nets = [transformer.TinyTransformer(config["vocab"], seed=s, **config["model"]) for s in seeds]

    def train(n: int) -> None:
        if together:
            training.train_recall_batched(nets, seeds=seeds, steps=n, progress=False, target_accuracy=None, **kw)
        else:
            training.train_recall(nets[0], steps=n, progress=False, target_accuracy=None, **kw)

    train(5)                                                                   # warm-up: first calls allocate
    start = time.process_time()
    train(steps)
    return len(seeds) * steps / (time.process_time() - start)


def profile_batched(name: str, steps: int = 20) -> None:
    """Print the CPU time of a step of ``name``'s seeds trained together and the operations that dominate it."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    from pavlovlab.models import transformer
    from pavlovlab.models.training import train_recall_batched

    config = CONFIGS[name]
    kw = _train_kwargs(config)
    seeds = list(range(config["seeds"]))
    nets = [transformer.TinyTransformer(config["vocab"], seed=s, **config["model"]) for s in seeds]
    train_recall_batched(nets, seeds=seeds, steps=5, progress=False, target_accuracy=None, **kw)
    start = time.process_time()
    train_recall_batched(nets, seeds=seeds, steps=steps, progress=False, target_accuracy=None, **kw)
    ms = 1e3 * (time.process_time() - start) / steps
    print(f"\n{name}, {len(seeds)} seeds together: {ms:.2f} ms of CPU per step ({ms / len(seeds):.2f} per model, "
          "held-out evaluations included)")
    with torch_profile(activities=[ProfilerActivity.CPU]) as prof:
        train_recall_batched(nets, seeds=seeds, steps=steps, progress=False, target_accuracy=None, **kw)
    _print_ops(prof, steps)


def _print_ops(prof: Any, steps: int) -> None:
    ops = [e for e in prof.key_averages() if e.key.startswith("aten::")]
    print(f"aten operations per step: {sum(e.count for e in ops) / steps:.0f} (nested calls included); "
          "top self CPU time:")
    total_self = sum(e.self_cpu_time_total for e in ops)
    for e in sorted(ops, key=lambda e: -e.self_cpu_time_total)[:12]:
        print(f"  {e.key:<36} {100 * e.self_cpu_time_total / total_self:5.1f} %  {e.count / steps:6.1f} calls/step")


def profile(name: str, steps: int = 30) -> None:
    """Print the phase shares of a training step of ``name`` and the operations that dominate it."""
    from torch.profiler import ProfilerActivity, record_function
    from torch.profiler import profile as torch_profile

    from pavlovlab.models import tasks, transformer

    config = CONFIGS[name]
    model = transformer.TinyTransformer(config["vocab"], seed=0, **config["model"])
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
    _print_ops(prof, steps)


def _child(names: list[str], steps: int) -> None:
    torch.set_num_threads(1)
    paths = {"one model": False, **({"seeds together": True} if hasattr(_training(), "train_recall_batched") else {})}
    print(json.dumps({path: {name: steps_per_second(name, steps, together) for name in names}
                      for path, together in paths.items()}))


def _run_child(tree: Path, names: list[str], steps: int) -> dict[str, dict[str, float]]:
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
                        help="configurations whose one-model step to profile (none: no profile)")
    parser.add_argument("--profile-batched", nargs="*", metavar="NAME", default=["08 delta"],
                        help="configurations whose seeds-together step to profile (none: no profile)")
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
        times: dict[tuple[str, str], dict[str, list[float]]] = {}
        loads = []
        for _ in range(args.repeats):                                    # interleaved: both trees see the load
            for label, tree in trees.items():
                for path, values in _run_child(tree, args.only, args.steps).items():
                    for name, value in values.items():
                        times.setdefault((label, path), {n: [] for n in args.only})[name].append(value)
                loads.append(os.getloadavg()[0])
    print(f"Training steps per CPU second and model at one thread ({args.steps} steps, median of {args.repeats}; "
          f"load average {min(loads):.1f}–{max(loads):.1f} on {os.cpu_count()} CPUs)")
    columns = list(times)
    print(f"{'':<18}" + "".join(f"{label:>16}" for label, _ in columns))
    print(f"{'configuration':<18}" + "".join(f"{path:>16}" for _, path in columns))
    for name in args.only:
        print(f"{name:<18}" + "".join(f"{statistics.median(times[column][name]):16.1f}" for column in columns))
    if args.against:
        paths = [path for label, path in columns if label == args.against and ("this tree", path) in times]
        print(f"\nthis tree / {args.against}, per path: the median and range of the ratios of the runs that followed "
              "each other")
        print(f"{'configuration':<18}" + "".join(f"{path:>28}" for path in paths))
        for name in args.only:
            cells = []
            for path in paths:
                ratios = [b / a for a, b in zip(times[args.against, path][name], times["this tree", path][name],
                                                strict=True)]
                cells.append(f"{statistics.median(ratios):.2f}× ({min(ratios):.2f}–{max(ratios):.2f})")
            print(f"{name:<18}" + "".join(f"{c:>28}" for c in cells))
    torch.set_num_threads(1)
    for name in args.profile:
        profile(name)
    for name in args.profile_batched:
        profile_batched(name)


if __name__ == "__main__":
    main()
