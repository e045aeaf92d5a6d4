"""Measuring conditioning in memories and trained models: responses, effects, verdicts.

The designs (:mod:`pavlovlab.phenomena.sequences`) are token sequences: a design arm and a control arm that differ
only in the variable the theory says matters. This module feeds them to a trained
:class:`~pavlovlab.models.TinyTransformer` (:func:`model_logits`, :func:`model_response`) or to a
hand-built :class:`~pavlovlab.memory.AssociativeMemory` (:func:`memory_response`), turns the paired
responses into effects (:func:`effects`: positive when Rescorla–Wagner's prediction holds) and compares
them with the predictions (:func:`verdicts`, with the intervals of :func:`pavlovlab.statistics.summarize`).

Responses: for a trained model, the *centred logit* of ``o`` at the test query, ``z_o − mean_j z_j``
(nats of odds; :func:`model_response`), or the norm of the attention read-out before the per-head
LayerNorm (:func:`readout_norm`); for a hand-built memory (random unit keys per cue token, compounds
as unit-normalised sums, one-hot outcomes), the read-out's component on ``o``, i.e. the associative
strength ``V`` (or its cosine with ``o``). :func:`separation_verdicts` judges the predictions that
separate DeltaNet from linear attention. What a trained linear-attention head stores is read in
:mod:`pavlovlab.models.head_memory`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

import torch
import torch.nn.functional as F

from .._checks import check_choice, check_int, check_real, check_tensor, checked_by, unchecked, warn_nonfinite
from ..memory.associative import AssociativeMemory
from ..models.transformer import Block, TinyTransformer, _check_model
from ..statistics import Effect, _check_spread, summarize
from .sequences import COMPOUNDS, DESIGNS, PREDICTIONS, SEPARATING, ProbeBatch, _check_probes, _make_probes, _read

_summarize = unchecked(summarize)

_AGREES = {"effect": {"effect"}, "none": {"none", "small"}, "size only": {"effect", "small", "none"}}


def _check_token_weights(model: TinyTransformer, weights: torch.Tensor) -> None:
    """Token weights (N, T, V) over the model's vocabulary."""
    check_tensor("weights", weights, rank=3)
    if weights.shape[-1] != model.embed.weight.shape[0]:
        raise ValueError(f"weights: expected last dim = vocab_size {model.embed.weight.shape[0]}, got "
                         f"{weights.shape[-1]}")


@checked_by(_check_token_weights)
def model_logits(model: TinyTransformer, weights: torch.Tensor) -> torch.Tensor:
    """Run a :class:`~pavlovlab.models.TinyTransformer` on token weights instead of token ids.

    weights: (N, T, V), rows one-hot (the model's ordinary input) or sums of one-hots (compound cues).
    The input embedding is ``weights @ E`` (E the model's embedding table), then the model's blocks,
    final LayerNorm and read-out, as in ``model.forward``. Returns logits (N, T, V).
    """
    E = model.embed.weight
    x = weights.to(E) @ E
    for block in model.blocks:
        x = block(x)
    return model.readout(model.ln_f(x))


_model_logits = unchecked(model_logits)


def _check_outcome(model: TinyTransformer, weights: torch.Tensor, outcome: torch.Tensor) -> None:
    """The outcome token ids (N,) of token weights (N, T, V) over the model's vocabulary."""
    V = model.embed.weight.shape[0]
    if not isinstance(outcome, torch.Tensor) or outcome.dtype != torch.long or outcome.shape != weights.shape[:1]:
        raise TypeError(f"outcome: expected a long tensor (N,) = ({weights.shape[0]},) of token ids, got "
                        f"{getattr(outcome, 'dtype', type(outcome).__name__)} of shape "
                        f"{tuple(getattr(outcome, 'shape', ()))}")
    if outcome.numel() and (int(outcome.min()) < 0 or int(outcome.max()) >= V):
        raise ValueError(f"outcome: expected token ids in [0, vocab_size = {V}), got ids from {int(outcome.min())} "
                         f"to {int(outcome.max())}")
    _check_token_weights(model, weights)


