"""Training the tiny Transformers of :mod:`pavlovlab.models` on the recall tasks of :mod:`pavlovlab.models.tasks`.

:func:`train_recall` trains one model with AdamW on fresh batches, evaluates it on a held-out batch and stops
at a target accuracy; :func:`train_recall_batched` trains the E seeds of one configuration in one batched
pass, with the same numbers up to rounding; :func:`train_configs` and :func:`train_models` train the shapes
and attention forms the notebooks compare, every configuration's seeds together.
"""

from __future__ import annotations

import inspect
import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
import torch.nn as nn
import torch.nn.functional as F

from .._checks import check_device, check_int, check_real, checked_by, unchecked
from .tasks import IGNORE, RecallBatch, associative_recall, vocab_size
from .transformer import TinyTransformer, count_parameters

_count_parameters = unchecked(count_parameters)


def _loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """The mean cross-entropy over the answer positions: logits (N, T, V), targets (N, T) -> ()."""
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=IGNORE)


def _check_batch(batch: object) -> None:
    """The batch of :func:`evaluate`: a :class:`~pavlovlab.models.tasks.RecallBatch` with an answer position."""
    if not isinstance(batch, RecallBatch):
        raise TypeError(f"batch: expected a tasks.RecallBatch, got {type(batch).__name__}")
    if not bool(batch.answer_mask.any()):
        raise ValueError("batch: expected at least one answer position (a target other than IGNORE = "
                         f"{IGNORE}), got none in targets of shape {tuple(batch.targets.shape)}")


@checked_by(_check_batch)
@torch.no_grad()
def evaluate(model: nn.Module, batch: RecallBatch) -> float:
    """Accuracy on the answer positions: the fraction of queries whose argmax token is the right value
    (ValueError for a batch without answer positions: the accuracy of nothing is undefined)."""
    was_training = model.training
    model.eval()
    logits = model(batch.tokens)
    model.train(was_training)
    mask = batch.answer_mask
    return (logits.argmax(dim=-1)[mask] == batch.targets[mask]).float().mean().item()


_evaluate = unchecked(evaluate)


def _check_training(*, steps: int, batch_size: int, eval_every: int, eval_size: int, warmup: int, seed: int,
                    lr: float, target_accuracy: float | None, task_kwargs: Mapping[str, Any],
                    task: Callable[..., RecallBatch] | None) -> None:
    """The checks of the training keywords shared by :func:`train_recall` and :func:`train_recall_batched`."""
    check_int("steps", steps, low=1)
    check_int("batch_size", batch_size, low=1)
    check_int("eval_every", eval_every, low=1)
    check_int("eval_size", eval_size, low=1)
    check_int("warmup", warmup, low=0)
    check_int("seed", seed, low=0)
    check_real("lr", lr, low=0.0, low_open=True)
    if target_accuracy is not None:
        check_real("target_accuracy", target_accuracy, low=0.0, high=1.0)
    if not isinstance(task_kwargs, Mapping):
        raise TypeError("task_kwargs: expected a dict of associative_recall keywords, "
                        f"got {type(task_kwargs).__name__}")
    taken = sorted({"n_samples", "generator", "device"} & set(task_kwargs))
    if taken:
        raise TypeError(f"task_kwargs: expected the task's own keywords only; train_recall passes n_samples, "
                        f"generator and device itself, got {taken} (use the seed and device arguments)")
    if task is not None and not callable(task):
        raise TypeError(f"task: expected a batch generator such as tasks.pointer_chasing, got {type(task).__name__}")


