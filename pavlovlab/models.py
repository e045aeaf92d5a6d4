"""A tiny trainable Transformer whose attention is a conditioning circuit, and its training loop.

``TinyTransformer`` = token embedding → L blocks (H heads of attention + a small MLP) → readout.
The attention of every block is one of the package's forms, chosen by name:

- ``"linear"``: :func:`pavlovlab.linear_attention`, the Hebbian memory ``S_t = S_{t-1} + v_t k_tᵀ``;
- ``"delta"``: :func:`pavlovlab.delta_rule_attention`, the Rescorla–Wagner memory (β from the token);
- ``"softmax"``: :func:`pavlovlab.softmax_attention`, the standard Transformer.

Heads are a leading dimension ``(N, H, T, d_head)``: one call serves all heads, no loop over heads.
Inside a block the forms run unchecked (:mod:`pavlovlab.attention_literal`'s parallel forms and
:func:`pavlovlab.attention_kernels.delta_chunk_kernel`): their inputs are valid by construction, and a tiny
model's training step is made of many small operations, so the public functions' checks would
cost a noticeable share of it. The numbers are those of the public functions.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

import torch
import torch.nn as nn
import torch.nn.functional as F

from . import attention_literal as literal
from ._checks import check_choice, check_device, check_int, check_output, check_real
from .attention import FEATURE_MAPS
from .attention_kernels import delta_chunk_kernel
from .tasks import IGNORE, RecallBatch, associative_recall, vocab_size

ATTENTIONS = ("linear", "delta", "softmax")


def _shift(x: torch.Tensor) -> torch.Tensor:
    """The previous token's vector at every position (zeros at t = 0): x (N, T, d) -> (N, T, d)."""
    return F.pad(x, (0, 0, 1, 0))[:, :-1]


