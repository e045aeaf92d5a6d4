"""Measuring conditioning in memories and trained models: responses, effects, verdicts, head states.

The designs (:mod:`pavlovlab.designs`) are token sequences: a design arm and a control arm that differ
only in the variable the theory says matters. This module feeds them to a trained
:class:`~pavlovlab.models.TinyTransformer` (:func:`model_logits`, :func:`model_response`) or to a
hand-built :class:`~pavlovlab.memory.AssociativeMemory` (:func:`memory_response`), turns the paired
responses into effects (:func:`effects`: positive when Rescorla–Wagner's prediction holds) and compares
them with the predictions (:func:`verdicts`, with the intervals of :func:`pavlovlab.statistics.summarize`).

Responses: for a trained model, the centred logit of ``o`` at the test query (nats); for a hand-built
memory (random unit keys per cue token, compounds summed, one-hot outcomes), the read-out's component
on ``o``, i.e. the associative strength ``V``. :func:`head_states` and :func:`trained_head_overlaps`
open a trained linear-attention head and read the Hebbian memory inside it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

import torch
import torch.nn.functional as F

from ._checks import check_choice, check_int, check_real, check_tensor
from .designs import DESIGNS, PREDICTIONS, ProbeBatch, make_probes
from .memory import AssociativeMemory
from .models import Block, TinyTransformer
from .statistics import summarize
from .tasks import associative_recall

_AGREES = {"effect": {"effect"}, "none": {"none", "small"}}


def model_logits(model: TinyTransformer, weights: torch.Tensor) -> torch.Tensor:
    """Run a :class:`~pavlovlab.models.TinyTransformer` on token weights instead of token ids.

    weights: (N, T, V), rows one-hot (the model's ordinary input) or sums of one-hots (compound cues).
    The input embedding is ``weights @ E`` (E the model's embedding table), then the model's blocks,
    final LayerNorm and read-out, as in ``model.forward``. Returns logits (N, T, V).
    """
    check_tensor("weights", weights, rank=3)
    E = model.embed.weight
    if weights.shape[-1] != E.shape[0]:
        raise ValueError(f"weights: expected last dim = vocab_size {E.shape[0]}, got {weights.shape[-1]}")
    x = weights.to(E) @ E
    for block in model.blocks:
        x = block(x)
    return model.readout(model.ln_f(x))


@torch.no_grad()
def model_response(model: TinyTransformer, weights: torch.Tensor, outcome: torch.Tensor) -> torch.Tensor:
    """The model's response to the test query, (N,): the *centred logit* of ``outcome`` at the last
    position, ``z_o − mean_j z_j`` (nats of odds). Unlike ``log p(o)``, which saturates at 0 once the
    model is sure, it keeps growing with the evidence, like an associative strength."""
    was = model.training
    model.eval()
    z = model_logits(model, weights)[:, -1]
    model.train(was)
    z = z - z.mean(-1, keepdim=True)
    return z.gather(-1, outcome[:, None].to(z.device))[:, 0]


def memory_response(weights: torch.Tensor, outcome: torch.Tensor, n_keys: int, *, rule: str = "delta",
                    lr: float = 0.5, d_key: int = 64, normalize: bool = False,
                    generator: torch.Generator | None = None) -> torch.Tensor:
    """The same probe on a hand-built circuit: an :class:`~pavlovlab.memory.AssociativeMemory`.

    Each key token gets a random unit key in ``d_key`` dims (drawn on ``generator``), a compound the sum
    of its cues' keys; each value token a one-hot value (d_v = number of value tokens). Every (cue,
    outcome) pair of the sequence is written in order with the memory's ``rule`` (``"hebbian"``:
    ``S += lr v kᵀ``; ``"delta"``: ``S += lr (v − S k) kᵀ``), then the test cue reads ``S q``.
    Returns the read-out's component on ``outcome`` (the associative strength), shape (N,); with
    ``normalize=True``, that component divided by the read-out's norm (its cosine with ``o``): what is
    left when, as in the trained models, each head's read-out passes a normalisation (LayerNorm)
    that keeps its direction and discards its size.
    """
    check_tensor("weights", weights, rank=3)
    check_int("n_keys", n_keys, low=1)
    # the memory runs in float64 on the CPU (a few hundred small sequences); the result comes back on
    # ``weights``' device and dtype
    check_choice("rule", rule, ("hebbian", "delta"))
    check_real("lr", lr, low=0.0, low_open=True)
    check_int("d_key", d_key, low=1)
    N, T, V = weights.shape
    K = F.normalize(torch.randn(n_keys, d_key, generator=generator, dtype=torch.float64), dim=-1)
    w = weights.double().cpu()
    k = w[:, 0:T - 1:2, :n_keys] @ K                          # (N, P, d_key): cue keys, compounds summed
    v = w[:, 1:T - 1:2, n_keys:]                               # (N, P, n_values): one-hot outcomes
    q = w[:, -1, :n_keys] @ K                                  # (N, d_key)
    mem = AssociativeMemory(d_key, V - n_keys, rule=rule, lr=lr, batch_shape=(N,), dtype=torch.float64)
    mem.write(k, v)
    read = mem.read(q)                                         # (N, n_values)
    if normalize:
        read = read / read.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    return read.gather(-1, (outcome.cpu() - n_keys)[:, None])[:, 0].to(device=weights.device, dtype=weights.dtype)


def effects(batch: ProbeBatch, respond: Callable[[torch.Tensor], torch.Tensor]) -> torch.Tensor:
    """Paired effects (N,): ``respond(design) − respond(control)``, sign-flipped when the design arm is
    predicted to respond less, so that a positive effect is Rescorla–Wagner's phenomenon.
    ``respond(weights) -> (N,)`` is e.g. ``lambda w: model_response(model, w, batch.outcome)``."""
    diff = respond(batch.design) - respond(batch.control)
    return diff if batch.design_higher else -diff


# ---------------------------------------------------------------------------------------------- experiments

def circuit_effects(design: str, *, rule: str, n: int = 400, m: int = 2, lr: float = 0.5, d_key: int = 64,
                    n_pairs: int = 8, normalize: bool = False, seed: int = 0) -> torch.Tensor:
    """Effects (N,) of ``design`` on the hand-built memory with ``rule`` (see :func:`memory_response`;
    ``normalize=True`` probes the read-out's direction only)."""
    g = torch.Generator().manual_seed(check_int("seed", seed, low=0))
    batch = make_probes(design, n, m=m, n_pairs=n_pairs, generator=g, dtype=torch.float64)
    gk = torch.Generator().manual_seed(seed + 1)
    state = gk.get_state()

    def respond(w: torch.Tensor) -> torch.Tensor:
        gk.set_state(state)                                        # the same keys for design and control
        return memory_response(w, batch.outcome, batch.n_keys, rule=rule, lr=lr, d_key=d_key,
                               normalize=normalize, generator=gk)

    return effects(batch, respond)


def model_effects(runs: Mapping[str, Sequence[Mapping[str, Any]]], designs: Sequence[str] = DESIGNS, *,
                  n: int = 500, m: int = 2, n_pairs: int = 8, seed: int = 123) -> dict[str, dict[str, torch.Tensor]]:
    """Effects of each design on each trained model: ``{attention: {design: (seeds, n)}}``.

    Every model sees the same ``n`` sequences per design (drawn from ``seed``); vocabulary sizes are
    read from the model's config (the recall task's ``n_keys = n_values = vocab/2``).
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
                batch = make_probes(d, n, m=m, n_pairs=n_pairs, n_keys=V // 2, n_values=V - V // 2, generator=g,
                                    device=device)
                per_seed.append(effects(batch, functools.partial(model_response, model, outcome=batch.outcome)).cpu())
            out[a][d] = torch.stack(per_seed)
    return out


def verdicts(results: Mapping[str, Mapping[str, torch.Tensor]], predictions: Mapping[str, Mapping[str, str]]
             = PREDICTIONS, *, margin_fraction: float = 0.1) -> list[dict[str, Any]]:
    """A verdict row per (attention, design): predicted, observed, holds.

    ``results[attention][design]`` are effects (seeds, N). The margin that counts as "no effect" is
    ``margin_fraction`` × the attention's acquisition effect (learning itself sets the scale).
    ``holds``: True when the observation agrees with the prediction ("effect" for "effect"; "none" or
    "small" for "none"), False when it contradicts it, None when inconclusive.
    """
    rows = []
    for a, per in results.items():
        margin = margin_fraction * abs(summarize(per["acquisition"]).mean) if "acquisition" in per else 0.0
        for d, x in per.items():
            e = summarize(x)
            obs = e.observed(margin)
            pred = predictions[d][a]
            holds = None if obs == "inconclusive" else (obs in _AGREES[pred])
            rows.append(dict(attention=a, design=d, predicted=pred, observed=obs, holds=holds, effect=e,
                             margin=margin))
    return rows


# ---------------------------------------------------------------------------------------------- head memory

@torch.no_grad()
def head_states(model: TinyTransformer, tokens: torch.Tensor, layer: int = 0) -> dict[str, torch.Tensor]:
    """Queries, keys, values and final state of each head of a linear-attention block.

    tokens: (N, T) long. Recomputes the block's projections as its forward does (LayerNorm, token
    shift ``[x_t, x_{t−1}]``, unit-normalised q and k). Returns ``q, k, v`` (N, H, T, d_head) and
    ``S`` (N, H, d_head, d_head) = ``Σ_t v_t k_tᵀ``, the Hebbian memory after the whole sequence.
    """
    if not isinstance(tokens, torch.Tensor) or tokens.dtype != torch.long or tokens.dim() != 2:
        raise TypeError(f"tokens: expected a (N, T) long tensor, got {getattr(tokens, 'dtype', type(tokens).__name__)}")
    if model.config["attention"] != "linear" or model.config["feature_map"] != "identity":
        raise ValueError("model: expected a linear-attention TinyTransformer with the identity feature map")
    check_int("layer", layer, low=0)
    if layer >= len(model.blocks):
        raise ValueError(f"layer: expected < n_layers = {len(model.blocks)}, got {layer}")
    x = model.embed(tokens)
    for b in model.blocks[:layer]:
        x = b(x)
    blk = cast(Block, model.blocks[layer])                 # nn.ModuleList types its items as nn.Module
    N, T, _ = x.shape
    h = blk.ln1(x)
    h2 = torch.cat([h, F.pad(h, (0, 0, 1, 0))[:, :-1]], dim=-1)
    q, k, v = blk.qkv(h2).view(N, T, 3, blk.n_heads, blk.d_head).permute(2, 0, 3, 1, 4)
    q, k = F.normalize(q, dim=-1), F.normalize(k, dim=-1)
    return {"q": q, "k": k, "v": v, "S": v.mT @ k}


def mean_squared_overlap(keys: torch.Tensor) -> torch.Tensor:
    """Summed squared overlap per stored item: ``(1/n) Σ_j Σ_{i≠j} (k_i·k_j)²`` for unit keys (..., n, d_k) -> (...).

    With one-hot values it is the mean squared norm of the crosstalk ``c_j = Σ_{i≠j} v_i (k_i·k_j)``.

    For n independent random unit keys in d_k dims each overlap has E[(k_i·k_j)²] = 1/d_k, so the
    expected value is ``(n − 1)/d_k`` (notebook 04).
    """
    check_tensor("keys", keys, min_rank=2)
    G = keys @ keys.mT
    n = keys.shape[-2]
    off = G.pow(2).sum((-2, -1)) - G.diagonal(dim1=-2, dim2=-1).pow(2).sum(-1)
    return off / n


@torch.no_grad()
def trained_head_overlaps(model: TinyTransformer, *, n_pairs: int = 8, n: int = 256,
                           seed: int = 7) -> dict[str, torch.Tensor]:
    """The memory inside each head of a trained linear model, on ``n`` held-out recall sequences.

    The keys that matter are those written at the value positions (they bind each value to its key).
    Returns ``overlap`` (N, H), the :func:`mean_squared_overlap` of those P keys, ``random`` (N, H): the
    same for P random unit keys in d_head dims (an independent draw), ``theory`` = (P − 1)/d_head,
    ``eigvals`` (N, H, P) the spectra of the keys' Gram matrices (ascending) and ``eigvals_random`` for
    the random keys, and ``S_norm`` (N, H) = ‖S_T‖_F.
    """
    V = model.config["vocab_size"]
    g = torch.Generator().manual_seed(check_int("seed", seed, low=0))
    P = check_int("n_pairs", n_pairs, low=1)
    batch = associative_recall(check_int("n", n, low=1), n_pairs=P, n_keys=V // 2, n_values=V - V // 2, n_queries=1,
                               generator=g, device=next(model.parameters()).device)
    st = head_states(model, batch.tokens)
    k = st["k"][:, :, 1:2 * P:2].double().cpu()                        # (N, H, P, d): keys at value positions
    d = k.shape[-1]
    r = F.normalize(torch.randn(k.shape, generator=g, dtype=torch.float64), dim=-1)
    return {"overlap": mean_squared_overlap(k), "random": mean_squared_overlap(r), "theory": torch.tensor((P - 1) / d),
            "eigvals": torch.linalg.eigvalsh(k @ k.mT), "eigvals_random": torch.linalg.eigvalsh(r @ r.mT),
            "S_norm": st["S"].double().cpu().flatten(-2).norm(dim=-1)}


__all__ = [
    "circuit_effects",
    "effects",
    "head_states",
    "mean_squared_overlap",
    "memory_response",
    "model_effects",
    "model_logits",
    "model_response",
    "trained_head_overlaps",
    "verdicts",
]