def _check_train_recall(model: object, *, task_kwargs: Mapping[str, Any], steps: int, batch_size: int, lr: float,
                        target_accuracy: float | None, eval_every: int, eval_size: int, warmup: int, seed: int,
                        device: object, task: Callable[..., RecallBatch] | None) -> dict[str, Any]:
    """The arguments of :func:`train_recall`, with the device's name as a ``torch.device``."""
    _check_training(steps=steps, batch_size=batch_size, eval_every=eval_every, eval_size=eval_size, warmup=warmup,
                    seed=seed, lr=lr, target_accuracy=target_accuracy, task_kwargs=task_kwargs, task=task)
    if not isinstance(model, nn.Module):
        raise TypeError(f"model: expected a torch.nn.Module such as TinyTransformer, got {type(model).__name__}")
    return {"device": check_device("device", device)}


def _held_out(model: nn.Module, task: Callable[..., RecallBatch], task_kwargs: Mapping[str, Any], eval_size: int,
              seed: int, device: torch.device | str | None) -> RecallBatch:
    """The held-out batch of the run with ``seed`` (drawn from seed 10 000 + seed), checked against the
    model's vocabulary and to hold an answer position (what the task draws is known only once drawn)."""
    held_out = task(eval_size, **task_kwargs, generator=torch.Generator().manual_seed(10_000 + seed), device=device)
    vocab = getattr(model, "config", {}).get("vocab_size")
    if vocab is not None and int(held_out.tokens.max()) >= vocab:
        call = f"{getattr(task, '__name__', 'task')}({', '.join(f'{k}={v!r}' for k, v in task_kwargs.items())})"
        raise ValueError(f"vocab_size: the model's vocab_size = {vocab} is too small for the task {call}, whose "
                         f"token ids go up to {int(held_out.tokens.max())} (see tasks.vocab_size(n_keys, n_values))")
    if not bool(held_out.answer_mask.any()):
        raise ValueError("batch: expected at least one answer position in every held-out batch, got none in the "
                         f"held-out batch of seed {seed} (targets of shape {tuple(held_out.targets.shape)}, all "
                         f"IGNORE = {IGNORE})")
    return held_out


def _lr_factor(s: int, warmup: int, steps: int) -> float:
    """The learning rate's factor after ``s`` steps: a linear warm-up over ``warmup`` steps, then a cosine
    decay to 10 % at ``steps``."""
    return min(1.0, (s + 1) / (warmup + 1)) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))


@checked_by(_check_train_recall)
def train_recall(model: nn.Module, *, task_kwargs: Mapping[str, Any], steps: int = 1000, batch_size: int = 64,
                 lr: float = 3e-3, target_accuracy: float | None = None, eval_every: int = 25,
                 eval_size: int = 512, weight_decay: float = 0.0, warmup: int = 20, progress: bool = True,
                 seed: int = 0, device: torch.device | str | None = None,
                 task: Callable[..., RecallBatch] | None = None) -> dict[str, Any]:
    """Train ``model`` on fresh associative-recall batches with AdamW (cross-entropy on the answers only).

    ``task`` is the batch generator, :func:`pavlovlab.models.tasks.associative_recall` by default (any function
    ``task(n_samples, **task_kwargs, generator=, device=) -> RecallBatch`` works, e.g.
    :func:`pavlovlab.models.tasks.pointer_chasing`).
    Every step draws a new batch ``task(batch_size, **task_kwargs)`` from a generator
    seeded with ``seed``; every ``eval_every`` steps the accuracy on a fixed held-out batch of
    ``eval_size`` sequences (drawn from another seed) is recorded, and training stops as soon as it
    reaches ``target_accuracy``. The learning rate warms up linearly over ``warmup`` steps then decays
    along a cosine to 10 % at ``steps``.

    Returns a history dict: ``step``, ``loss`` (mean training loss since the previous evaluation) and
    ``accuracy`` (held-out) — lists of equal length, one entry per evaluation — plus ``final_accuracy``,
    ``steps_run``, ``reached`` (target met), ``parameters`` and ``seconds`` (wall time).
    """
    from tqdm.auto import tqdm

    task = associative_recall if task is None else task
    device = next(model.parameters()).device if device is None else device
    model.to(device).train()
    train_gen = torch.Generator().manual_seed(seed)
    held_out = _held_out(model, task, task_kwargs, eval_size, seed, device)
    # foreach: one multi-tensor update for all parameters (the default on GPUs, the same numbers on the CPU)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay, foreach=True)
    schedule = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: _lr_factor(s, warmup, steps))
    history: dict[str, Any] = {"step": [], "loss": [], "accuracy": []}
    start, running, count, acc = time.perf_counter(), 0.0, 0, 0.0
    bar = tqdm(range(1, steps + 1), disable=not progress, desc="training", leave=False)
    step = 0
    for step in bar:
        batch = task(batch_size, **task_kwargs, generator=train_gen, device=device)
        loss = _loss(model(batch.tokens), batch.targets)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=True)
        opt.step()
        schedule.step()
        running, count = running + loss.item(), count + 1
        if step % eval_every == 0 or step == steps:
            acc = _evaluate(model, held_out)
            history["step"].append(step)
            history["loss"].append(running / count)
            history["accuracy"].append(acc)
            running, count = 0.0, 0
            bar.set_postfix(loss=f"{history['loss'][-1]:.3f}", acc=f"{acc:.3f}")
            if target_accuracy is not None and acc >= target_accuracy:
                break
    bar.close()
    history.update(final_accuracy=acc, steps_run=step, parameters=_count_parameters(model),
                   reached=target_accuracy is not None and acc >= target_accuracy,
                   seconds=time.perf_counter() - start)
    return history


