"""The memory inside a trained linear-attention head: its states, its keys' overlaps, its recall under load.

A linear-attention head writes ``S = Σ_t v_t k_tᵀ``, the Hebbian memory of notebooks 02–04. Opened up
(:func:`head_states`), a trained head's keys can be compared with random unit keys: their summed squared
overlap (:func:`mean_squared_overlap`, ``(n − 1)/d_k`` for random keys) is the crosstalk the read-out
carries (:func:`trained_head_overlaps`), and it grows with the number of stored pairs as the recall falls
(:func:`recall_against_load`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import torch
import torch.nn.functional as F

from .._checks import check_fits, check_int, check_tensor, checked_by, unchecked
from .tasks import _check_recall, associative_recall
from .transformer import Block, TinyTransformer, _check_model

_associative_recall = unchecked(associative_recall)


def _check_linear(model: TinyTransformer) -> None:
    """A model whose heads are linear attention with the identity feature map (their memory is ``Σ_t v_t k_tᵀ``)."""
    _check_model(model)
    if model.config["attention"] != "linear" or model.config["feature_map"] != "identity":
        raise ValueError("model: expected a linear-attention TinyTransformer with the identity feature map")


def _check_head_states(model: TinyTransformer, tokens: torch.Tensor, layer: int) -> None:
    """Token ids (N, T) long, a linear model (:func:`_check_linear`) and one of its layers."""
    if not isinstance(tokens, torch.Tensor) or tokens.dtype != torch.long or tokens.dim() != 2:
        raise TypeError(f"tokens: expected a (N, T) long tensor, got {getattr(tokens, 'dtype', type(tokens).__name__)}")
    _check_linear(model)
    check_int("layer", layer, low=0)
    if layer >= len(model.blocks):
        raise ValueError(f"layer: expected < n_layers = {len(model.blocks)}, got {layer}")


@checked_by(_check_head_states)
@torch.no_grad()
def head_states(model: TinyTransformer, tokens: torch.Tensor, layer: int = 0) -> dict[str, torch.Tensor]:
    """Queries, keys, values and final state of each head of a linear-attention block.

    tokens: (N, T) long. Recomputes the block's projections as its forward does (LayerNorm, token
    shift ``[x_t, x_{t−1}]``, unit-normalised q and k). Returns ``q, k, v`` (N, H, T, d_head) and
    ``S`` (N, H, d_head, d_head) = ``Σ_t v_t k_tᵀ``, the Hebbian memory after the whole sequence.
    """
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


_head_states = unchecked(head_states)


def _check_keys(keys: torch.Tensor) -> None:
    """Finite keys (..., n, d_k) whose n × n overlaps fit in memory."""
    check_tensor("keys", keys, min_rank=2)
    check_fits("keys", (*keys.shape[:-2], keys.shape[-2], keys.shape[-2]), keys.dtype, keys.device,
               "the overlaps, batch × n × n", "measure fewer keys at once")


@checked_by(_check_keys, nonfinite="very large keys overflow the squared overlaps in the dtype")
def mean_squared_overlap(keys: torch.Tensor) -> torch.Tensor:
    """Summed squared overlap per stored item: ``(1/n) Σ_j Σ_{i≠j} (k_i·k_j)²`` for unit keys (..., n, d_k) -> (...).

    With one-hot values it is the mean squared norm of the crosstalk ``c_j = Σ_{i≠j} v_i (k_i·k_j)``.

    For n independent random unit keys in d_k dims each overlap has E[(k_i·k_j)²] = 1/d_k, so the
    expected value is ``(n − 1)/d_k`` (notebook 04).
    """
    G = keys @ keys.mT
    n = keys.shape[-2]
    off = G.pow(2).sum((-2, -1)) - G.diagonal(dim1=-2, dim2=-1).pow(2).sum(-1)
    return off / n


_mean_squared_overlap = unchecked(mean_squared_overlap)


def _check_held_out(model: TinyTransformer, n_pairs: int, n: int, seed: int) -> dict[str, int]:
    """A seed and ``n`` held-out recall sequences of ``n_pairs`` pairs over a linear model's vocabulary (its first
    half the keys, as :func:`associative_recall` checks them), as ints."""
    V = _check_model(model).config["vocab_size"]
    checked = {"seed": check_int("seed", seed, low=0), "n_pairs": check_int("n_pairs", n_pairs, low=1),
               "n": check_int("n", n, low=1)}
    _check_recall(checked["n"], checked["n_pairs"], 1, V // 2, V - V // 2, None, None)
    _check_linear(model)
    return checked


@checked_by(_check_held_out)
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
    V, P = model.config["vocab_size"], n_pairs
    g = torch.Generator().manual_seed(seed)
    batch = _associative_recall(n, n_pairs=P, n_keys=V // 2, n_values=V - V // 2, n_queries=1, generator=g,
                                device=next(model.parameters()).device)
    st = _head_states(model, batch.tokens)
    k = st["k"][:, :, 1:2 * P:2].double().cpu()                        # (N, H, P, d): keys at value positions
    d = k.shape[-1]
    r = F.normalize(torch.randn(k.shape, generator=g, dtype=torch.float64), dim=-1)
    return {"overlap": mean_squared_overlap(k), "random": _mean_squared_overlap(r), "theory": torch.tensor((P - 1) / d),
            "eigvals": torch.linalg.eigvalsh(k @ k.mT), "eigvals_random": torch.linalg.eigvalsh(r @ r.mT),
            "S_norm": st["S"].double().cpu().flatten(-2).norm(dim=-1)}


def _check_write_load(model: TinyTransformer, n_pairs: int, n: int, seed: int) -> dict[str, int]:
    """A linear :class:`TinyTransformer`, a seed and ``n`` held-out recall sequences of at most half its vocabulary
    in pairs (so that :func:`associative_recall` takes them), as ints."""
    V = _check_model(model).config["vocab_size"]
    checked = {"seed": check_int("seed", seed, low=0), "n_pairs": check_int("n_pairs", n_pairs, low=1, high=V // 2),
               "n": check_int("n", n, low=1)}
    _check_linear(model)
    return checked


@checked_by(_check_write_load)
@torch.no_grad()
def write_norms(model: TinyTransformer, *, n_pairs: int, n: int = 256, seed: int = 7) -> dict[str, torch.Tensor]:
    """How much each kind of token writes into each head's memory, on ``n`` held-out recall sequences.

    A context of S pairs ``[k₁, v₁, …, k_S, v_S, query]`` makes every token write ``v_t k_tᵀ`` with a unit key,
    so a write's size is ``‖v_t‖``. The value tokens' writes store the pairs; the key tokens' writes (and the
    query's) only add crosstalk. Returns per head (H,), averaged over sequences and positions: ``key`` the mean
    ``‖v_t‖²`` at the S key-token positions, ``value`` the same at the S value-token positions, and
    ``load`` the effective number of writes per key dimension,
    ``(S + (S + 1)·key/value) / d_head``: ``S/d_head`` when the key tokens write nothing, ``(2S + 1)/d_head``
    when they write as much as the value tokens.
    """
    V, P = model.config["vocab_size"], n_pairs
    g = torch.Generator().manual_seed(seed)
    batch = _associative_recall(n, n_pairs=P, n_keys=V // 2, n_values=V - V // 2, n_queries=1, generator=g,
                                device=next(model.parameters()).device)
    sq = _head_states(model, batch.tokens)["v"].double().cpu().square().sum(-1)     # (N, H, 2P + 1): ‖v_t‖²
    key, value = sq[..., 0:2 * P:2].mean((0, 2)), sq[..., 1:2 * P:2].mean((0, 2))
    return {"key": key, "value": value, "load": (P + (P + 1) * key / value) / model.config["d_head"]}


def _check_loads(model: TinyTransformer, ns: Sequence[int], n: int, seed: int) -> dict[str, object]:
    """A linear :class:`TinyTransformer`, a non-empty sequence of numbers of pairs, each in [1, n_keys] (n_keys half
    its vocabulary), ``n`` sequences each and a seed, as ints."""
    V = _check_model(model).config["vocab_size"]
    if isinstance(ns, (str, bytes)) or not isinstance(ns, Sequence) or not ns:
        raise TypeError(f"ns: expected a non-empty sequence of numbers of pairs, got {ns!r}")
    checked = {"ns": [check_int("ns", x, low=1, high=V // 2) for x in ns], "n": check_int("n", n, low=1),
               "seed": check_int("seed", seed, low=0)}
    _check_linear(model)
    return checked


@checked_by(_check_loads)
@torch.no_grad()
def recall_against_load(model: TinyTransformer, ns: Sequence[int], *, n: int = 256, seed: int = 11,
                        progress: bool = False) -> dict[str, torch.Tensor]:
    """A trained linear model's recall and its heads' memories as the number of stored pairs grows.

    For each n_pairs in ``ns`` (at most the model's n_keys), on ``n`` held-out recall sequences (seed
    ``seed``): ``accuracy`` (len(ns),), the model's recall (argmax = the right value); per head (len(ns), H):
    ``overlap``, the :func:`mean_squared_overlap` of the keys written at the value positions (as
    :func:`trained_head_overlaps`); ``fidelity``, the mean cosine between the head's read-out ``S q`` at
    the query and the value ``v_j`` the head wrote for the queried pair (its own q, k, v); and
    ``fidelity_theory``, notebook 04's mean cosine for unit keys and values, ``1/√(1 + c)``, at the measured
    overlap ``c`` of each sequence (averaged over sequences).
    """
    from tqdm.auto import tqdm

    V = model.config["vocab_size"]
    n_keys = V // 2
    device = next(model.parameters()).device
    out: dict[str, list[torch.Tensor]] = {"accuracy": [], "overlap": [], "fidelity": [], "fidelity_theory": []}
    was = model.training
    model.eval()
    for P in tqdm(ns, disable=not progress, desc="loads"):
        g = torch.Generator().manual_seed(seed + P)
        batch = _associative_recall(n, n_pairs=P, n_keys=n_keys, n_values=V - n_keys, n_queries=1, generator=g,
                                    device=device)
        logits = model(batch.tokens)[:, -1]
        out["accuracy"].append((logits.argmax(-1) == batch.targets[:, -1]).double().mean().cpu())
        st = _head_states(model, batch.tokens)
        k = st["k"][:, :, 1:2 * P:2].double().cpu()                             # (N, H, P, d)
        v = st["v"][:, :, 1:2 * P:2].double().cpu()
        q = st["q"][:, :, -1].double().cpu()                                     # (N, H, d)
        j = (batch.tokens[:, 0:2 * P:2] == batch.tokens[:, -1:]).double().argmax(-1).cpu()   # queried pair
        read = ((k @ q[..., None]).mT @ v)[..., 0, :]                            # (N, H, d): Σ_i v_i (k_i·q)
        target = v.gather(2, j[:, None, None, None].expand(-1, v.shape[1], 1, v.shape[-1]))[:, :, 0]
        c = mean_squared_overlap(k)                                                         # (N, H)
        out["overlap"].append(c.mean(0))
        out["fidelity"].append(F.cosine_similarity(read, target, dim=-1).mean(0))
        out["fidelity_theory"].append((1 + c).rsqrt().mean(0))
    model.train(was)
    res = {key: torch.stack(val) for key, val in out.items()}
    res["n"] = torch.tensor(ns)
    return res


__all__ = [
    "head_states",
    "mean_squared_overlap",
    "recall_against_load",
    "trained_head_overlaps",
    "write_norms",
]