@checked_by(_check_outcome)
@torch.no_grad()
def model_response(model: TinyTransformer, weights: torch.Tensor, outcome: torch.Tensor) -> torch.Tensor:
    """The model's response to the test query, (N,): the *centred logit* of ``outcome`` at the last
    position, ``z_o − mean_j z_j`` (nats of odds). Unlike ``log p(o)``, which saturates at 0 once the
    model is sure, it keeps growing with the evidence, like an associative strength."""
    was = model.training
    model.eval()
    z = _model_logits(model, weights)[:, -1]
    model.train(was)
    z = z - z.mean(-1, keepdim=True)
    return z.gather(-1, outcome[:, None].to(z.device))[:, 0]


_model_response = unchecked(model_response)


def _check_layer(model: TinyTransformer, layer: int) -> int:
    """One of the model's layers (as an int)."""
    layer = check_int("layer", layer, low=0)
    if layer >= len(model.blocks):
        raise ValueError(f"layer: expected < n_layers = {len(model.blocks)}, got {layer}")
    return layer


def _check_normalised(model: TinyTransformer, layer: int) -> None:
    """One of the model's layers, with a per-head LayerNorm (linear or delta attention)."""
    if cast(Block, model.blocks[_check_layer(model, layer)]).out_norm is None:
        raise ValueError(f"model: expected linear or delta attention (a per-head LayerNorm), got "
                         f"{model.config['attention']!r}")


def _check_normalised_layer(model: TinyTransformer, weights: torch.Tensor, layer: int) -> None:
    """A model, token weights and one of its layers with a per-head LayerNorm."""
    _check_model(model)
    check_tensor("weights", weights, rank=3)
    _check_normalised(model, layer)


@checked_by(_check_normalised_layer)
@torch.no_grad()
def readout_norm(model: TinyTransformer, weights: torch.Tensor, layer: int = 0) -> torch.Tensor:
    """The size of a block's attention read-out at the test query, before each head's LayerNorm, (N,).

    In linear and delta blocks every head's read-out ``o_h = S_h q_h`` (d_head) passes a LayerNorm, which
    ignores its size (``LN(c o) = LN(o)`` for c > 0; it also removes the mean and applies an affine map); this
    returns ``‖(o_1, …, o_H)‖`` at the last position
    (the norm over all heads' read-outs together), computed by the model's own forward pass on
    ``weights`` (N, T, V) (see :func:`model_logits`). Softmax blocks have no such normalisation.
    """
    norm_layer = cast(torch.nn.LayerNorm, cast(Block, model.blocks[layer]).out_norm)   # not None: checked
    seen: list[torch.Tensor] = []
    hook = norm_layer.register_forward_pre_hook(lambda _m, args: seen.append(args[0][:, :, -1]))
    was = model.training
    model.eval()
    try:
        _model_logits(model, weights)
    finally:
        hook.remove()
        model.train(was)
    return seen[0].flatten(1).norm(dim=-1)                       # (N, H, d_head) -> (N,)


_readout_norm = unchecked(readout_norm)


def _check_keyed_layer(model: TinyTransformer, n_keys: int, layer: int) -> dict[str, object]:
    """A model with unit keys (linear or delta attention), one of its layers and 2 <= n_keys < vocab_size (as an
    int)."""
    _check_model(model)
    _check_layer(model, layer)
    if model.config["attention"] == "softmax":
        raise ValueError("model: expected linear or delta attention (unit keys), got 'softmax'")
    return {"n_keys": check_int("n_keys", n_keys, low=2, high=model.embed.weight.shape[0] - 1)}