class Block(nn.Module):
    """One layer: ``x + Attn(LN(x))`` then ``x + MLP(LN(x))``, with H heads of size ``d_head``.

    q, k, v and (for ``"delta"``) β are projected from ``[x_t, x_{t−1}]``, the token and its
    predecessor (a causal convolution of width 2, the "token shift"). This is how a value token
    learns which key came just before it: the write ``v_t k_tᵀ`` then binds the value to the key
    that preceded it, and a later query of that key reads the value back — in one layer.
    """

    def __init__(self, d_model: int, n_heads: int, d_head: int, attention: str, mlp: bool, mlp_ratio: int,
                 feature_map: str) -> None:
        super().__init__()
        for name, value in (("d_model", d_model), ("n_heads", n_heads), ("d_head", d_head), ("mlp_ratio", mlp_ratio)):
            check_int(name, value, low=1)
        check_choice("attention", attention, ATTENTIONS)
        if not callable(feature_map):
            check_choice("feature_map", feature_map, FEATURE_MAPS)
        self.n_heads, self.d_head, self.attention, self.feature_map = n_heads, d_head, attention, feature_map
        inner = n_heads * d_head
        self.ln1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(2 * d_model, 3 * inner, bias=False)
        self.beta = nn.Linear(2 * d_model, n_heads) if attention == "delta" else None
        self.out_norm = nn.LayerNorm(d_head) if attention != "softmax" else None  # sums of T writes: rescale
        self.out = nn.Linear(inner, d_model, bias=False)
        self.mlp = nn.Sequential(nn.LayerNorm(d_model), nn.Linear(d_model, mlp_ratio * d_model), nn.GELU(),
                                 nn.Linear(mlp_ratio * d_model, d_model)) if mlp else None

    def _phi(self, x: torch.Tensor) -> torch.Tensor:
        """The feature map φ of linear attention, a named one or a callable (whose output is checked)."""
        if callable(self.feature_map):
            return check_output("feature_map", self.feature_map(x), x.shape, x)
        return FEATURE_MAPS[self.feature_map](x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        N, T, _ = x.shape
        h = self.ln1(x)
        h2 = torch.cat([h, _shift(h)], dim=-1)
        q, k, v = self.qkv(h2).view(N, T, 3, self.n_heads, self.d_head).permute(2, 0, 3, 1, 4)  # (N, H, T, d)
        if self.attention == "softmax":
            o = literal.softmax_parallel(q, k, v, True, None)                  # = softmax_attention(q, k, v)
        else:
            q, k = F.normalize(q, dim=-1), F.normalize(k, dim=-1)   # unit keys: bounded writes
            if self.attention == "linear":
                o, _ = literal.linear_parallel(self._phi(q), self._phi(k), v)  # = linear_attention(mode="parallel")
            else:
                assert self.beta is not None                               # a delta block has its β projection
                beta = torch.sigmoid(self.beta(h2)).transpose(1, 2)        # (N, H, T), in (0, 1)
                empty = q.new_zeros(N, self.n_heads, self.d_head, self.d_head)   # S_0: (N, H, d_v, d_k)
                o, _ = delta_chunk_kernel(q, k, v, beta, empty, chunk_size=64)  # = delta_rule_attention
            assert self.out_norm is not None                               # every block but softmax's has one
            o = self.out_norm(o)
        x = x + self.out(o.transpose(1, 2).reshape(N, T, -1))
        return x + self.mlp(x) if self.mlp is not None else x


class TinyTransformer(nn.Module):
    """A small causal Transformer: embedding → ``n_layers`` × (``n_heads`` heads of attention + MLP) → readout.

    Args:
        vocab_size: number of token ids (e.g. :func:`pavlovlab.tasks.vocab_size`).
        d_model: width of the residual stream.
        n_layers: L, the depth. n_heads: H, heads per layer. d_head: d_k = d_v of each head.
        attention: ``"linear"`` (Hebbian), ``"delta"`` (Rescorla–Wagner) or ``"softmax"``.
        mlp: add a two-layer MLP (width ``mlp_ratio · d_model``) after each attention.
        feature_map: φ for linear attention (``"identity"``: the paper's circuit).
        seed: if given, the initial weights are drawn from this seed (without touching the global RNG).

    Position: linear attention sums over the past, so it is blind to order. No positional embedding
    is used; instead each block sees ``[x_t, x_{t−1}]`` (a width-2 causal "token shift") so that a
    value's write is keyed by the key just before it. In linear and delta blocks, q and k are
    L2-normalised (unit keys keep the Hebbian sums bounded and the delta rule stable) and each head's
    read-out passes a LayerNorm; softmax blocks use the usual ``1/√d_head`` scale.

    ``forward(tokens (N, T) long) -> logits (N, T, vocab_size)``.
    """

    def __init__(self, vocab_size: int, *, d_model: int = 64, n_layers: int = 1, n_heads: int = 4, d_head: int = 16,
                 attention: str = "linear", mlp: bool = True, mlp_ratio: int = 2, feature_map: str = "identity",
                 seed: int | None = None) -> None:
        super().__init__()
        for name, value in (("vocab_size", vocab_size), ("d_model", d_model), ("n_layers", n_layers),
                            ("n_heads", n_heads), ("d_head", d_head), ("mlp_ratio", mlp_ratio)):
            check_int(name, value, low=1)
        self.attention = check_choice("attention", attention, ATTENTIONS)
        if not callable(feature_map):
            check_choice("feature_map", feature_map, FEATURE_MAPS)
        self.config: dict[str, Any] = dict(vocab_size=vocab_size, d_model=d_model, n_layers=n_layers, n_heads=n_heads,
                           d_head=d_head, attention=attention, mlp=mlp, mlp_ratio=mlp_ratio, feature_map=feature_map)
        with torch.random.fork_rng(devices=[]):
            if seed is not None:
                torch.manual_seed(check_int("seed", seed, low=0))
            self.embed = nn.Embedding(vocab_size, d_model)
            self.blocks = nn.ModuleList(Block(d_model, n_heads, d_head, attention, mlp, mlp_ratio, feature_map)
                                        for _ in range(n_layers))
            self.ln_f = nn.LayerNorm(d_model)
            self.readout = nn.Linear(d_model, vocab_size)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        if not isinstance(tokens, torch.Tensor) or tokens.dtype != torch.long or tokens.dim() != 2:
            raise TypeError(f"tokens: expected a (N, T) long tensor, got "
                            f"{getattr(tokens, 'dtype', type(tokens).__name__)} "
                            f"of shape {tuple(getattr(tokens, 'shape', ()))}")
        vocab = self.config["vocab_size"]
        if tokens.numel() and (int(tokens.min()) < 0 or int(tokens.max()) >= vocab):
            raise ValueError(f"tokens: expected ids in [0, vocab_size = {vocab}), got ids from {int(tokens.min())} "
                             f"to {int(tokens.max())}")
        if tokens.shape[1] == 0:  # an empty sequence: empty logits (N, 0, vocab_size), as the attention forms do
            return self.readout.weight.new_zeros(tokens.shape[0], 0, vocab)
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.readout(self.ln_f(x))

    def extra_repr(self) -> str:
        c = self.config
        return f"L={c['n_layers']}, H={c['n_heads']}, d_head={c['d_head']}, attention={c['attention']!r}"


def count_parameters(model: nn.Module) -> int:
    """Number of trainable parameters."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model: expected a torch.nn.Module, got {type(model).__name__}")
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def _loss(logits: torch.Tensor, batch: RecallBatch) -> torch.Tensor:
    return F.cross_entropy(logits.flatten(0, 1), batch.targets.flatten(), ignore_index=IGNORE)


@torch.no_grad()
def evaluate(model: nn.Module, batch: RecallBatch) -> float:
    """Accuracy on the answer positions: the fraction of queries whose argmax token is the right value
    (ValueError for a batch without answer positions: the accuracy of nothing is undefined)."""
    if not isinstance(batch, RecallBatch):
        raise TypeError(f"batch: expected a tasks.RecallBatch, got {type(batch).__name__}")
    was_training = model.training
    model.eval()
    logits = model(batch.tokens)
    model.train(was_training)
    mask = batch.answer_mask
    if not bool(mask.any()):
        raise ValueError("batch: expected at least one answer position (a target other than IGNORE = "
                         f"{IGNORE}), got none in targets of shape {tuple(batch.targets.shape)}")
    return (logits.argmax(dim=-1)[mask] == batch.targets[mask]).float().mean().item()


def _check_training(*, steps: int, batch_size: int, eval_every: int, eval_size: int, warmup: int, seed: int,
                    lr: float, target_accuracy: float | None, task_kwargs: Mapping[str, Any],
                    task: Callable[..., RecallBatch] | None) -> Callable[..., RecallBatch]:
    """The checks of the training keywords shared by :func:`train_recall` and :func:`train_recall_batched`;
    returns the batch generator (``associative_recall`` for None)."""
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
    if task is None:
        return associative_recall
    if not callable(task):
        raise TypeError(f"task: expected a batch generator such as tasks.pointer_chasing, got {type(task).__name__}")
    return task


def _held_out(model: nn.Module, task: Callable[..., RecallBatch], task_kwargs: Mapping[str, Any], eval_size: int,
              seed: int, device: torch.device | None) -> RecallBatch:
    """The held-out batch of the run with ``seed`` (drawn from seed 10 000 + seed), checked against the
    model's vocabulary."""
    held_out = task(eval_size, **task_kwargs, generator=torch.Generator().manual_seed(10_000 + seed), device=device)
    vocab = getattr(model, "config", {}).get("vocab_size")
    if vocab is not None and int(held_out.tokens.max()) >= vocab:
        call = f"{getattr(task, '__name__', 'task')}({', '.join(f'{k}={v!r}' for k, v in task_kwargs.items())})"
        raise ValueError(f"vocab_size: the model's vocab_size = {vocab} is too small for the task {call}, whose "
                         f"token ids go up to {int(held_out.tokens.max())} (see tasks.vocab_size(n_keys, n_values))")
    return held_out


def _lr_factor(s: int, warmup: int, steps: int) -> float:
    """The learning rate's factor after ``s`` steps: a linear warm-up over ``warmup`` steps, then a cosine
    decay to 10 % at ``steps``."""
    return min(1.0, (s + 1) / (warmup + 1)) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))


