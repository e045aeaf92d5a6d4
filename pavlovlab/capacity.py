"""Capacity of the associative memory: how many bell→food pairs fit in the bucket ``S`` before they blur.

Store ``n`` pairs with Hebb's rule, ``S = Σ_i v_i k_iᵀ``, and read item ``j`` back with its own key:

    S k_j = v_j (k_j·k_j) + Σ_{i≠j} v_i (k_i·k_j)       (signal + crosstalk)

For unit keys drawn uniformly on the sphere, ``E[(k_i·k_j)²] = 1/d_k`` exactly (``E[k kᵀ] = I/d_k``), so
the crosstalk's squared norm is about ``(n−1)/d_k`` and the mean cosine between the read-out and the
true value is about ``1/√(1 + (n−1)/d_k)``: average-case capacity grows as ``O(d_k)``
(:func:`recall_sweep`, :func:`capacity_sweep`, :func:`fidelity_theory`, :func:`average_capacity_theory`).

What "error-free" capacity means depends on the criterion, so it is measured on actual read-outs,
per trial, at every ``n`` (:func:`retrieval_capacity`, :func:`capacity_scaling`):

- (a) ``"cosine"``: every stored item's cosine ≥ θ (random values): grows like ``d_k``;
- (b) ``"argmax"``: every item decoded correctly by argmax over a fixed codebook: close to ``d_k``;
- (c) ``"adversarial"``: every stored item must keep a read-out on its value's side (cosine > 0, so
  sign decoding works) whatever unit values were stored. The sign-flip adversary ``v_i = −sign(k_i·k_j) v_j``
  makes the read-out ``(1 − Σ_{i≠j}|k_i·k_j|) v_j`` (unit keys) and no choice of values does worse, so
  this criterion is *derived*: it fails at the first n with ``max_j Σ_{i≠j}|k_i·k_j| ≥ 1``, a function of
  the keys alone (:func:`pavlovlab.retrieval.adversarial_error_curve` builds those values and measures the
  read-out). Its capacity grows like ``√d_k`` (each ``|k_i·k_j|`` has mean ``√(2/(π d_k))``: :func:`worst_case_bound`).

The memories compared (:data:`pavlovlab.retrieval.MEMORIES`): the Hebbian sum, the delta rule (one pass)
and softmax attention; their read-outs after every write come from :mod:`pavlovlab.retrieval`, random
keys from :mod:`pavlovlab.sampling`, the slope fits from :mod:`pavlovlab.statistics`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence, Sized
from typing import Any, NamedTuple

import torch
from tqdm.auto import tqdm

from ._checks import (
    check_choice,
    check_device,
    check_float_dtype,
    check_int,
    check_lengths,
    check_numbers,
    check_real,
    check_tensor,
)
from .hebbian import outer_product_memory
from .retrieval import (
    MEMORIES,
    adversarial_error_curve,
    decoding_curve,
    first_failure,
    min_cosine_curve,
    readout_weights,
)
from .sampling import KINDS, random_keys, random_values
from .statistics import bootstrap_slope_se, fit_slope

_GRAM_BYTES = 2**25
"""Memory budget of one vectorised chunk of Gram matrices in :func:`recall_sweep` (32 MiB)."""


# ------------------------------------------------------------------------------------------- experiment
class RecallMetrics(NamedTuple):
    """Per-item results of a store-and-recall experiment (``nan``/``False`` where an item was not stored).

    cosine: cos(read-out, true value); correct: the read-out is closest (largest dot product) to its
    own value among the *n stored* values. That codebook grows with n: with one-hot values it only asks
    whether each key is its own nearest key (:func:`retrieval_capacity` uses a fixed codebook).
    """

    cosine: torch.Tensor
    correct: torch.Tensor


def store_and_recall(keys: torch.Tensor, values: torch.Tensor) -> RecallMetrics:
    """Store every pair with Hebb's rule ``S = Σ_i v_i k_iᵀ``, then read each item back as ``S k_j``.

    keys: (..., n, d_k), values: (..., n, d_v); leading dims (trials, ...) broadcast.
    Returns :class:`RecallMetrics` with fields of shape (..., n); an exact tie with a rival is an error.
    """
    S = outer_product_memory(keys, values)                 # (..., d_v, d_k): the bucket (checks the pairs)
    read = keys @ S.mT                                     # (..., n, d_v): S k_j for every j
    cosine = torch.nn.functional.cosine_similarity(read, values, dim=-1)
    scores = read @ values.mT                              # (..., n, n): match against every stored value
    own = torch.diagonal(scores, dim1=-2, dim2=-1)
    rival = scores.masked_fill(torch.eye(scores.shape[-1], dtype=torch.bool, device=scores.device), -math.inf)
    correct = own > rival.amax(-1) if scores.shape[-1] > 1 else torch.ones_like(own, dtype=torch.bool)
    return RecallMetrics(cosine, correct)


def _check_ns(ns: Sequence[int] | torch.Tensor) -> torch.Tensor:
    try:
        ns_t = torch.as_tensor(ns) if not isinstance(ns, torch.Tensor) else ns.cpu()
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(f"ns: expected a non-empty 1-D sequence of integers, got {type(ns).__name__} {ns!r}") from None
    if ns_t.dim() != 1 or ns_t.numel() == 0 or ns_t.is_floating_point() or ns_t.dtype == torch.bool:
        raise ValueError(f"ns: expected a non-empty 1-D sequence of integers, got {ns!r}")
    if bool((ns_t < 1).any()):
        raise ValueError(f"ns: expected numbers of pairs >= 1, got a minimum of {int(ns_t.min())}")
    if bool((ns_t[1:] <= ns_t[:-1]).any()):
        raise ValueError(f"ns: expected strictly increasing numbers of pairs, got {ns_t.tolist()}")
    return ns_t.long()


def _recall(keys: torch.Tensor, ns: torch.Tensor, gram: torch.Tensor, beaten: torch.Tensor) -> RecallMetrics:
    """Store the first ``n`` keys (every ``n`` in ``ns``) with one-hot values and read each back.

    One-hot values are an orthonormal set (any other gives the same numbers), so with ``G = K Kᵀ`` the
    read-out of item ``j`` after ``n`` writes has coordinates ``G[j, :n]``: cosine ``G_jj / ‖G[j, :n]‖``,
    correct when ``G_jj > max_{i<n, i≠j} G_ji``. keys: (..., N, d_k); ``gram`` (..., N, N) and ``beaten``
    (bool, same shape) are work buffers reused from chunk to chunk (fresh big tensors cost more than
    the maths). Fields come out as (..., len(ns), N).
    """
    N = keys.shape[-2]
    G = torch.matmul(keys, keys.mT, out=gram)                              # (..., N, N)
    diag = torch.diagonal(G, dim1=-2, dim2=-1).clone()                     # the signals ‖k_j‖²
    idx = torch.arange(N, device=keys.device)
    # the first rival i ≠ j at least as strong as the signal: item j is decoded correctly while n <= it
    beaten = torch.ge(G, diag[..., None], out=beaten)
    beaten.diagonal(dim1=-2, dim2=-1).fill_(False)
    first = beaten.view(torch.uint8).argmax(-1, keepdim=True)             # first True (or 0 when none)
    first = torch.where(beaten.gather(-1, first), first, N)[..., 0]
    # prefix sums Σ_{i<n} G_ij² over the grid: G is symmetric, so sum rows i (contiguous) in the
    # segments [n_{b-1}, n_b) between grid points, then accumulate the segments: (..., P, N)
    segment = torch.searchsorted(ns, idx, right=True)                     # row i -> its segment (P: unused)
    P = ns.numel()
    sumsq = torch.zeros(*G.shape[:-2], P + 1, N, dtype=G.dtype, device=G.device)
    sumsq = sumsq.index_add_(-2, segment, G.square_())[..., :P, :].cumsum(-2)   # (in place: G is spent)
    stored = idx[None, :] < ns[:, None]                                    # (P, N): item j was stored
    nan = torch.tensor(math.nan, dtype=keys.dtype, device=keys.device)
    return RecallMetrics(torch.where(stored, diag[..., None, :] / sumsq.sqrt(), nan),
                         (first[..., None, :] >= ns[:, None]) & stored)


def _recall_chunks(d_k: int, ns: Sequence[int] | torch.Tensor, trials: int, kind: str,
                   generator: torch.Generator | None, device: torch.device | str | None,
                   dtype: torch.dtype | None) -> Iterator[RecallMetrics]:
    """Checked arguments, then the experiment trial-chunk by trial-chunk (yields RecallMetrics)."""
    d_k = check_int("d_k", d_k, low=1)
    trials = check_int("trials", trials, low=1)
    kind = check_choice("kind", kind, KINDS)
    dtype = check_float_dtype("dtype", dtype)
    device = check_device("device", device)
    ns_t = _check_ns(ns)
    N = int(ns_t[-1])
    chunk = _chunk(N, dtype)
    gram = beaten = None
    for s in range(0, trials, chunk):  # memory chunks; all the trials inside a chunk run at once
        keys = random_keys(min(chunk, trials - s), N, d=d_k, kind=kind, generator=generator,
                           device=device, dtype=dtype)
        if gram is None or beaten is None:  # the first chunk allocates the buffers the others reuse
            gram = torch.empty(keys.shape[0], N, N, dtype=keys.dtype, device=keys.device)
            beaten = torch.empty(gram.shape, dtype=torch.bool, device=keys.device)
            ns_d = ns_t.to(keys.device)
        c = keys.shape[0]
        yield _recall(keys, ns_d, gram[:c], beaten[:c])


def _chunk(N: int, dtype: torch.dtype | None) -> int:
    """Trials per chunk: as many N×N Gram matrices as fit in ``_GRAM_BYTES``."""
    size = torch.empty((), dtype=dtype or torch.get_default_dtype()).element_size()
    return max(1, _GRAM_BYTES // (N * N * size))


def recall_sweep(d_k: int, ns: Sequence[int] | torch.Tensor, *, trials: int = 200, kind: str = "gaussian",
                 generator: torch.Generator | None = None, device: torch.device | str | None = None,
                 dtype: torch.dtype | None = None) -> RecallMetrics:
    """The store-and-recall experiment for one key dimension over ``trials`` independent trials and every n.

    Each trial draws ``max(ns)`` random keys (``kind``), stores the first ``n`` of them with one-hot
    values for every ``n`` in ``ns`` (the same draw, as a context that keeps growing) and reads each
    back. Trials are vectorised; they are only split into chunks so that the Gram matrices of one chunk
    stay within 32 MiB (the Binder budget). Returns :class:`RecallMetrics` with fields
    (trials, len(ns), max(ns)); item ``j >= n`` is nan/False.
    """
    parts = list(_recall_chunks(d_k, ns, trials, kind, generator, device, dtype))
    return parts[0] if len(parts) == 1 else RecallMetrics(*(torch.cat(f, dim=0) for f in zip(*parts, strict=True)))


# ---------------------------------------------------------------------------------------------- theory
def fidelity_theory(n: int | float | torch.Tensor, d_k: int | float | torch.Tensor) -> torch.Tensor:
    """Mean cosine between read-out and value after storing ``n`` pairs: ``1/√(1 + (n − 1)/d_k)``.

    Signal ``v_j`` (norm 1) plus ``n − 1`` crosstalk terms, each of variance ``1/d_k``, nearly orthogonal to it.
    n, d_k: numbers or tensors (broadcast). Returns a float64 tensor (or the dtype of a float tensor input).
    """
    check_numbers("n", n, low=1.0)
    check_numbers("d_k", d_k, low=0.0, low_open=True)
    n_t = n if isinstance(n, torch.Tensor) else torch.as_tensor(n, dtype=torch.float64)
    d_t = d_k if isinstance(d_k, torch.Tensor) else torch.as_tensor(d_k, dtype=torch.float64)
    if bool((n_t < 1).any()):
        raise ValueError(f"n: expected numbers of pairs >= 1, got a minimum of {float(n_t.min())}")
    if bool((d_t <= 0).any()):
        raise ValueError(f"d_k: expected a positive key dimension, got a minimum of {float(d_t.min())}")
    dtype = n_t.dtype if n_t.is_floating_point() else (d_t.dtype if d_t.is_floating_point() else torch.float64)
    return (1.0 + (n_t.to(dtype) - 1.0) / d_t.to(dtype)).rsqrt()


def average_capacity_theory(d_k: int | float | torch.Tensor, threshold: float = 0.8) -> torch.Tensor:
    """Largest n whose theoretical mean cosine stays ≥ ``threshold``: ``1 + d_k (1/θ² − 1)`` (linear in d_k)."""
    threshold = check_real("threshold", threshold, low=0.0, high=1.0, low_open=True)
    check_numbers("d_k", d_k, low=0.0, low_open=True)
    d_t = torch.as_tensor(d_k, dtype=torch.float64)
    return 1.0 + d_t * (1.0 / threshold**2 - 1.0)


def worst_case_bound(d_k: int | float | torch.Tensor) -> torch.Tensor:
    """Where a *typical* row's summed crosstalk reaches the signal: ``n − 1 ≈ √(π d_k / 2)``.

    Each of the ``n − 1`` overlaps has ``E|k_i·k_j| ≈ √(2/(π d_k))`` (the mean of a half-normal, i.e. of
    ``|x|`` for ``x ~ N(0, 1/d_k)``); their sum stays below the signal 1 while ``n − 1 ≲ √(π d_k / 2)``.
    The *worst* of n rows crosses earlier, so the capacities of criterion (c) (that worst row's crossing,
    see :func:`pavlovlab.retrieval.adversarial_error_curve`) sit below this curve.
    """
    check_numbers("d_k", d_k, low=0.0, low_open=True)
    d_t = torch.as_tensor(d_k, dtype=torch.float64)
    return (math.pi * d_t / 2).sqrt()


# -------------------------------------------------------------------------------------------- estimators
def _curve(name: str, ns: Sequence[int] | torch.Tensor, values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    ns_t = _check_ns(ns)
    if not isinstance(values, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(values).__name__}")
    if values.dim() == 0 or values.shape[-1] != ns_t.numel():
        raise ValueError(f"{name}: expected a last dim of len(ns) = {ns_t.numel()}, got shape {tuple(values.shape)}")
    return ns_t, values.detach().cpu()


def _largest_before_failure(ns: torch.Tensor, ok: torch.Tensor) -> int:
    """The largest n of the grid before the first failure (0 if the very first n fails)."""
    bad = (~ok).nonzero()
    last = int(bad[0]) - 1 if bad.numel() else ns.numel() - 1
    return int(ns[last]) if last >= 0 else 0


def capacity_from_fidelity(ns: Sequence[int] | torch.Tensor, fidelity: torch.Tensor, threshold: float = 0.8) -> int:
    """Average-case capacity: the largest n whose mean cosine stays ≥ ``threshold``.

    fidelity: (len(ns),) mean cosines, or (trials, len(ns)) per-trial mean cosines (averaged over trials),
    or per-item (trials, len(ns), n_max) with nan for items not stored (averaged over both).
    """
    threshold = check_real("threshold", threshold, low=0.0, high=1.0, low_open=True)
    if isinstance(fidelity, torch.Tensor) and fidelity.dim() == 3:
        fidelity = fidelity.nanmean(-1)
    ns_t, f = _curve("fidelity", ns, fidelity)
    f = f.reshape(-1, ns_t.numel()).double().mean(0)
    if not bool(torch.isfinite(f).all()):
        bad = [int(n) for n, x in zip(ns_t.tolist(), f.tolist(), strict=True) if not torch.isfinite(torch.tensor(x))]
        raise ValueError(f"fidelity: expected finite mean cosines, got NaN/inf at n = {bad[:5]}"
                         f"{' …' if len(bad) > 5 else ''} (a NaN is a failed measurement, not a cosine)")
    return _largest_before_failure(ns_t, f >= threshold)


# --------------------------------------------------------------------------------------- the full sweep
class CapacitySweep(NamedTuple):
    """Results of :func:`capacity_sweep`, one entry per key dimension (lists, as the n grids differ).

    ns[i]: (P,) the grid for d_ks[i]; fidelity[i]: (trials, P) mean cosine over the items of each trial.
    """

    d_ks: list[int]
    ns: list[torch.Tensor]
    fidelity: list[torch.Tensor]


def n_grid(d_k: int, points: int = 24, max_ratio: float = 4.0) -> torch.Tensor:
    """``points`` distinct numbers of pairs from 1 up to ``top = round(max_ratio · d_k)``, spaced geometrically.

    Geometric spacing resolves both scales of the story: the worst-case capacity near ``√d_k`` and the
    average-case capacity near ``d_k``. Neighbours are kept distinct (each at least one more than the last).
    The grid never passes ``top``: when ``points > top`` it is every n in 1..top (``top`` points, fewer than asked).
    """
    d_k = check_int("d_k", d_k, low=1)
    points = check_int("points", points, low=1)
    max_ratio = check_real("max_ratio", max_ratio, low=0.0, low_open=True)
    if round(max_ratio * d_k) < 1:
        raise ValueError(f"max_ratio: expected max_ratio · d_k >= 1 (the grid starts at n = 1), got "
                         f"{max_ratio:g} · {d_k} = {max_ratio * d_k:g}")
    top = round(max_ratio * d_k)
    if points >= top:
        return torch.arange(1, top + 1)
    geo = torch.logspace(0, math.log10(top), points, dtype=torch.float64).round().long()
    ns = [1]
    for x in geo[1:].tolist():   # a grid of a few dozen numbers, built once
        ns.append(max(x, ns[-1] + 1))
    shift = ns[-1] - top          # the lower bound can push the last few past ``top``: pull them back
    return torch.tensor([min(n, top - (len(ns) - 1 - i)) if shift > 0 else n for i, n in enumerate(ns)])


def capacity_sweep(d_ks: Sequence[int], *, points: int = 24, max_ratio: float = 4.0, trials: int = 200,
                   kind: str = "gaussian", generator: torch.Generator | None = None,
                   device: torch.device | str | None = None, dtype: torch.dtype | None = None,
                   progress: bool = False) -> CapacitySweep:
    """Run :func:`recall_sweep` for every key dimension on its grid :func:`n_grid`; keep each trial's mean cosine.

    The loop over the few ``d_ks`` stays in Python on purpose: the grids (n up to ``max_ratio·d_k``)
    and key sizes differ, and padding every dimension to the largest one would multiply the work by
    ``len(d_ks)``. Everything inside (trials, n, items) is vectorised.
    """
    if isinstance(d_ks, (str, bytes)) or not hasattr(d_ks, "__len__"):
        raise TypeError(f"d_ks: expected a non-empty sequence of key dimensions such as [16, 32], "
                        f"got {type(d_ks).__name__} {d_ks!r}")
    if len(d_ks) == 0:
        raise ValueError(f"d_ks: expected a non-empty sequence of key dimensions, got {d_ks!r}")
    d_ks = [check_int(f"d_ks[{i}]", d, low=1) for i, d in enumerate(d_ks)]
    out = CapacitySweep(d_ks, [], [])
    for d in tqdm(d_ks, desc="d_k", disable=not progress):
        ns = n_grid(d, points, max_ratio)
        parts = [m.cosine.nanmean(-1) for m in _recall_chunks(d, ns, trials, kind, generator, device, dtype)]
        out.ns.append(ns)
        out.fidelity.append(torch.cat(parts) if len(parts) > 1 else parts[0])
    return out


# ===================================================================================================
# Capacity measured on actual read-outs: three retrieval criteria, per trial, at every n
# ===================================================================================================
CRITERIA = ("cosine", "argmax", "adversarial")
"""Retrieval criteria of :func:`retrieval_capacity`: (a) every stored item's cosine ≥ θ; (b) every item
decoded correctly by argmax over a fixed codebook; (c) adversarial values (Hebbian memory only)."""


class RetrievalCapacity(NamedTuple):
    """Per-trial capacities of :func:`retrieval_capacity`.

    capacity: (trials,) long, the largest n with the criterion met after every n' ≤ n writes;
    censored: (trials,) bool, never failed up to ``n_max`` (the capacity is then at least ``n_max``).
    """

    capacity: torch.Tensor
    censored: torch.Tensor
    n_max: int


def retrieval_capacity(d_k: int, criterion: str, *, trials: int = 100, n_max: int | None = None,
                       rule: str = "hebbian", beta: float = 1.0, threshold: float = 0.8, d_v: int | None = None,
                       codebook_size: int = 32, kind: str = "sphere", generator: torch.Generator | None = None,
                       device: torch.device | str | None = None, dtype: torch.dtype | None = None,
                       chunk: int = 25) -> RetrievalCapacity:
    """Store random pairs one by one and record, per trial, how many fit before the first retrieval failure.

    criterion:
      - ``"cosine"`` (a): every stored item's read-out has cosine ≥ ``threshold`` with its value; values
        are random unit vectors of dimension ``d_v`` (default ``d_k``);
      - ``"argmax"`` (b): every stored item is decoded correctly by argmax over a fixed codebook of
        ``codebook_size`` orthonormal codewords (one-hot labels, so ``d_v = codebook_size``, whatever n);
      - ``"adversarial"`` (c): the values are chosen, given the keys, by the sign-flip adversary of
        :func:`pavlovlab.retrieval.adversarial_error_curve`; fails once the worst item's read-out has cosine ≤ 0
        with its value
        (error along the value ≥ 1: sign decoding fails), i.e. at the first n with
        ``max_j Σ_{i≠j}|G_ij| ≥ G_jj`` (Hebbian memory only).
    rule / beta: the memory, see :func:`pavlovlab.retrieval.readout_weights`. Keys: ``kind`` (unit sphere by default).
    n_max: the longest context tried (default ``4 d_k``): a trial that never fails is censored.
    Trials run ``chunk`` at a time (vectorised inside a chunk; chunks bound the memory).
    """
    d_k = check_int("d_k", d_k, low=1)
    criterion = check_choice("criterion", criterion, CRITERIA)
    trials = check_int("trials", trials, low=1)
    n_max = 4 * d_k if n_max is None else check_int("n_max", n_max, low=1)
    rule = check_choice("rule", rule, MEMORIES)
    threshold = check_real("threshold", threshold, low=-1.0, high=1.0)
    d_v = d_k if d_v is None else check_int("d_v", d_v, low=1)
    codebook_size = check_int("codebook_size", codebook_size, low=2)
    chunk = check_int("chunk", chunk, low=1)
    if criterion == "adversarial" and rule != "hebbian":
        raise ValueError(f"rule: the adversarial criterion is derived for the Hebbian memory, got {rule!r}")
    caps = []
    for s in range(0, trials, chunk):
        c = min(chunk, trials - s)
        keys = random_keys(c, n_max, d=d_k, kind=kind, generator=generator, device=device, dtype=dtype)
        if criterion == "adversarial":
            ok = adversarial_error_curve(keys)[0] < 1
        elif criterion == "cosine":
            values = random_values(c, n_max, d=d_v, kind="sphere", generator=generator, device=device,
                                   dtype=keys.dtype)
            ok = min_cosine_curve(*readout_weights(keys, values, rule, beta), values) >= threshold
        else:
            labels = torch.randint(0, codebook_size, (c, n_max), generator=generator).to(keys.device)
            codebook = torch.eye(codebook_size, dtype=keys.dtype, device=keys.device)
            A, W = readout_weights(keys, codebook[labels], rule, beta)
            ok = decoding_curve(A, W, labels, codebook)
        caps.append(first_failure(ok).cpu())
    capacity = torch.cat(caps)
    return RetrievalCapacity(capacity, capacity >= n_max, n_max)


class CapacityScaling(NamedTuple):
    """Capacity against key dimension (:func:`capacity_scaling`).

    d_ks: the key dimensions; mean, sem: (len(d_ks),) mean capacity over trials and its standard error;
    censored: (len(d_ks),) fraction of censored trials; slope: log–log slope of mean capacity against
    d_k; slope_se: its bootstrap standard error (trials resampled); capacities: per-trial results.
    """

    d_ks: list[int]
    mean: torch.Tensor
    sem: torch.Tensor
    censored: torch.Tensor
    slope: float
    slope_se: float
    capacities: list[torch.Tensor]


def capacity_scaling(d_ks: Sequence[int], criterion: str, *, n_max: Callable[[int], int] | None = None,
                     resamples: int = 1000, progress: bool = False, generator: torch.Generator | None = None,
                     **kwargs: Any) -> CapacityScaling:
    """:func:`retrieval_capacity` for every key dimension, with the log–log slope and its bootstrap error.

    n_max: a function ``d_k -> longest context`` (default ``4 d_k``). Other keywords go to
    :func:`retrieval_capacity`. The loop over the few ``d_ks`` stays in Python (sizes differ).
    """
    if isinstance(d_ks, int) or len(d_ks) < 2:
        raise ValueError(f"d_ks: expected a sequence of at least two key dimensions, got {d_ks!r}")
    d_ks = [check_int(f"d_ks[{i}]", d, low=1) for i, d in enumerate(d_ks)]
    caps = []
    cens = []
    for d in tqdm(d_ks, desc="d_k", disable=not progress):
        r = retrieval_capacity(d, criterion, n_max=None if n_max is None else n_max(d), generator=generator,
                               **kwargs)
        caps.append(r.capacity)
        cens.append(r.censored.double().mean())
    mean = torch.stack([c.double().mean() for c in caps])
    sem = torch.stack([c.double().std() / math.sqrt(len(c)) if len(c) > 1 else torch.tensor(0.0) for c in caps])
    if bool((mean <= 0).any()):
        slope, slope_se = math.nan, math.nan
    else:
        slope, slope_se = fit_slope(d_ks, mean), bootstrap_slope_se(d_ks, caps, resamples=resamples, seed=0)
    return CapacityScaling(d_ks, mean, sem, torch.stack(cens), slope, slope_se, caps)


def local_slopes(scaling: CapacityScaling) -> tuple[torch.Tensor, torch.Tensor]:
    """Log–log slopes between neighbouring key dimensions, and their standard errors from the trials.

    ``b_i = ln(m_{i+1}/m_i) / ln(d_{i+1}/d_i)`` for the mean capacities ``m`` of ``scaling``; with
    independent trials at each ``d_k`` the delta method gives
    ``se(b_i) = √((s_i/m_i)² + (s_{i+1}/m_{i+1})²) / ln(d_{i+1}/d_i)`` (``s`` the standard errors of the
    means). The error is sampling error only: a single fitted slope hides how ``b_i`` drifts with ``d_k``
    (curvature), which these show. Returns ``(slopes, se)``, each (len(d_ks) − 1,) float64.
    """
    if not isinstance(scaling, CapacityScaling):
        raise TypeError(f"scaling: expected a CapacityScaling, got {type(scaling).__name__}")
    sizes: dict[str, Sized] = {"scaling.d_ks": scaling.d_ks, "scaling.mean": scaling.mean, "scaling.sem": scaling.sem}
    check_lengths(**sizes)
    check_tensor("scaling.mean", scaling.mean)
    check_tensor("scaling.sem", scaling.sem)
    if bool((scaling.sem < 0).any()):
        raise ValueError(f"scaling.sem: expected standard errors >= 0, got {scaling.sem.tolist()}")
    d_ks = [check_int(f"scaling.d_ks[{i}]", d, low=1) for i, d in enumerate(scaling.d_ks)]
    if len(set(d_ks)) < len(d_ks):
        raise ValueError(f"scaling.d_ks: expected distinct key dimensions (a slope needs two), got {d_ks}")
    m, s = scaling.mean.double(), scaling.sem.double()
    if bool((m <= 0).any()):
        raise ValueError(f"scaling: expected positive mean capacities for a log-log slope, got {m.tolist()}")
    gap = torch.tensor(scaling.d_ks, dtype=torch.float64).log().diff()
    rel = s / m
    return m.log().diff() / gap, (rel[1:].square() + rel[:-1].square()).sqrt() / gap


SCALINGS = {
    "d_k": lambda d: d,
    "d_k / log d_k": lambda d: d / math.log(d),
    "√d_k": lambda d: math.sqrt(d),
}
"""Candidate laws for the capacity: divide the capacity by each and see which ratio stays flat."""


def scaling_residuals(d_ks: Sequence[int], capacities: Sequence[float] | torch.Tensor) -> dict[str, float]:
    """For each law f of :data:`SCALINGS`, the log–log slope of ``capacity / f(d_k)`` against ``d_k``.

    0 means the law fits the trend; the law with the residual slope nearest 0 describes the data best.
    """
    check_lengths(d_ks=d_ks, capacities=capacities)
    check_numbers("capacities", capacities, low=0.0, low_open=True)
    caps = torch.as_tensor(capacities, dtype=torch.float64).flatten().tolist()
    return {name: fit_slope(d_ks, [c / f(d) for c, d in zip(caps, d_ks, strict=True)]) for name, f in SCALINGS.items()}


__all__ = [
    "CRITERIA",
    "SCALINGS",
    "CapacityScaling",
    "CapacitySweep",
    "RecallMetrics",
    "RetrievalCapacity",
    "average_capacity_theory",
    "capacity_from_fidelity",
    "capacity_scaling",
    "capacity_sweep",
    "fidelity_theory",
    "local_slopes",
    "n_grid",
    "recall_sweep",
    "retrieval_capacity",
    "scaling_residuals",
    "store_and_recall",
    "worst_case_bound",
]