@checked_by(_check_keyed_layer)
@torch.no_grad()
def compound_key_cosine(model: TinyTransformer, n_keys: int, layer: int = 0) -> torch.Tensor:
    """How a trained block keys a compound AB: the cosine between its unit key and the key of the cue A alone.

    A compound AB is one position whose input is the sum of A's and B's embeddings (:func:`model_logits`); the
    block's LayerNorm, its token shift ``[x_t, x_{t−1}]`` and the key projection follow, and linear and delta
    blocks normalise the key. For orthogonal unit cue keys and a key linear in the input the cosine would be
    ``1/√2``; but LayerNorm removes the input's mean and applies an affine map, and the previous token enters
    the key too, so a trained block can differ. Every ordered pair of distinct cue tokens ``a, b < n_keys`` is
    placed after every outcome token (ids ``n_keys … V − 1``, the previous token in the designs' sequences).
    Returns (pairs · outcomes, H) cosines ``k_AB · k_A``.
    """
    E = model.embed.weight
    V = E.shape[0]
    a, b = torch.meshgrid(torch.arange(n_keys), torch.arange(n_keys), indexing="ij")
    a, b = a[a != b], b[a != b]
    prev = torch.arange(n_keys, V)
    a, b, p = a.repeat_interleave(len(prev)), b.repeat_interleave(len(prev)), prev.repeat(len(a))

    def key(cur: torch.Tensor) -> torch.Tensor:                        # cur (M, d_model), after the outcome p
        h = torch.stack([E[p], cur], 1)                                # (M, 2, d_model)
        for blk in model.blocks[:layer]:
            h = blk(h)
        blk = cast(Block, model.blocks[layer])
        z = blk.ln1(h)
        z2 = torch.cat([z, F.pad(z, (0, 0, 1, 0))[:, :-1]], dim=-1)[:, 1]
        k = blk.qkv(z2).view(len(z2), 3, blk.n_heads, blk.d_head)[:, 1]
        return F.normalize(k, dim=-1)                                  # (M, H, d_head)

    return (key(E[a] + E[b]) * key(E[a])).sum(-1)


def _check_circuit(n_keys: int, rule: str, lr: float, d_key: int, compound: str) -> None:
    """The hand-built memory of :func:`memory_response`: its key tokens, rule, rate, key size and compounds."""
    check_int("n_keys", n_keys, low=1)
    check_choice("rule", rule, ("hebbian", "delta"))
    check_real("lr", lr, low=0.0, low_open=True)
    check_int("d_key", d_key, low=1)
    check_choice("compound", compound, COMPOUNDS)


def _check_memory_response(weights: torch.Tensor, outcome: torch.Tensor, n_keys: int, rule: str, lr: float,
                           d_key: int, compound: str) -> None:
    """Token weights (N, T, V), the hand-built memory of :func:`memory_response`, and one outcome per sequence:
    a value token, in [n_keys, V)."""
    check_tensor("weights", weights, rank=3)
    _check_circuit(n_keys, rule, lr, d_key, compound)
    N, _, V = weights.shape
    if not isinstance(outcome, torch.Tensor) or outcome.is_floating_point() or outcome.dtype == torch.bool:
        raise TypeError(f"outcome: expected a tensor of token indices such as batch.outcome, got "
                        f"{getattr(outcome, 'dtype', type(outcome).__name__)}")
    if tuple(outcome.shape) != (N,):
        raise ValueError(f"outcome: expected shape ({N},), one value token per sequence of weights, got "
                         f"{tuple(outcome.shape)}")
    if N and not (n_keys <= int(outcome.min()) and int(outcome.max()) < V):
        raise ValueError(f"outcome: expected value tokens in [{n_keys}, {V}) (after the n_keys key tokens), got "
                         f"tokens from {int(outcome.min())} to {int(outcome.max())}")


@checked_by(_check_memory_response)
def memory_response(weights: torch.Tensor, outcome: torch.Tensor, n_keys: int, *, rule: str = "delta",
                    lr: float = 0.5, d_key: int = 64, normalize: bool = False, compound: str = "unit",
                    generator: torch.Generator | None = None) -> torch.Tensor:
    """The same probe on a hand-built circuit: an :class:`~pavlovlab.memory.AssociativeMemory`.

    Each key token gets a random unit key in ``d_key`` dims (drawn on ``generator``), a compound the sum
    of its cues' keys, normalised to unit norm with ``compound="unit"`` (as in the trained models, whose
    q and k are L2-normalised) or left as the sum with ``compound="sum"`` (Rescorla–Wagner's additive
    compound); each value token a one-hot value (d_v = number of value tokens). Every (cue,
    outcome) pair of the sequence is written in order with the memory's ``rule`` (``"hebbian"``:
    ``S += lr v kᵀ``; ``"delta"``: ``S += lr (v − S k) kᵀ``), then the test cue reads ``S q``.
    Returns the read-out's component on ``outcome`` (the associative strength), shape (N,); with
    ``normalize=True``, that component divided by the read-out's norm (its cosine with ``o``): what is
    left when, as in the trained models, each head's read-out passes a normalisation (LayerNorm)
    that ignores its size (it also removes the mean and applies an affine map, which this does not model).
    The memory runs in float64 on the CPU (a few hundred small sequences); the result comes back on
    ``weights``' device and dtype.
    """
    N, T, V = weights.shape
    K = F.normalize(torch.randn(n_keys, d_key, generator=generator, dtype=torch.float64), dim=-1)
    w = weights.double().cpu()
    k = w[:, 0:T - 1:2, :n_keys] @ K                          # (N, P, d_key): cue keys, compounds summed
    v = w[:, 1:T - 1:2, n_keys:]                               # (N, P, n_values): one-hot outcomes
    q = w[:, -1, :n_keys] @ K                                  # (N, d_key)
    if compound == "unit":
        k, q = F.normalize(k, dim=-1), F.normalize(q, dim=-1)
    mem = AssociativeMemory(d_key, V - n_keys, rule=rule, lr=lr, batch_shape=(N,), dtype=torch.float64)
    mem.write(k, v)
    read = _read(mem, q)                                       # (N, n_values)
    if normalize:
        read = read / read.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    return read.gather(-1, (outcome.cpu() - n_keys)[:, None])[:, 0].to(device=weights.device, dtype=weights.dtype)