def _ensemble(model: TinyTransformer) -> tuple[Callable[..., torch.Tensor], Callable[..., torch.Tensor]]:
    """:meth:`TinyTransformer.forward` and :func:`_loss` of E models of ``model``'s configuration at once, as torch's
    model ensembles run them: ``torch.func.vmap`` of ``functional_call(model, params[e], tokens[e])`` over a
    leading model dimension of the parameters (``torch.func.stack_module_state``) and of the batches.

    Returns ``logits(params, tokens (E, N, T)) -> (E, N, T, V)`` and ``losses(params, tokens, targets (E, N, T))
    -> (E,)``. Models never mix: model e's loss depends on its slice of the parameters only, so the gradient of
    the summed losses is, slice by slice, each model's own gradient. (A TinyTransformer has no buffers.)"""
    def logits(params: dict[str, torch.Tensor], tokens: torch.Tensor) -> torch.Tensor:
        return torch.func.functional_call(model, params, (tokens,), {"check_ids": False})

    def loss(params: dict[str, torch.Tensor], tokens: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return _loss(logits(params, tokens), targets)

    return torch.func.vmap(logits), torch.func.vmap(loss)


def _check_batched(models: object, seeds: object, *, task_kwargs: Mapping[str, Any], steps: int, batch_size: int,
                   lr: float, target_accuracy: float | None, eval_every: int, eval_size: int, warmup: int,
                   device: object, task: Callable[..., RecallBatch] | None) -> dict[str, Any]:
    """The arguments of :func:`train_recall_batched`: TinyTransformers of one configuration, one seed each, and the
    training keywords, with the device's name as a ``torch.device``."""
    _check_training(steps=steps, batch_size=batch_size, eval_every=eval_every, eval_size=eval_size, warmup=warmup,
                    seed=0, lr=lr, target_accuracy=target_accuracy, task_kwargs=task_kwargs, task=task)
    if not isinstance(models, Sequence) or not models or not all(isinstance(m, TinyTransformer) for m in models):
        kinds = sorted({type(m).__name__ for m in models}) if isinstance(models, Sequence) else []
        raise TypeError(f"models: expected a non-empty list of TinyTransformer, got {type(models).__name__} {kinds}")
    if any(m.config != models[0].config for m in models):
        raise ValueError("models: expected TinyTransformers of one configuration, got configurations "
                         f"{[m.config for m in models]}")
    if isinstance(seeds, (str, int)) or not isinstance(seeds, Sequence) or len(seeds) != len(models):
        raise ValueError(f"seeds: expected one seed per model ({len(models)}), got {seeds!r}")
    for s in seeds:
        check_int("seeds", s, low=0)
    return {"device": check_device("device", device)}


@checked_by(_check_batched)
def train_recall_batched(models: Sequence[TinyTransformer], *, seeds: Sequence[int], task_kwargs: Mapping[str, Any],
                         steps: int = 1000, batch_size: int = 64, lr: float = 3e-3,
                         target_accuracy: float | None = None, eval_every: int = 25, eval_size: int = 512,
                         weight_decay: float = 0.0, warmup: int = 20, progress: bool = True,
                         device: torch.device | str | None = None,
                         task: Callable[..., RecallBatch] | None = None) -> list[dict[str, Any]]:
    """:func:`train_recall` of E models of one configuration, ``models[e]`` with ``seeds[e]``, in one batched pass.

    The same training as E separate calls ``train_recall(models[e], seed=seeds[e], ...)``, up to rounding: each
    model draws its batches from its own generator, has its own held-out batch, its gradient clipped to norm 1
    over its own parameters, its own AdamW moments and the same learning-rate schedule, and stops on its own
    when it reaches ``target_accuracy`` (its parameters and history are kept from that evaluation). The E
    models' parameters are stacked along a leading model dimension ``(E, ...)`` and their forward passes are
    one :meth:`TinyTransformer.forward` under ``torch.func.vmap`` (one batched product per layer instead of E):
    for the notebooks' tiny models, faster than E separate runs or as fast. At the end each model holds its
    trained weights.

    Returns one history per model, as :func:`train_recall` returns (``seconds`` is the wall time of the joint
    run until that model stopped).
    """
    from tqdm.auto import tqdm

    task = associative_recall if task is None else task
    device = next(models[0].parameters()).device if device is None else device
    for m in models:
        m.to(device).train()
    E = len(models)
    held_out = [_held_out(m, task, task_kwargs, eval_size, s, device) for m, s in zip(models, seeds, strict=True)]
    if len({b.tokens.shape for b in held_out}) > 1:
        raise ValueError("task: expected batches of one shape for every seed, got "
                         f"{[tuple(b.tokens.shape) for b in held_out]}")
    eval_tokens = torch.stack([b.tokens for b in held_out])
    eval_targets = torch.stack([b.targets for b in held_out]).flatten(1)
    answers = eval_targets != IGNORE
    generators = [torch.Generator().manual_seed(s) for s in seeds]
    params, _ = torch.func.stack_module_state(list(models))           # {name: (E, ...)} leaves; no buffers
    logits, losses_of = _ensemble(models[0])
    opt = torch.optim.AdamW(params.values(), lr=lr, weight_decay=weight_decay, foreach=True)
    active = list(range(E))                                            # the models still training, in stack order
    histories: list[dict[str, Any]] = [{"step": [], "loss": [], "accuracy": []} for _ in models]
    start, running, count = time.perf_counter(), [0.0] * E, 0
    bar = tqdm(range(1, steps + 1), disable=not progress, desc=f"training {E} models", leave=False)
    for step in bar:
        batches = [task(batch_size, **task_kwargs, generator=generators[e], device=device) for e in active]
        tokens, targets = torch.stack([b.tokens for b in batches]), torch.stack([b.targets for b in batches])
        losses = losses_of(params, tokens, targets)
        opt.zero_grad(set_to_none=True)
        losses.sum().backward()
        grads = [w.grad for w in params.values() if w.grad is not None]
        norms = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g.flatten(1), dim=1) for g in grads]),
                                         dim=0)                        # each model's gradient norm: (E,)
        clip = (1.0 / (norms + 1e-6)).clamp(max=1.0)                   # as clip_grad_norm_(max_norm=1)
        torch._foreach_mul_(grads, [clip.view(-1, *[1] * (g.dim() - 1)) for g in grads])
        for group in opt.param_groups:
            group["lr"] = lr * _lr_factor(step - 1, warmup, steps)
        opt.step()
        running = [r + x for r, x in zip(running, losses.tolist(), strict=True)]
        count += 1
        if step % eval_every and step != steps:
            continue
        with torch.no_grad():
            keep = torch.tensor(active, device=device)
            predicted = logits(params, eval_tokens[keep]).argmax(-1).flatten(1)
            hits = ((predicted == eval_targets[keep]) & answers[keep]).sum(-1)
            accuracies = (hits.float() / answers[keep].sum(-1).float()).tolist()
        stopped = []
        for j, (e, acc) in enumerate(zip(active, accuracies, strict=True)):
            h = histories[e]
            h["step"].append(step)
            h["loss"].append(running[j] / count)
            h["accuracy"].append(acc)
            if (target_accuracy is not None and acc >= target_accuracy) or step == steps:
                with torch.no_grad():
                    for name, w in models[e].named_parameters():
                        w.copy_(params[name][j])
                h.update(final_accuracy=acc, steps_run=step, parameters=_count_parameters(models[e]),
                         reached=target_accuracy is not None and acc >= target_accuracy,
                         seconds=time.perf_counter() - start)
                stopped.append(j)
        bar.set_postfix(acc=f"{min(accuracies):.3f}", training=len(active) - len(stopped))
        if stopped:
            rest = [j for j in range(len(active)) if j not in stopped]
            if not rest:
                break
            params, opt = _keep(params, opt, rest)
            active = [active[j] for j in rest]
        running, count = [0.0] * len(active), 0
    bar.close()
    return histories