def train_recall(model: nn.Module, *, task_kwargs: Mapping[str, Any], steps: int = 1000, batch_size: int = 64,
                 lr: float = 3e-3, target_accuracy: float | None = None, eval_every: int = 25,
                 eval_size: int = 512, weight_decay: float = 0.0, warmup: int = 20, progress: bool = True,
                 seed: int = 0, device: torch.device | str | None = None,
                 task: Callable[..., RecallBatch] | None = None) -> dict[str, Any]:
    """Train ``model`` on fresh associative-recall batches with AdamW (cross-entropy on the answers only).

    ``task`` is the batch generator, :func:`pavlovlab.tasks.associative_recall` by default (any function
    ``task(n_samples, **task_kwargs, generator=, device=) -> RecallBatch`` works, e.g.
    :func:`pavlovlab.tasks.pointer_chasing`).
    Every step draws a new batch ``task(batch_size, **task_kwargs)`` from a generator
    seeded with ``seed``; every ``eval_every`` steps the accuracy on a fixed held-out batch of
    ``eval_size`` sequences (drawn from another seed) is recorded, and training stops as soon as it
    reaches ``target_accuracy``. The learning rate warms up linearly over ``warmup`` steps then decays
    along a cosine to 10 % at ``steps``.

    Returns a history dict: ``step``, ``loss`` (mean training loss since the previous evaluation) and
    ``accuracy`` (held-out) — lists of equal length, one entry per evaluation — plus ``final_accuracy``,
    ``steps_run``, ``reached`` (target met), ``parameters`` and ``seconds`` (wall time).
    """
    task = _check_training(steps=steps, batch_size=batch_size, eval_every=eval_every, eval_size=eval_size,
                           warmup=warmup, seed=seed, lr=lr, target_accuracy=target_accuracy, task_kwargs=task_kwargs,
                           task=task)
    if not isinstance(model, nn.Module):
        raise TypeError(f"model: expected a torch.nn.Module such as TinyTransformer, got {type(model).__name__}")
    from tqdm.auto import tqdm

    device = next(model.parameters()).device if device is None else check_device("device", device)
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
        loss = _loss(model(batch.tokens), batch)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=True)
        opt.step()
        schedule.step()
        running, count = running + loss.item(), count + 1
        if step % eval_every == 0 or step == steps:
            acc = evaluate(model, held_out)
            history["step"].append(step)
            history["loss"].append(running / count)
            history["accuracy"].append(acc)
            running, count = 0.0, 0
            bar.set_postfix(loss=f"{history['loss'][-1]:.3f}", acc=f"{acc:.3f}")
            if target_accuracy is not None and acc >= target_accuracy:
                break
    bar.close()
    history.update(final_accuracy=acc, steps_run=step, parameters=count_parameters(model),
                   reached=target_accuracy is not None and acc >= target_accuracy,
                   seconds=time.perf_counter() - start)
    return history


