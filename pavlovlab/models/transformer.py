"""A tiny trainable Transformer whose attention is a conditioning circuit (trained by :mod:`pavlovlab.models.training`).

``TinyTransformer`` = token embedding → L blocks (H heads of attention + a small MLP) → readout.
The attention of every block is one of the package's forms, chosen by name:

- ``"linear"``: :func:`pavlovlab.linear_attention`, the Hebbian memory ``S_t = S_{t-1} + v_t k_tᵀ``;
- ``"delta"``: :func:`pavlovlab.delta_rule_attention`, the Rescorla–Wagner memory (β from the token);
- ``"softmax"``: :func:`pavlovlab.softmax_attention`, the standard Transformer.

Heads are a leading dimension ``(N, H, T, d_head)``: one call serves all heads, no loop over heads.
Inside a block the forms run unchecked (:mod:`pavlovlab.attention.literal`'s parallel forms and
:func:`pavlovlab.attention.kernels.delta_chunk_kernel`): their inputs are valid by construction, and a tiny
model's training step is made of many small operations, so the public functions' checks would
cost a noticeable share of it. The numbers are those of the public functions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn as nn
import torch.nn.functional as F

from .._checks import check_choice, check_int, check_output, checked_by
from ..attention import literal
from ..attention.forms import FEATURE_MAPS
from ..attention.kernels import delta_chunk_kernel

ATTENTIONS = ("linear", "delta", "softmax")
"""The attention a :class:`Block` can run: causal linear attention (the Hebbian circuit), the delta rule, softmax."""


def _shift(x: torch.Tensor) -> torch.Tensor:
    """The previous token's vector at every position (zeros at t = 0): x (N, T, d) -> (N, T, d)."""
    return F.pad(x, (0, 0, 1, 0))[:, :-1]


def _check_shape_keywords(names: tuple[str, ...], values: tuple[object, ...], attention: object,
                          feature_map: object) -> None:
    """The sizes (integers >= 1, named by ``names``), the attention's name and the feature map (a name of
    :data:`pavlovlab.attention.forms.FEATURE_MAPS` or a callable) of a model or a block."""
    for name, value in zip(names, values, strict=True):
        check_int(name, value, low=1)
    check_choice("attention", attention, ATTENTIONS)
    if not callable(feature_map):
        check_choice("feature_map", feature_map, FEATURE_MAPS)


def _check_block(d_model: int, n_heads: int, d_head: int, attention: str, mlp_ratio: int, feature_map: str) -> None:
    """The arguments of :class:`Block`."""
    _check_shape_keywords(("d_model", "n_heads", "d_head", "mlp_ratio"), (d_model, n_heads, d_head, mlp_ratio),
                          attention, feature_map)


def _check_feature_map_output(feature_map: Callable[[torch.Tensor], torch.Tensor]
                              ) -> Callable[[torch.Tensor], torch.Tensor]:
    """A learner's feature map φ, whose every output is checked to be a tensor of its input's shape, dtype and
    device (what φ returns is known only when it runs)."""
    def checked_feature_map(x: torch.Tensor) -> torch.Tensor:
        return check_output("feature_map", feature_map(x), x.shape, x)
    return checked_feature_map