_train_recall_batched = unchecked(train_recall_batched)


def _keep(params: dict[str, torch.Tensor], opt: torch.optim.AdamW,
          rest: list[int]) -> tuple[dict[str, torch.Tensor], torch.optim.AdamW]:
    """The stacked parameters and the AdamW state of the models at stack positions ``rest`` only (the others
    stopped): new leaves and a new optimizer that carries their moments and step counts over."""
    index = torch.tensor(rest, device=next(iter(params.values())).device)
    kept = {name: w.detach()[index].requires_grad_(w.requires_grad) for name, w in params.items()}
    new = torch.optim.AdamW(kept.values())
    new.param_groups[0].update({k: v for k, v in opt.param_groups[0].items() if k != "params"})
    for w, old in zip(kept.values(), params.values(), strict=True):
        state = opt.state.get(old)
        if state:
            new.state[w] = {k: (v if k == "step" else v[index]) for k, v in state.items()}
    return kept, new


def _check_history(history: object, threshold: float) -> None:
    """The arguments of :func:`steps_to_threshold`: a threshold in [0, 1] and a history with steps and
    accuracies."""
    check_real("threshold", threshold, low=0.0, high=1.0)
    if not isinstance(history, Mapping) or not {"step", "accuracy"} <= set(history):
        keys = f" with keys {sorted(history)}" if isinstance(history, Mapping) else ""
        raise TypeError("history: expected the dict train_recall returns (with 'step' and 'accuracy' lists), got "
                        f"{type(history).__name__}{keys}")