# Seeds trained together. The E models of one configuration are trained in one forward and backward pass:
# every parameter is stacked along a leading model dimension (E, ...), the linear layers become batched
# products over that dimension, and the parameter-free attention forms see the model dimension as part of
# the batch (E·N sequences). Models never mix: each model's loss depends only on its own slice, so the
# gradient of the summed losses is, slice by slice, each model's own gradient.

_TRANSPOSED = ("qkv.weight", "beta.weight", "out.weight", "mlp.1.weight", "mlp.3.weight", "readout.weight")


def _stack(models: Sequence[TinyTransformer]) -> dict[str, torch.Tensor]:
    """The models' parameters stacked as leaves ``{name: (E, ...)}``; the weights of linear layers are stored
    transposed, ``(E, in, out)``, so that ``x @ W`` is one batched product with contiguous gradients."""
    stacked = {}
    for name, first in models[0].named_parameters():
        w = torch.stack([dict(m.named_parameters())[name].detach() for m in models])
        stacked[name] = (w.mT if name.endswith(_TRANSPOSED) else w).contiguous().requires_grad_(first.requires_grad)
    return stacked


def _unstack(model: TinyTransformer, stacked: Mapping[str, torch.Tensor], i: int) -> None:
    """Copy slice ``i`` of the stacked parameters into ``model``."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            w = stacked[name][i]
            p.copy_(w.mT if name.endswith(_TRANSPOSED) else w)


def _norm(x: torch.Tensor, p: Mapping[str, torch.Tensor], name: str) -> torch.Tensor:
    """LayerNorm with each model's own affine map: x (E, M, D), weight and bias (E, D)."""
    return torch.addcmul(p[name + ".bias"][:, None], F.layer_norm(x, x.shape[-1:]), p[name + ".weight"][:, None])


