"""Synthetic tasks for small trained models: multi-query associative recall.

A context lists key–value token pairs (bell → food, whistle → water, ...), then asks for the values
of some of its keys. A model solves it only by storing each association as it streams past and
reading it back when its key returns: the conditioning circuit, trained end to end.

Vocabulary (``vocab_size(n_keys, n_values) = n_keys + n_values`` tokens)::

    0 .. n_keys-1                     key tokens   (conditioned stimuli: the bells)
    n_keys .. n_keys+n_values-1       value tokens (unconditioned stimuli: the food)

Layout of one sequence with S = ``n_pairs`` pairs and Q = ``n_queries`` queries (length 2S + Q)::

    tokens:   k1 v1 k2 v2 ... kS vS  q1  q2  ...  qQ
    targets:  -100 everywhere ...    a1  a2  ...  aQ      (a_j = the value paired with q_j)

Keys are distinct within a context (so every key has one answer), values are drawn independently
(repeats allowed), every query is one of the context's keys (distinct queries while Q ≤ S), and the
loss is taken only at the query positions (``IGNORE = -100`` elsewhere, PyTorch's ignore index).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import torch

from .._checks import check_device, check_generator, check_int, checked_by

IGNORE = -100
"""Target value at positions without a loss (``torch.nn.functional.cross_entropy``'s ``ignore_index``)."""


class RecallBatch(NamedTuple):
    """A batch of recall sequences: ``tokens`` (N, L) long and ``targets`` (N, L) long, ``IGNORE`` off the queries."""

    tokens: torch.Tensor
    targets: torch.Tensor

    @property
    def answer_mask(self) -> torch.Tensor:
        """(N, L) bool: True at the query positions, where the loss and the accuracy are taken."""
        return self.targets != IGNORE

    def to(self, device: torch.device | str) -> RecallBatch:
        """The same batch on another device."""
        return RecallBatch(self.tokens.to(device), self.targets.to(device))


def _check_vocabulary(n_keys: int, n_values: int) -> dict[str, int]:
    """The sizes of the key and value vocabularies, each >= 1 (as ints)."""
    return {"n_keys": check_int("n_keys", n_keys, low=1), "n_values": check_int("n_values", n_values, low=1)}


@checked_by(_check_vocabulary)
def vocab_size(n_keys: int = 16, n_values: int = 16) -> int:
    """Number of token ids used by :func:`associative_recall`: ``n_keys + n_values``."""
    return n_keys + n_values


def _check_recall(n_samples: int, n_pairs: int, n_queries: int, n_keys: int, n_values: int,
                  generator: torch.Generator | None, device: torch.device | str | None) -> dict[str, Any]:
    """The arguments of :func:`associative_recall`: N, S, Q >= 1 (as ints), the vocabularies, S <= n_keys (keys
    are distinct within a context), the generator and the device (as a ``torch.device``)."""
    N = check_int("n_samples", n_samples, low=1)
    S = check_int("n_pairs", n_pairs, low=1)
    Q = check_int("n_queries", n_queries, low=1)
    _check_vocabulary(n_keys, n_values)
    if n_keys < S:
        raise ValueError(f"n_pairs: expected at most n_keys = {n_keys} (keys are distinct within a context), got {S}")
    check_generator("generator", generator)
    return {"n_samples": N, "n_pairs": S, "n_queries": Q, "device": check_device("device", device)}


@checked_by(_check_recall)
def associative_recall(n_samples: int, *, n_pairs: int, n_queries: int = 1, n_keys: int = 16, n_values: int = 16,
                       generator: torch.Generator | None = None,
                       device: torch.device | str | None = None) -> RecallBatch:
    """Draw ``n_samples`` multi-query associative-recall sequences (see the module docstring for the layout).

    Args:
        n_samples: N, the batch size.
        n_pairs: S, key–value pairs per context (needs ``S ≤ n_keys``: keys are distinct).
        n_queries: Q, queries after the context (distinct keys while ``Q ≤ S``, else drawn with repeats).
        n_keys, n_values: sizes of the key and value vocabularies (token ids ``[0, n_keys)`` and
            ``[n_keys, n_keys + n_values)``).
        generator: a CPU ``torch.Generator``; numbers are drawn on the CPU and then moved to ``device``,
            so every device sees the same batch.

    Returns:
        ``RecallBatch(tokens, targets)``, both (N, 2S + Q) long; ``targets`` is ``IGNORE`` except at
        the Q query positions, where it holds the value token paired with the queried key.

    >>> batch = associative_recall(4, n_pairs=6, n_queries=2, generator=torch.Generator().manual_seed(0))
    """
    N, S, Q = n_samples, n_pairs, n_queries
    keys = torch.rand(N, n_keys, generator=generator).argsort(dim=-1)[:, :S]         # distinct keys: (N, S)
    values = n_keys + torch.randint(n_values, (N, S), generator=generator)           # (N, S)
    if Q <= S:
        which = torch.rand(N, S, generator=generator).argsort(dim=-1)[:, :Q]         # distinct pair indices
    else:
        which = torch.randint(S, (N, Q), generator=generator)
    context = torch.stack([keys, values], dim=-1).flatten(-2)                         # k1 v1 k2 v2 ...
    tokens = torch.cat([context, keys.gather(1, which)], dim=1)
    targets = torch.full_like(tokens, IGNORE)
    targets[:, 2 * S:] = values.gather(1, which)
    return RecallBatch(tokens.to(device), targets.to(device))


def _check_items(n_items: int) -> dict[str, int]:
    """The number of items of a pointer-chasing task, >= 2 (as an int)."""
    return {"n_items": check_int("n_items", n_items, low=2)}


def _check_chase(n_samples: int, n_pairs: int, hops: int, n_queries: int, n_items: int,
                 generator: torch.Generator | None, device: torch.device | str | None) -> dict[str, Any]:
    """The arguments of :func:`pointer_chasing`: N >= 1, S >= 2, K >= 1 not a multiple of S (no query comes back
    to itself), Q >= 1 (as ints), S <= n_items (items are distinct), the generator and the device."""
    N = check_int("n_samples", n_samples, low=1)
    S = check_int("n_pairs", n_pairs, low=2)
    K = check_int("hops", hops, low=1)
    if K % S == 0:
        raise ValueError(f"hops: expected a number of hops that is not a multiple of n_pairs = {S} "
                         f"(the cycle would bring every query back to itself), got {K}")
    Q = check_int("n_queries", n_queries, low=1)
    _check_items(n_items)
    if n_items < S:
        raise ValueError(f"n_pairs: expected at most n_items = {n_items} (items are distinct), got {S}")
    check_generator("generator", generator)
    return {"n_samples": N, "n_pairs": S, "hops": K, "n_queries": Q, "device": check_device("device", device)}


@checked_by(_check_chase)
def pointer_chasing(n_samples: int, *, n_pairs: int, hops: int = 2, n_queries: int = 1, n_items: int = 16,
                    separator: bool = False, generator: torch.Generator | None = None,
                    device: torch.device | str | None = None) -> RecallBatch:
    """Draw ``n_samples`` K-hop pointer-chasing sequences: a task that needs K retrievals in a row.

    A context of S = ``n_pairs`` pairs ``a → σ(a)`` lists, in random order, a random cycle σ through S
    distinct items (drawn from ``n_items``), so every value is also a key and ``σᴷ(x) ≠ x`` for
    ``0 < K < S`` (no fixed points: answering the query itself, or its one-hop partner when K ≥ 2,
    scores 0); then Q queries, each the separator token
    ``?`` (id ``n_items``) followed by a start item x, whose target is ``σ^K(x)``, K = ``hops``::

        tokens:   a1 σ(a1) a2 σ(a2) ... aS σ(aS)  ?  x1   ?  x2  ...
        targets:  -100 everywhere ...             -100 σᴷ(x1) -100 σᴷ(x2) ...

    With ``hops = 1`` it is associative recall whose values are items again. One linear-attention
    layer retrieves once per position, so K hops need K successive retrievals (K layers, or a model
    that composes them some other way). Vocabulary: :func:`pointer_vocab_size` ``= n_items + 1``.

    Without a separator, every boundary between two pairs also shows an item followed by an item
    (``σ(a_i) a_{i+1}``): a model that stores "previous token → token" also stores that spurious pair,
    so a queried item can have two successors in the context. ``separator=True`` closes every pair with
    the token ``|`` (id ``n_items + 1``; vocabulary ``n_items + 2``), so that the only item followed by
    an item is a pair's source and every query has one answer in the context::

        tokens:   a1 σ(a1) |  a2 σ(a2) |  ...  aS σ(aS) |   ?  x1   ?  x2  ...

    Returns:
        ``RecallBatch(tokens, targets)``, both (N, 2S + 2Q) long, (N, 3S + 2Q) with the separator.

    >>> b = pointer_chasing(2, n_pairs=4, hops=2, generator=torch.Generator().manual_seed(0))
    """
    N, S, K, Q = n_samples, n_pairs, hops, n_queries
    cycle = torch.rand(N, n_items, generator=generator).argsort(dim=-1)[:, :S]          # c_0 → c_1 → ... → c_0
    shown = torch.rand(N, S, generator=generator).argsort(dim=-1)                         # order of the pairs
    items = cycle.gather(1, shown)                                                        # a_i = c_{shown_i}
    values = cycle.gather(1, (shown + 1) % S)                                             # σ(a_i) = c_{shown_i + 1}
    if Q <= S:
        which = torch.rand(N, S, generator=generator).argsort(dim=-1)[:, :Q]
    else:
        which = torch.randint(S, (N, Q), generator=generator)
    start = shown.gather(1, which)                                                        # position on the cycle
    answer = cycle.gather(1, (start + K) % S)                                             # σᴷ(x)
    pair = [items, values, torch.full_like(items, n_items + 1)] if separator else [items, values]
    context = torch.stack(pair, dim=-1).flatten(-2)
    queries = torch.stack([torch.full_like(which, n_items), items.gather(1, which)], dim=-1).flatten(-2)
    tokens = torch.cat([context, queries], dim=1)
    targets = torch.full_like(tokens, IGNORE)
    targets[:, context.shape[1] + 1::2] = answer
    return RecallBatch(tokens.to(device), targets.to(device))


def _check_chased_batch(batch: RecallBatch, n_pairs: int, hops: int, separator: bool) -> dict[str, int]:
    """A :func:`pointer_chasing` batch of S >= 2 pairs (with or without separators) and K >= 1 hops (as ints)."""
    S, K = check_int("n_pairs", n_pairs, low=2), check_int("hops", hops, low=1)
    if not isinstance(batch, RecallBatch):
        raise TypeError(f"batch: expected the RecallBatch of pointer_chasing, got {type(batch).__name__}")
    width, shape = 3 if separator else 2, tuple(batch.tokens.shape)
    if len(shape) != 2 or shape[1] < width * S + 2 or (shape[1] - width * S) % 2:
        raise ValueError(f"batch: expected pointer-chasing tokens (N, {width}·n_pairs + 2Q) with n_pairs = {S}, "
                         f"got shape {shape}")
    return {"n_pairs": S, "hops": K}


@checked_by(_check_chased_batch)
def backward_steps(batch: RecallBatch, *, n_pairs: int, hops: int, separator: bool = False) -> torch.Tensor:
    """The query type of every answer of a :func:`pointer_chasing` batch: how often its chain runs backward.

    The chain of a query x visits the pairs ``x → σ(x), σ(x) → σ²(x), ..., σ^{K−1}(x) → σᴷ(x)``. Step k
    (k = 1 .. K−1) runs **backward** when the pair of hop k is shown *before* the pair of hop k − 1 in the
    context. A causal model can prepare such a step while reading the context (the later pair's position
    can already look up the earlier one), a forward step only after the query; so the count splits the
    queries by how much of the chain the context's order lets a shallow model do early. 0 for every query
    when ``hops = 1``.

    Args:
        batch: what ``pointer_chasing(..., n_pairs, hops, separator)`` returned, tokens (N, T).
    Returns:
        (N, Q) long, each entry in ``[0, K − 1]``, in the order of the answers (``batch.answer_mask``).
    """
    S, K, width = n_pairs, hops, 3 if separator else 2
    tokens = batch.tokens.cpu()
    sources, starts = tokens[:, 0:width * S:width], tokens[:, width * S + 1::2]
    slot = torch.full((tokens.shape[0], int(tokens.max()) + 1), -1, dtype=torch.long)
    slot.scatter_(1, sources, torch.arange(S).expand_as(sources).contiguous())    # item -> index of its pair
    successor = tokens[:, 1:width * S:width]
    where, item = slot.gather(1, starts), starts
    count = torch.zeros_like(starts)
    for _ in range(K - 1):
        item = successor.gather(1, where)
        nxt = slot.gather(1, item)
        count += nxt < where
        where = nxt
    return count


@checked_by(_check_items)
def pointer_vocab_size(n_items: int = 16, separator: bool = False) -> int:
    """Number of token ids used by :func:`pointer_chasing`: ``n_items`` items, the query mark ``?`` and,
    with ``separator=True``, the pair separator ``|``."""
    return n_items + 1 + (1 if separator else 0)


__all__ = ["IGNORE", "RecallBatch", "associative_recall", "backward_steps", "pointer_chasing", "pointer_vocab_size",
           "vocab_size"]