@checked_by(_check_history)
def steps_to_threshold(history: Mapping[str, Any], threshold: float) -> int | None:
    """The first evaluated training step whose held-out accuracy reaches ``threshold`` (None if never):
    the speed of learning, reported apart from the final accuracy."""
    return next((s for s, a in zip(history["step"], history["accuracy"], strict=True) if a >= threshold), None)


def _check_configs(configs: object, train_kwargs: dict[str, Any]) -> dict[str, Any]:
    """The configurations of :func:`train_configs` (a dict of TinyTransformer keywords by name) and its training
    keywords, checked as :func:`train_recall_batched` checks them (the models and seeds it passes on are valid by
    construction), with the device's name as a ``torch.device``."""
    if not isinstance(configs, Mapping) or not all(isinstance(c, Mapping) for c in configs.values()):
        raise TypeError("configs: expected a dict {name: TinyTransformer keywords} such as depth_width_configs(), "
                        f"got {type(configs).__name__} {str(configs)[:60]}")
    try:
        given = inspect.signature(_train_recall_batched).bind((), seeds=(), **train_kwargs)
    except TypeError as e:
        raise TypeError(f"train_kwargs: expected keywords of train_recall_batched, {e}") from None
    given.apply_defaults()
    a = given.arguments
    _check_training(steps=a["steps"], batch_size=a["batch_size"], eval_every=a["eval_every"], eval_size=a["eval_size"],
                    warmup=a["warmup"], seed=0, lr=a["lr"], target_accuracy=a["target_accuracy"],
                    task_kwargs=a["task_kwargs"], task=a["task"])
    return {"train_kwargs": {**train_kwargs, "device": check_device("device", a["device"])}}