def _linear(x: torch.Tensor, p: Mapping[str, torch.Tensor], name: str) -> torch.Tensor:
    """Each model's ``x W + b``: x (E, M, in), W (E, in, out) (stored transposed), b (E, out) if present."""
    bias = p.get(name + ".bias")
    w = p[name + ".weight"]
    return torch.bmm(x, w) if bias is None else torch.baddbmm(bias[:, None], x, w)


def _stacked_block(block: Block, p: Mapping[str, torch.Tensor], pre: str, x: torch.Tensor, N: int,
                   T: int) -> torch.Tensor:
    """:meth:`Block.forward` of E models at once: x (E, N·T, d_model) -> (E, N·T, d_model)."""
    E, _, D = x.shape
    H, d = block.n_heads, block.d_head
    h = _norm(x, p, pre + "ln1").view(E * N, T, D)
    h2 = torch.cat([h, _shift(h)], dim=-1).view(E, N * T, 2 * D)
    qkv = _linear(h2, p, pre + "qkv").view(E * N, T, 3, H, d)
    if block.attention == "softmax":
        q, k, v = qkv.permute(2, 0, 3, 1, 4)                                    # (E·N, H, T, d)
        o = literal.softmax_parallel(q, k, v, True, None)
    else:
        q, k = F.normalize(qkv[:, :, :2], dim=-1).permute(2, 0, 3, 1, 4)      # unit keys, before the permute
        v = qkv[:, :, 2].transpose(1, 2)
        if block.attention == "linear":                                 # linear_parallel from S_0 = 0, without
            o = (block._phi(q) @ block._phi(k).mT).tril_() @ v              # its zero read Q S_0ᵀ and end state
        else:
            beta = torch.sigmoid(_linear(h2, p, pre + "beta")).view(E * N, T, H).transpose(1, 2)
            o, _ = delta_chunk_kernel(q, k, v, beta, q.new_zeros(E * N, H, d, d), chunk_size=64)
        o = _norm(o.reshape(E, -1, d), p, pre + "out_norm").view(E * N, H, T, d)
    x = x + _linear(o.transpose(1, 2).reshape(E, N * T, H * d), p, pre + "out")
    if block.mlp is None:
        return x
    return x + _linear(F.gelu(_linear(_norm(x, p, pre + "mlp.0"), p, pre + "mlp.1")), p, pre + "mlp.3")