_memory_response = unchecked(memory_response)


def _check_response(batch: ProbeBatch, respond: Callable[[torch.Tensor], torch.Tensor]) -> None:
    """A :class:`ProbeBatch` and a function weights -> (N,) responses."""
    if not isinstance(batch, ProbeBatch):
        raise TypeError(f"batch: expected a ProbeBatch from sequences.make_probes, got {type(batch).__name__}")
    if not callable(respond):
        raise TypeError(f"respond: expected a function weights -> (N,) responses, got {type(respond).__name__}")


_RESPONSES_OVERFLOW = "respond returned NaN/inf, or its responses overflow the dtype"
"""Why :func:`effects` can be NaN/inf for a finite batch."""


@checked_by(_check_response, nonfinite=_RESPONSES_OVERFLOW)
def effects(batch: ProbeBatch, respond: Callable[[torch.Tensor], torch.Tensor]) -> torch.Tensor:
    """Paired effects (N,): ``respond(design) − respond(control)``, sign-flipped when the design arm is
    predicted to respond less, so that a positive effect is Rescorla–Wagner's phenomenon.
    ``respond(weights) -> (N,)`` is e.g. ``lambda w: model_response(model, w, batch.outcome)``."""
    diff = respond(batch.design) - respond(batch.control)
    return diff if batch.design_higher else -diff


_effects = unchecked(effects)


# ---------------------------------------------------------------------------------------------- experiments

def _check_circuit_effects(design: str, rule: str, n: int, m: int, lr: float, d_key: int, n_pairs: int,
                           compound: str, seed: int) -> dict[str, object]:
    """The seed (as an int), the probes (16 key and 16 value tokens; n and m as ints) and the memory of
    :func:`circuit_effects`."""
    seed = check_int("seed", seed, low=0)
    probes = _check_probes(design, n, m, n_pairs, 16, 16, None)
    _check_circuit(16, rule, lr, d_key, compound)
    return {"seed": seed, **probes}


@checked_by(_check_circuit_effects)
def circuit_effects(design: str, *, rule: str, n: int = 400, m: int = 2, lr: float = 0.5, d_key: int = 64,
                    n_pairs: int = 8, normalize: bool = False, compound: str = "unit", seed: int = 0) -> torch.Tensor:
    """Effects (N,) of ``design`` on the hand-built memory with ``rule`` (see :func:`memory_response`;
    ``normalize=True`` probes the read-out's direction only; ``compound`` as there)."""
    g = torch.Generator().manual_seed(seed)
    batch = _make_probes(design, n, m=m, n_pairs=n_pairs, n_keys=16, n_values=16, generator=g, dtype=torch.float64)
    gk = torch.Generator().manual_seed(seed + 1)
    state = gk.get_state()

    def respond(w: torch.Tensor) -> torch.Tensor:
        gk.set_state(state)                                        # the same keys for design and control
        return _memory_response(w, batch.outcome, batch.n_keys, rule=rule, lr=lr, d_key=d_key, normalize=normalize,
                                compound=compound, generator=gk)

    return warn_nonfinite("effects", _effects(batch, respond), "the memory's responses overflow the dtype")