@checked_by(_check_configs)
def train_configs(configs: Mapping[str, Mapping[str, Any]], *, vocab_size: int, attention: str = "linear",
                  seeds: Sequence[int] = (0,), progress: bool = True, **train_kwargs: Any) -> dict[str, list[dict]]:
    """Train one :class:`TinyTransformer` per (config, seed), the seeds of a config together
    (:func:`train_recall_batched`: the same training as one :func:`train_recall` per seed, up to rounding).

    ``configs`` maps a name to model keywords (e.g. :func:`depth_width_configs`); each model is
    initialised and trained with the same seed. Returns ``{name: [history per seed]}``; each history
    also records ``"parameters"``.
    """
    from tqdm.auto import tqdm

    out: dict[str, list[dict]] = {name: [] for name in configs}
    for name in tqdm(list(configs) if seeds else [], disable=not progress, desc="configurations"):
        nets = [TinyTransformer(vocab_size, attention=attention, seed=seed, **configs[name]) for seed in seeds]
        out[name] = _train_recall_batched(nets, seeds=seeds, progress=progress, **train_kwargs)
    return out


def train_models(attentions: Sequence[str] = ("linear", "delta", "softmax"), seeds: Sequence[int] = (0, 1, 2), *,
                 n_pairs: int = 8, n_keys: int = 16, n_values: int = 16, steps: int = 300,
                 target_accuracy: float | None = 0.99, model_kwargs: Mapping[str, Any] | None = None,
                 progress: bool = True, **train_kwargs: Any) -> dict[str, list[dict[str, Any]]]:
    """Train one :class:`TinyTransformer` per (attention, seed) on associative recall, the seeds of an
    attention together (:func:`train_recall_batched`).

    Returns ``{attention: [{"model", "history"} per seed]}``; model keywords default to
    ``d_model=32, n_heads=2, d_head=16`` (one layer, MLP) and are overridden by ``model_kwargs``.
    """
    from tqdm.auto import tqdm

    kw: dict[str, Any] = dict(d_model=32, n_layers=1, n_heads=2, d_head=16)
    kw.update(model_kwargs or {})
    task = dict(n_pairs=n_pairs, n_keys=n_keys, n_values=n_values)
    out: dict[str, list[dict[str, Any]]] = {a: [] for a in attentions}
    for a in tqdm(list(attentions) if seeds else [], disable=not progress, desc="attentions"):
        nets = [TinyTransformer(vocab_size(n_keys, n_values), attention=a, seed=s, **kw) for s in seeds]
        hists = train_recall_batched(nets, seeds=seeds, task_kwargs=task, steps=steps,
                                     target_accuracy=target_accuracy, progress=progress, **train_kwargs)
        out[a] = [{"model": m.eval(), "history": h} for m, h in zip(nets, hists, strict=True)]
    return out


__all__ = ["evaluate", "steps_to_threshold", "train_configs", "train_models", "train_recall", "train_recall_batched"]