def _stacked_logits(model: TinyTransformer, p: Mapping[str, torch.Tensor], tokens: torch.Tensor) -> torch.Tensor:
    """:meth:`TinyTransformer.forward` of E models of ``model``'s configuration with stacked parameters ``p``:
    tokens (E, N, T) long -> logits (E, N·T, vocab_size); model e reads sequences ``tokens[e]``."""
    E, N, T = tokens.shape
    table = p["embed.weight"]                                                    # (E, vocab, d_model)
    offsets = torch.arange(E, device=tokens.device)[:, None, None] * table.shape[1]
    x = F.embedding(tokens + offsets, table.flatten(0, 1)).view(E, N * T, -1)   # row e·vocab + id of table e
    for i, block in enumerate(model.blocks):
        x = _stacked_block(cast(Block, block), p, f"blocks.{i}.", x, N, T)
    return _linear(_norm(x, p, "ln_f"), p, "readout")


def _stacked_losses(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Each model's mean cross-entropy over its answer positions: logits (E, M, V), targets (E, M) -> (E,)."""
    losses = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=IGNORE, reduction="none")
    return losses.view(targets.shape).sum(-1) / (targets != IGNORE).sum(-1)


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
    forward and backward passes are one pass over stacked parameters ``(E, ...)`` (one batched product per
    layer instead of E), which is faster than E runs for the notebooks' tiny models. At the end each model
    holds its trained weights.

    Returns one history per model, as :func:`train_recall` returns (``seconds`` is the wall time of the joint
    run until that model stopped).
    """
    task = _check_training(steps=steps, batch_size=batch_size, eval_every=eval_every, eval_size=eval_size,
                           warmup=warmup, seed=0, lr=lr, target_accuracy=target_accuracy, task_kwargs=task_kwargs,
                           task=task)
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
    from tqdm.auto import tqdm

    device = next(models[0].parameters()).device if device is None else check_device("device", device)
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
    if not bool(answers.any(-1).all()):
        raise ValueError("batch: expected at least one answer position in every held-out batch, got none")
    generators = [torch.Generator().manual_seed(s) for s in seeds]
    params = _stack(models)
    opt = torch.optim.AdamW(params.values(), lr=lr, weight_decay=weight_decay, foreach=True)
    active = list(range(E))                                            # the models still training, in stack order
    histories: list[dict[str, Any]] = [{"step": [], "loss": [], "accuracy": []} for _ in models]
    start, running, count = time.perf_counter(), [0.0] * E, 0
    bar = tqdm(range(1, steps + 1), disable=not progress, desc=f"training {E} models", leave=False)
    for step in bar:
        batches = [task(batch_size, **task_kwargs, generator=generators[e], device=device) for e in active]
        tokens, targets = torch.stack([b.tokens for b in batches]), torch.stack([b.targets for b in batches])
        losses = _stacked_losses(_stacked_logits(models[0], params, tokens), targets.flatten(1))
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
            predicted = _stacked_logits(models[0], params, eval_tokens[keep]).argmax(-1)
            hits = ((predicted == eval_targets[keep]) & answers[keep]).sum(-1)
            accuracies = (hits.float() / answers[keep].sum(-1).float()).tolist()
        stopped = []
        for j, (e, acc) in enumerate(zip(active, accuracies, strict=True)):
            h = histories[e]
            h["step"].append(step)
            h["loss"].append(running[j] / count)
            h["accuracy"].append(acc)
            if (target_accuracy is not None and acc >= target_accuracy) or step == steps:
                _unstack(models[e], params, j)
                h.update(final_accuracy=acc, steps_run=step, parameters=count_parameters(models[e]),
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


def depth_width_configs(budget: int = 4, *, d_model: int = 32, d_head: int = 8,
                        mlp_ratio: int = 2, width_control: bool = False,
                        deep_layers: int | None = None) -> dict[str, dict[str, int]]:
    """Shapes with the same number of head dimensions and (up to LayerNorms and biases) the same parameters.

    ``"wide-shallow"``: 1 layer of ``budget`` heads and one MLP ``budget·mlp_ratio`` wide;
    ``"narrow-deep"``: ``budget`` layers of 1 head, each with an MLP ``mlp_ratio`` wide (with
    ``deep_layers = L``, a divisor of ``budget``: L layers of ``budget / L`` heads and MLPs
    ``budget·mlp_ratio / L`` wide);
    with ``width_control``, also ``"one-big-head"``: 1 layer of one head of ``budget·d_head`` dimensions
    (the same projections as wide-shallow, undivided: it separates "more heads" from "more width").
    Returns keyword dicts for :class:`TinyTransformer` (add ``vocab_size`` and ``attention``).
    """
    check_int("budget", budget, low=1)
    common = dict(d_model=check_int("d_model", d_model, low=1), d_head=check_int("d_head", d_head, low=1))
    check_int("mlp_ratio", mlp_ratio, low=1)
    L = budget if deep_layers is None else check_int("deep_layers", deep_layers, low=1)
    if budget % L:
        raise ValueError(f"deep_layers: expected a divisor of budget = {budget}, got {L}")
    configs = {"wide-shallow": dict(n_layers=1, n_heads=budget, mlp_ratio=budget * mlp_ratio, **common),
               "narrow-deep": dict(n_layers=L, n_heads=budget // L, mlp_ratio=budget * mlp_ratio // L, **common)}
    if width_control:
        configs["one-big-head"] = dict(n_layers=1, n_heads=1, mlp_ratio=budget * mlp_ratio, d_model=d_model,
                                       d_head=budget * d_head)
    return configs


def steps_to_threshold(history: Mapping[str, Any], threshold: float) -> int | None:
    """The first evaluated training step whose held-out accuracy reaches ``threshold`` (None if never):
    the speed of learning, reported apart from the final accuracy."""
    check_real("threshold", threshold, low=0.0, high=1.0)
    if not isinstance(history, Mapping) or not {"step", "accuracy"} <= set(history):
        keys = f" with keys {sorted(history)}" if isinstance(history, Mapping) else ""
        raise TypeError("history: expected the dict train_recall returns (with 'step' and 'accuracy' lists), got "
                        f"{type(history).__name__}{keys}")
    return next((s for s, a in zip(history["step"], history["accuracy"], strict=True) if a >= threshold), None)


def train_configs(configs: Mapping[str, Mapping[str, Any]], *, vocab_size: int, attention: str = "linear",
                  seeds: Sequence[int] = (0,), progress: bool = True, **train_kwargs: Any) -> dict[str, list[dict]]:
    """Train one :class:`TinyTransformer` per (config, seed), the seeds of a config together
    (:func:`train_recall_batched`: the same training as one :func:`train_recall` per seed, up to rounding).

    ``configs`` maps a name to model keywords (e.g. :func:`depth_width_configs`); each model is
    initialised and trained with the same seed. Returns ``{name: [history per seed]}``; each history
    also records ``"parameters"``.
    """
    if not isinstance(configs, Mapping) or not all(isinstance(c, Mapping) for c in configs.values()):
        raise TypeError("configs: expected a dict {name: TinyTransformer keywords} such as depth_width_configs(), "
                        f"got {type(configs).__name__} {str(configs)[:60]}")
    from tqdm.auto import tqdm

    out: dict[str, list[dict]] = {name: [] for name in configs}
    for name in tqdm(list(configs) if seeds else [], disable=not progress, desc="configurations"):
        nets = [TinyTransformer(vocab_size, attention=attention, seed=seed, **configs[name]) for seed in seeds]
        out[name] = train_recall_batched(nets, seeds=seeds, progress=progress, **train_kwargs)
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
                                     target_accuracy=target_accuracy, progress=False, **train_kwargs)
        out[a] = [{"model": m.eval(), "history": h} for m, h in zip(nets, hists, strict=True)]
    return out


__all__ = ["ATTENTIONS", "Block", "TinyTransformer", "count_parameters", "depth_width_configs", "evaluate",
           "steps_to_threshold", "train_configs", "train_models", "train_recall", "train_recall_batched"]