def _check_runs(runs: Mapping[str, Sequence[Mapping[str, Any]]], designs: Sequence[str], n: int, m: int,
                n_pairs: int, measure: str) -> dict[str, object]:
    """Trained runs {attention: [{"model": TinyTransformer, ...} per seed]}, designs of :data:`DESIGNS`, the
    measure, and the probes for each model's vocabulary (n and m as ints; the norm of linear and delta models
    only)."""
    if not isinstance(runs, Mapping):
        raise TypeError(f"runs: expected {{attention: [{{'model': TinyTransformer, ...}} per seed]}} as "
                        f"training.train_models returns, got {type(runs).__name__}")
    for a, rs in runs.items():
        for i, r in enumerate(rs):
            if not isinstance(r, Mapping) or not isinstance(r.get("model"), TinyTransformer):
                raise TypeError(f"runs[{a!r}][{i}]: expected a dict with a TinyTransformer under 'model', got "
                                f"{type(r.get('model') if isinstance(r, Mapping) else r).__name__}")
    for d in designs:
        check_choice("designs", d, DESIGNS)
    checked: dict[str, object] = {"measure": check_choice("measure", measure, ("response", "norm"))}
    for rs in runs.values():
        for d in designs:
            for r in rs:
                V = r["model"].config["vocab_size"]
                checked |= _check_probes(d, n, m, n_pairs, V // 2, V - V // 2, None)
                if measure == "norm":
                    _check_normalised(r["model"], 0)
    return checked


@checked_by(_check_runs)
def model_effects(runs: Mapping[str, Sequence[Mapping[str, Any]]], designs: Sequence[str] = DESIGNS, *,
                  n: int = 500, m: int = 2, n_pairs: int = 8, seed: int = 123,
                  measure: str = "response") -> dict[str, dict[str, torch.Tensor]]:
    """Effects of each design on each trained model: ``{attention: {design: (seeds, n)}}``.

    Every model sees the same ``n`` sequences per design (drawn from ``seed``); vocabulary sizes are
    read from the model's config (the recall task's ``n_keys = n_values = vocab/2``).
    ``measure="response"``: the signed effects of :func:`effects` on :func:`model_response`;
    ``measure="norm"``: ``log(‖o_design‖ / ‖o_control‖)`` per sequence, the log-ratio of the read-out
    norms before the per-head LayerNorm (:func:`readout_norm`; linear and delta models only).
    """
    out: dict[str, dict[str, torch.Tensor]] = {}
    for a, rs in runs.items():
        out[a] = {}
        for d in designs:
            per_seed = []
            for r in rs:
                model = r["model"]
                V = model.config["vocab_size"]
                g = torch.Generator().manual_seed(seed + DESIGNS.index(d))
                device = next(model.parameters()).device
                batch = _make_probes(d, n, m=m, n_pairs=n_pairs, n_keys=V // 2, n_values=V - V // 2, generator=g,
                                     device=device)
                if measure == "norm":
                    ratio = _readout_norm(model, batch.design) / _readout_norm(model, batch.control)
                    per_seed.append(ratio.log().cpu())
                else:
                    respond = functools.partial(_model_response, model, outcome=batch.outcome)
                    per_seed.append(warn_nonfinite("effects", _effects(batch, respond), _RESPONSES_OVERFLOW).cpu())
            out[a][d] = torch.stack(per_seed)
    return out


def _check_seeds(results: Mapping[str, torch.Tensor], design: str) -> None:
    """As many seeds (rows) in a design's effects as in acquisition's."""
    if results[design].shape[0] != results["acquisition"].shape[0]:
        raise ValueError(f"results: expected as many seeds for {design!r} as for acquisition, got "
                         f"{results[design].shape[0]} and {results['acquisition'].shape[0]}")


def _check_relative_effects(results: Mapping[str, torch.Tensor], design: str) -> None:
    """Effects {design: (seeds, N)} of ``design`` and of acquisition, with as many seeds for each."""
    if not isinstance(results, Mapping):
        raise TypeError(f"results: expected {{design: effects (seeds, N)}}, got {type(results).__name__}")
    for d in (design, "acquisition"):
        if d not in results:
            raise ValueError(f"results: expected effects for {d!r}, got designs {sorted(results)}")
        check_tensor(f"results[{d!r}]", results[d], rank=2)
    _check_seeds(results, design)


@checked_by(_check_relative_effects)
def relative_effects(results: Mapping[str, torch.Tensor], design: str) -> Effect:
    """A design's effect in units of the same model's acquisition effect, with its 95 % interval.

    ``results[design]`` and ``results["acquisition"]`` are effects (seeds, N) on the same models. Per
    seed ``r_s = mean(effect_s) / mean(acquisition_s)``; with S ≥ 2 seeds the interval is the
    t-interval of the r_s (so the scale's own uncertainty is in it), with one seed the sequence-level
    interval of ``effect / mean(acquisition)``.
    """
    x, acq = results[design].double(), results["acquisition"].double()
    # summarize, checked, refuses ratios made NaN/inf by an acquisition mean of 0, which only this division shows
    if x.shape[0] >= 2:
        return summarize((x.mean(-1) / acq.mean(-1))[:, None])
    return summarize(x / acq.mean())


_relative_effects = unchecked(relative_effects)


def _check_verdicts(results: Mapping[str, Mapping[str, torch.Tensor]], predictions: Mapping[str, Mapping[str, str]],
                    margin_fraction: float) -> None:
    """Effects (seeds, N) per attention and design, each with a prediction and a spread (2 seeds or 2 sequences),
    as many seeds as acquisition's, and a margin >= 0."""
    for a, per in results.items():
        for d, x in per.items():
            check_tensor(f"results[{a!r}][{d!r}]", x, rank=2)
            if d not in predictions or a not in predictions[d]:
                raise ValueError(f"results[{a!r}][{d!r}]: expected a design and attention with a prediction "
                                 f"(predictions[{d!r}][{a!r}]), got none")
    check_real("margin_fraction", margin_fraction, low=0.0)
    for per in results.values():
        if "acquisition" in per:
            _check_spread(per["acquisition"])
        for d, x in per.items():
            _check_spread(x)
            if d != "acquisition" and "acquisition" in per:
                _check_seeds(per, d)


@checked_by(_check_verdicts)
def verdicts(results: Mapping[str, Mapping[str, torch.Tensor]], predictions: Mapping[str, Mapping[str, str]]
             = PREDICTIONS, *, margin_fraction: float = 0.1) -> list[dict[str, Any]]:
    """A row per (attention, design): the effect, the prediction, what was observed, and whether they agree.

    ``results[attention][design]`` are effects (seeds, N). An effect is judged in units of the model's own
    acquisition effect (:func:`relative_effects`, interval across seeds): ``margin_fraction`` of
    acquisition counts as negligible (see :meth:`Effect.observed`); acquisition itself is judged against 0.
    ``holds``: True when the observation agrees with the prediction (``"effect"``: an effect above the
    margin; ``"none"``: none or small; ``"size only"``: anything but reversed, the size being unpredicted),
    False when it contradicts it, None when inconclusive. Each row also carries ``margin``, the margin in
    nats, with ``margin_lo``/``margin_hi`` from acquisition's interval.
    """
    rows = []
    for a, per in results.items():
        acq = _summarize(per["acquisition"]) if "acquisition" in per else None
        for d, x in per.items():
            e = _summarize(x)
            rel = e if d == "acquisition" or acq is None else _relative_effects(per, d)
            obs = e.observed(0.0) if d == "acquisition" else rel.observed(margin_fraction)
            pred = predictions[d][a]
            holds = None if obs == "inconclusive" else (obs in _AGREES[pred])
            rows.append(dict(attention=a, design=d, predicted=pred, observed=obs, holds=holds, effect=e,
                             relative=rel, margin=margin_fraction * acq.mean if acq else 0.0,
                             margin_lo=margin_fraction * acq.lo if acq else 0.0,
                             margin_hi=margin_fraction * acq.hi if acq else 0.0))
    return rows


def _check_log_ratios(log_ratios: torch.Tensor) -> None:
    """Log-ratios (seeds, N) with a spread (2 seeds or 2 sequences)."""
    check_tensor("log_ratios", log_ratios, rank=2)
    _check_spread(log_ratios)


@checked_by(_check_log_ratios)
def size_loss(log_ratios: torch.Tensor) -> Effect:
    """The fraction of the read-out's size a design removes, ``1 − ‖o_design‖/‖o_control‖``, with its 95 %
    interval, from log-ratios (seeds, N) (``model_effects(..., measure="norm")``): per seed the geometric
    mean ratio ``exp(mean log-ratio)``; the t-interval across seeds (sequence-level with one seed)."""
    e = _summarize(log_ratios)
    return Effect(1 - math.exp(e.mean), 1 - math.exp(e.hi), 1 - math.exp(e.lo),
                  tuple(1 - math.exp(v) for v in e.seed_means), e.n_sequences)


_size_loss = unchecked(size_loss)


def _check_separation(responses: Mapping[str, Mapping[str, torch.Tensor]],
                      norms: Mapping[str, Mapping[str, torch.Tensor]], threshold: float,
                      designs: Mapping[str, str]) -> dict[str, object]:
    """The mappings of :func:`separation_verdicts`, each design read from ``"response"`` (the effects of
    :func:`relative_effects`) or ``"norm"`` (the log-ratios of :func:`size_loss`) of the delta and linear models,
    and a threshold > 0 (as a float)."""
    threshold = check_real("threshold", threshold, low=0.0, low_open=True)
    for name, given in (("responses", responses), ("norms", norms), ("designs", designs)):
        if not isinstance(given, Mapping):
            raise TypeError(f"{name}: expected a mapping, got {type(given).__name__}")
    for where in designs.values():
        check_choice("designs", where, ("response", "norm"))
    for d, where in designs.items():
        for a in ("delta", "linear"):
            if where == "response":
                _check_relative_effects(_check_entry("responses", responses, a), d)
            else:
                _check_log_ratios(_check_entry(f"norms[{a!r}]", _check_entry("norms", norms, a), d))
    return {"threshold": threshold}


def _check_entry(name: str, given: Mapping[str, Any], key: str) -> Any:
    """``given[key]``, or a ValueError naming the mapping and what it lacks (a model, or a design's entry)."""
    if key not in given:
        raise ValueError(f"{name}: expected an entry {key!r} (the delta and linear models' measurements, by "
                         f"design), got the keys {sorted(given)}")
    return given[key]


@checked_by(_check_separation)
def separation_verdicts(responses: Mapping[str, Mapping[str, torch.Tensor]],
                        norms: Mapping[str, Mapping[str, torch.Tensor]], *, threshold: float = 0.1,
                        designs: Mapping[str, str] = SEPARATING) -> list[dict[str, Any]]:
    """The verdict on each prediction that separates DeltaNet from linear attention.

    For each design of ``designs`` (design -> ``"response"`` or ``"norm"``) the measured quantity is, per
    model, the effect in units of acquisition (:func:`relative_effects` on ``responses``) or the fraction of
    the read-out's size removed (:func:`size_loss` on ``norms``), each with its 95 % interval across seeds.
    The rule, fixed before measuring: the prediction (DeltaNet shows the phenomenon, linear attention does
    not) **holds** if DeltaNet's interval lies above ``threshold`` and linear attention's inside
    (−threshold, threshold); it **fails** if DeltaNet's interval lies below ``threshold`` or linear
    attention's above it; otherwise it is **inconclusive** (``holds`` None).
    """
    rows = []
    for d, where in designs.items():
        q = {a: _relative_effects(responses[a], d) if where == "response" else
             _size_loss(norms[a][d]) for a in ("delta", "linear")}
        dl, li = q["delta"], q["linear"]
        if dl.lo > threshold and -threshold < li.lo and li.hi < threshold:
            holds: bool | None = True
        elif dl.hi < threshold or li.lo > threshold:
            holds = False
        else:
            holds = None
        rows.append(dict(design=d, readout=where, delta=dl, linear=li, holds=holds, threshold=threshold))
    return rows


__all__ = [
    "circuit_effects",
    "compound_key_cosine",
    "effects",
    "memory_response",
    "model_effects",
    "model_logits",
    "model_response",
    "readout_norm",
    "relative_effects",
    "separation_verdicts",
    "size_loss",
    "verdicts",
]