class Block(nn.Module):
    """One layer: ``x + Attn(LN(x))`` then ``x + MLP(LN(x))``, with H heads of size ``d_head``.

    q, k, v and (for ``"delta"``) β are projected from ``[x_t, x_{t−1}]``, the token and its
    predecessor (a causal convolution of width 2, the "token shift"). This is how a value token
    learns which key came just before it: the write ``v_t k_tᵀ`` then binds the value to the key
    that preceded it, and a later query of that key reads the value back — in one layer.
    """

    @checked_by(_check_block)
    def __init__(self, d_model: int, n_heads: int, d_head: int, attention: str, mlp: bool, mlp_ratio: int,
                 feature_map: str) -> None:
        super().__init__()
        self.n_heads, self.d_head, self.attention, self.feature_map = n_heads, d_head, attention, feature_map
        self.phi = FEATURE_MAPS[feature_map] if isinstance(feature_map, str) else _check_feature_map_output(feature_map)
        inner = n_heads * d_head
        self.ln1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(2 * d_model, 3 * inner, bias=False)
        self.beta = nn.Linear(2 * d_model, n_heads) if attention == "delta" else None
        self.out_norm = nn.LayerNorm(d_head) if attention != "softmax" else None  # sums of T writes: rescale
        self.out = nn.Linear(inner, d_model, bias=False)
        self.mlp = nn.Sequential(nn.LayerNorm(d_model), nn.Linear(d_model, mlp_ratio * d_model), nn.GELU(),
                                 nn.Linear(mlp_ratio * d_model, d_model)) if mlp else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        N, T, _ = x.shape
        h = self.ln1(x)
        h2 = torch.cat([h, _shift(h)], dim=-1)
        qkv = self.qkv(h2).view(N, T, 3, self.n_heads, self.d_head)
        if self.attention == "softmax":
            q, k, v = qkv.permute(2, 0, 3, 1, 4)                               # (N, H, T, d)
            o = literal.softmax_parallel(q, k, v, True, None)                  # = softmax_attention(q, k, v)
        else:
            q, k = F.normalize(qkv[:, :, :2], dim=-1).permute(2, 0, 3, 1, 4)  # unit keys: bounded writes
            v = qkv[:, :, 2].transpose(1, 2)
            if self.attention == "linear":
                o, _ = literal.linear_parallel(self.phi(q), self.phi(k), v)  # = linear_attention(mode="parallel")
            else:
                assert self.beta is not None                               # a delta block has its β projection
                beta = torch.sigmoid(self.beta(h2)).transpose(1, 2)        # (N, H, T), in (0, 1)
                empty = q.new_zeros(N, self.n_heads, self.d_head, self.d_head)   # S_0: (N, H, d_v, d_k)
                o, _ = delta_chunk_kernel(q, k, v, beta, empty, chunk_size=64)  # = delta_rule_attention
            assert self.out_norm is not None                               # every block but softmax's has one
            o = self.out_norm(o)
        x = x + self.out(o.transpose(1, 2).reshape(N, T, -1))
        return x + self.mlp(x) if self.mlp is not None else x


def _check_model_keywords(vocab_size: int, d_model: int, n_layers: int, n_heads: int, d_head: int, attention: str,
                          mlp_ratio: int, feature_map: str, seed: int | None) -> None:
    """The arguments of :class:`TinyTransformer`."""
    _check_shape_keywords(("vocab_size", "d_model", "n_layers", "n_heads", "d_head", "mlp_ratio"),
                          (vocab_size, d_model, n_layers, n_heads, d_head, mlp_ratio), attention, feature_map)
    if seed is not None:
        check_int("seed", seed, low=0)


def _check_tokens(self: TinyTransformer, tokens: object, check_ids: bool) -> None:
    """The tokens of :meth:`TinyTransformer.forward`: a (N, T) long tensor, and, unless ``check_ids`` is False, ids
    in [0, vocab_size). The ids are read (a synchronisation) only when asked: the ensemble trainer, whose
    ``torch.func.vmap`` cannot read them and whose ids are valid by construction, passes ``check_ids=False``."""
    if not isinstance(tokens, torch.Tensor) or tokens.dtype != torch.long or tokens.dim() != 2:
        raise TypeError(f"tokens: expected a (N, T) long tensor, got {getattr(tokens, 'dtype', type(tokens).__name__)} "
                        f"of shape {tuple(getattr(tokens, 'shape', ()))}")
    vocab = self.config["vocab_size"]
    if check_ids and tokens.numel() and (int(tokens.min()) < 0 or int(tokens.max()) >= vocab):
        raise ValueError(f"tokens: expected ids in [0, vocab_size = {vocab}), got ids from {int(tokens.min())} "
                         f"to {int(tokens.max())}")


class TinyTransformer(nn.Module):
    """A small causal Transformer: embedding → ``n_layers`` × (``n_heads`` heads of attention + MLP) → readout.

    Args:
        vocab_size: number of token ids (e.g. :func:`pavlovlab.models.tasks.vocab_size`).
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

    ``forward(tokens (N, T) long) -> logits (N, T, vocab_size)``; it checks the token ids, unless a caller whose
    ids are valid by construction passes ``check_ids=False`` (the ensemble trainer, whose ``torch.func.vmap``
    cannot run a check that reads the ids).
    """

    @checked_by(_check_model_keywords)
    def __init__(self, vocab_size: int, *, d_model: int = 64, n_layers: int = 1, n_heads: int = 4, d_head: int = 16,
                 attention: str = "linear", mlp: bool = True, mlp_ratio: int = 2, feature_map: str = "identity",
                 seed: int | None = None) -> None:
        super().__init__()
        self.attention = attention
        self.config: dict[str, Any] = dict(vocab_size=vocab_size, d_model=d_model, n_layers=n_layers, n_heads=n_heads,
                           d_head=d_head, attention=attention, mlp=mlp, mlp_ratio=mlp_ratio, feature_map=feature_map)
        with torch.random.fork_rng(devices=[]):
            if seed is not None:
                torch.manual_seed(seed)
            self.embed = nn.Embedding(vocab_size, d_model)
            self.blocks = nn.ModuleList(Block(d_model, n_heads, d_head, attention, mlp, mlp_ratio, feature_map)
                                        for _ in range(n_layers))
            self.ln_f = nn.LayerNorm(d_model)
            self.readout = nn.Linear(d_model, vocab_size)

    @checked_by(_check_tokens)
    def forward(self, tokens: torch.Tensor, *, check_ids: bool = True) -> torch.Tensor:
        if tokens.shape[1] == 0:  # an empty sequence: empty logits (N, 0, vocab_size), as the attention forms do
            return self.readout.weight.new_zeros(tokens.shape[0], 0, self.config["vocab_size"])
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.readout(self.ln_f(x))

    def extra_repr(self) -> str:
        c = self.config
        return f"L={c['n_layers']}, H={c['n_heads']}, d_head={c['d_head']}, attention={c['attention']!r}"


def _check_model(model: object) -> TinyTransformer:
    if not isinstance(model, TinyTransformer):
        raise TypeError(f"model: expected a pavlovlab.models.TinyTransformer, got {type(model).__name__}")
    return model


def _check_module(model: object) -> None:
    """A torch module (the argument of :func:`count_parameters`)."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model: expected a torch.nn.Module, got {type(model).__name__}")


@checked_by(_check_module)
def count_parameters(model: nn.Module) -> int:
    """Number of trainable parameters."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def _check_budget(budget: int, d_model: int, d_head: int, mlp_ratio: int, deep_layers: int | None) -> dict[str, Any]:
    """The arguments of :func:`depth_width_configs`: the sizes as ints, ``deep_layers`` a divisor of ``budget``."""
    checked = {name: check_int(name, value, low=1) for name, value in
               (("budget", budget), ("d_model", d_model), ("d_head", d_head), ("mlp_ratio", mlp_ratio))}
    if deep_layers is not None:
        checked["deep_layers"] = L = check_int("deep_layers", deep_layers, low=1)
        if checked["budget"] % L:
            raise ValueError(f"deep_layers: expected a divisor of budget = {checked['budget']}, got {L}")
    return checked


@checked_by(_check_budget)
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
    common = dict(d_model=d_model, d_head=d_head)
    L = budget if deep_layers is None else deep_layers
    configs = {"wide-shallow": dict(n_layers=1, n_heads=budget, mlp_ratio=budget * mlp_ratio, **common),
               "narrow-deep": dict(n_layers=L, n_heads=budget // L, mlp_ratio=budget * mlp_ratio // L, **common)}
    if width_control:
        configs["one-big-head"] = dict(n_layers=1, n_heads=1, mlp_ratio=budget * mlp_ratio, d_model=d_model,
                                       d_head=budget * d_head)
    return configs


__all__ = ["ATTENTIONS", "Block", "TinyTransformer", "count_parameters", "depth_width_configs"]
