"""Average-case recall of the Hebbian memory: how well n bell→food pairs come back, and how many fit on average.

Store ``n`` pairs with Hebb's rule, ``S = Σ_i v_i k_iᵀ``, and read item ``j`` back with its own key:

    S k_j = v_j (k_j·k_j) + Σ_{i≠j} v_i (k_i·k_j)       (signal + crosstalk)

For unit keys drawn uniformly on the sphere, ``E[(k_i·k_j)²] = 1/d_k`` exactly (``E[k kᵀ] = I/d_k``), so
the crosstalk's squared norm is about ``(n−1)/d_k`` and the mean cosine (the *fidelity*) between the read-out
and the true value is about ``1/√(1 + (n−1)/d_k)``: average-case capacity grows as ``O(d_k)``
(:func:`recall_sweep`, :func:`capacity_sweep`, :func:`fidelity_theory`, :func:`average_capacity_theory`).
The capacity under stricter, per-item criteria is in :mod:`pavlovlab.capacity`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

import torch
from tqdm.auto import tqdm

from .._checks import (
    check_choice,
    check_device,
    check_fits,
    check_float_dtype,
    check_int,
    check_numbers,
    check_real,
    checked_by,
    unchecked,
)
from ..memory.hebbian import _outer_product_memory
from ..sampling import KINDS, _check_draw, random_keys

_random_keys = unchecked(random_keys)

_GRAM_BYTES = 2**25
"""Memory budget of one vectorised chunk of Gram matrices in :func:`recall_sweep` (32 MiB)."""


# ------------------------------------------------------------------------------------------- experiment
class RecallMetrics(NamedTuple):
    """Per-item results of a store-and-recall experiment (``nan``/``False`` where an item was not stored).

    cosine: cos(read-out, true value); correct: the read-out is closest (largest dot product) to its
    own value among the *n stored* values. That codebook grows with n: with one-hot values it only asks
    whether each key is its own nearest key (:func:`pavlovlab.capacity.retrieval_capacity` uses a fixed codebook).
    """

    cosine: torch.Tensor
    correct: torch.Tensor


def _store_and_recall(keys: torch.Tensor, values: torch.Tensor) -> RecallMetrics:
    """Store every pair with Hebb's rule ``S = Σ_i v_i k_iᵀ``, then read each item back as ``S k_j``: the literal
    form of the experiment that :func:`recall_sweep` runs through the Gram matrix (its tests compare the two).

    keys: (..., n, d_k), values: (..., n, d_v); leading dims (trials, ...) broadcast.
    Returns :class:`RecallMetrics` with fields of shape (..., n); an exact tie with a rival is an error.
    """
    S = _outer_product_memory(keys, values)                # (..., d_v, d_k): the bucket
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


def _check_recall(d_k: int, ns: Sequence[int] | torch.Tensor, trials: int, kind: str,
                  generator: torch.Generator | None, device: torch.device | str | None,
                  dtype: torch.dtype | None) -> dict[str, Any]:
    """The arguments of :func:`recall_sweep` (the grid ``ns`` as a long tensor, the device and dtype as torch
    objects), with the largest n's Gram matrix and the first chunk's draw of keys checked to fit in memory."""
    d_k = check_int("d_k", d_k, low=1)
    trials = check_int("trials", trials, low=1)
    kind = check_choice("kind", kind, KINDS)
    dtype = check_float_dtype("dtype", dtype)
    checked_device = check_device("device", device)
    ns_t = _check_ns(ns)
    N = int(ns_t[-1])
    check_fits("ns", (N, N), dtype, checked_device, "one trial's Gram matrix, n × n for the largest n",
               "sweep smaller numbers of pairs")
    _check_draw((min(_chunk(N, dtype), trials), N), d_k, kind, generator, checked_device, dtype)
    return {"d_k": d_k, "ns": ns_t, "trials": trials, "device": checked_device, "dtype": dtype}


def _recall_chunks(d_k: int, ns: Sequence[int] | torch.Tensor, trials: int, kind: str,
                   generator: torch.Generator | None, device: torch.device | str | None,
                   dtype: torch.dtype | None) -> Iterator[RecallMetrics]:
    """The experiment of :func:`recall_sweep` on checked arguments, trial-chunk by trial-chunk (yields
    RecallMetrics)."""
    ns = torch.as_tensor(ns)
    N = int(ns[-1])
    chunk = _chunk(N, dtype)
    gram = beaten = None
    for s in range(0, trials, chunk):  # memory chunks; all the trials inside a chunk run at once
        keys = _random_keys(min(chunk, trials - s), N, d=d_k, kind=kind, generator=generator, device=device,
                            dtype=dtype)
        if gram is None or beaten is None:  # the first chunk allocates the buffers the others reuse
            gram = torch.empty(keys.shape[0], N, N, dtype=keys.dtype, device=keys.device)
            beaten = torch.empty(gram.shape, dtype=torch.bool, device=keys.device)
            ns_d = ns.to(keys.device)
        c = keys.shape[0]
        yield _recall(keys, ns_d, gram[:c], beaten[:c])


def _chunk(N: int, dtype: torch.dtype | None) -> int:
    """Trials per chunk: as many N×N Gram matrices as fit in ``_GRAM_BYTES``."""
    size = torch.empty((), dtype=dtype or torch.get_default_dtype()).element_size()
    return max(1, _GRAM_BYTES // (N * N * size))


@checked_by(_check_recall)
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
def _check_theory(n: int | float | torch.Tensor, d_k: int | float | torch.Tensor) -> None:
    """The numbers of pairs n >= 1 and the key dimensions d_k > 0 of :func:`fidelity_theory` (numbers or arrays)."""
    check_numbers("n", n, low=1.0)
    check_numbers("d_k", d_k, low=0.0, low_open=True)


@checked_by(_check_theory)
def fidelity_theory(n: int | float | torch.Tensor, d_k: int | float | torch.Tensor) -> torch.Tensor:
    """Mean cosine between read-out and value after storing ``n`` pairs: ``1/√(1 + (n − 1)/d_k)``.

    Signal ``v_j`` (norm 1) plus ``n − 1`` crosstalk terms, each of variance ``1/d_k``, nearly orthogonal to it.
    n, d_k: numbers or tensors (broadcast). Returns a float64 tensor (or the dtype of a float tensor input).
    """
    n_t = n if isinstance(n, torch.Tensor) else torch.as_tensor(n, dtype=torch.float64)
    d_t = d_k if isinstance(d_k, torch.Tensor) else torch.as_tensor(d_k, dtype=torch.float64)
    dtype = n_t.dtype if n_t.is_floating_point() else (d_t.dtype if d_t.is_floating_point() else torch.float64)
    return (1.0 + (n_t.to(dtype) - 1.0) / d_t.to(dtype)).rsqrt()


_fidelity_theory = unchecked(fidelity_theory)


def _check_average_theory(d_k: int | float | torch.Tensor, threshold: float) -> dict[str, float]:
    """The threshold in (0, 1] (as a float) and the key dimensions d_k > 0 of :func:`average_capacity_theory`."""
    threshold = check_real("threshold", threshold, low=0.0, high=1.0, low_open=True)
    check_numbers("d_k", d_k, low=0.0, low_open=True)
    return {"threshold": threshold}


@checked_by(_check_average_theory)
def average_capacity_theory(d_k: int | float | torch.Tensor, threshold: float = 0.8) -> torch.Tensor:
    """Largest n whose theoretical mean cosine stays ≥ ``threshold``: ``1 + d_k (1/θ² − 1)`` (linear in d_k)."""
    d_t = torch.as_tensor(d_k, dtype=torch.float64)
    return 1.0 + d_t * (1.0 / threshold**2 - 1.0)


# -------------------------------------------------------------------------------------------- estimators
def _check_curve(name: str, ns: Sequence[int] | torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """A grid and a curve (..., len(ns)) over it; returns the grid as a long tensor."""
    ns_t = _check_ns(ns)
    if not isinstance(values, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(values).__name__}")
    if values.dim() == 0 or values.shape[-1] != ns_t.numel():
        raise ValueError(f"{name}: expected a last dim of len(ns) = {ns_t.numel()}, got shape {tuple(values.shape)}")
    return ns_t


def _check_gap(ns: Sequence[int] | torch.Tensor, fidelity: torch.Tensor, d_k: int | float) -> dict[str, torch.Tensor]:
    """Per-trial mean cosines (trials >= 2, len(ns)) over the grid ``ns`` (returned as a long tensor), and d_k > 0."""
    ns_t = _check_curve("fidelity", ns, fidelity)
    if fidelity.dim() != 2 or fidelity.shape[0] < 2:
        raise ValueError(f"fidelity: expected (trials >= 2, len(ns)) per-trial mean cosines, got shape "
                         f"{tuple(fidelity.shape)}")
    check_numbers("d_k", d_k, low=0.0, low_open=True)
    return {"ns": ns_t}


@checked_by(_check_gap)
def fidelity_gap(ns: Sequence[int] | torch.Tensor, fidelity: torch.Tensor,
                 d_k: int | float) -> tuple[torch.Tensor, torch.Tensor]:
    """Signed relative gap of a measured mean cosine from :func:`fidelity_theory`, with its sampling error.

    fidelity: (trials, len(ns)) per-trial mean cosines. With ``m`` the mean over trials, ``s`` their standard
    deviation and ``f = 1/√(1 + (n − 1)/d_k)``: ``gap = (m − f)/f`` and ``se = s/√trials/f``. The formula is
    exact in expectation for the crosstalk of unit keys; the mean cosine sits a little above it for unit keys
    (``1/√(1 + x)`` is convex in the crosstalk ``x``) and below it for Gaussian keys (their normalised
    crosstalk has mean ``(n − 1)/(d_k − 2)``). Returns ``(gap, se)``, each (len(ns),) float64.
    """
    theory = _fidelity_theory(torch.as_tensor(ns).double(), d_k)
    fid = fidelity.detach().cpu().double()
    return (fid.mean(0) - theory) / theory, fid.std(0) / math.sqrt(fid.shape[0]) / theory


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
    ns_t = _check_curve("fidelity", ns, fidelity)
    f = fidelity.detach().cpu()
    f = _check_means(ns_t, f.reshape(-1, ns_t.numel()).double().mean(0))
    return _largest_before_failure(ns_t, f >= threshold)


def _check_means(ns: torch.Tensor, f: torch.Tensor) -> torch.Tensor:
    """Mean cosines over the grid ``ns``, finite (a NaN is a failed measurement, not a cosine); returns them."""
    if not bool(torch.isfinite(f).all()):
        bad = [int(n) for n, x in zip(ns.tolist(), f.tolist(), strict=True) if not torch.isfinite(torch.tensor(x))]
        raise ValueError(f"fidelity: expected finite mean cosines, got NaN/inf at n = {bad[:5]}"
                         f"{' …' if len(bad) > 5 else ''} (a NaN is a failed measurement, not a cosine)")
    return f


# --------------------------------------------------------------------------------------- the full sweep
class CapacitySweep(NamedTuple):
    """Results of :func:`capacity_sweep`, one entry per key dimension (lists, as the n grids differ).

    ns[i]: (P,) the grid for d_ks[i]; fidelity[i]: (trials, P) mean cosine over the items of each trial.
    """

    d_ks: list[int]
    ns: list[torch.Tensor]
    fidelity: list[torch.Tensor]


def _check_grid(d_k: int, points: int, max_ratio: float) -> dict[str, Any]:
    """The arguments of :func:`n_grid`, returned as checked (a grid that reaches n = 1 at least)."""
    d_k = check_int("d_k", d_k, low=1)
    points = check_int("points", points, low=1)
    max_ratio = check_real("max_ratio", max_ratio, low=0.0, low_open=True)
    if round(max_ratio * d_k) < 1:
        raise ValueError(f"max_ratio: expected max_ratio · d_k >= 1 (the grid starts at n = 1), got "
                         f"{max_ratio:g} · {d_k} = {max_ratio * d_k:g}")
    return {"d_k": d_k, "points": points, "max_ratio": max_ratio}


@checked_by(_check_grid)
def n_grid(d_k: int, points: int = 24, max_ratio: float = 4.0) -> torch.Tensor:
    """``points`` distinct numbers of pairs from 1 up to ``top = round(max_ratio · d_k)``, spaced geometrically.

    Geometric spacing resolves both scales of the story: the worst-case capacity near ``√d_k`` and the
    average-case capacity near ``d_k``. Neighbours are kept distinct (each at least one more than the last).
    The grid never passes ``top``: when ``points > top`` it is every n in 1..top (``top`` points, fewer than asked).
    """
    top = round(max_ratio * d_k)
    if points >= top:
        return torch.arange(1, top + 1)
    geo = torch.logspace(0, math.log10(top), points, dtype=torch.float64).round().long()
    ns = [1]
    for x in geo[1:].tolist():   # a grid of a few dozen numbers, built once
        ns.append(max(x, ns[-1] + 1))
    shift = ns[-1] - top          # the lower bound can push the last few past ``top``: pull them back
    return torch.tensor([min(n, top - (len(ns) - 1 - i)) if shift > 0 else n for i, n in enumerate(ns)])


_n_grid = unchecked(n_grid)


def _check_sweep(d_ks: Sequence[int], points: int, max_ratio: float, trials: int, kind: str,
                 generator: torch.Generator | None, device: torch.device | str | None,
                 dtype: torch.dtype | None) -> dict[str, object]:
    """The arguments of :func:`capacity_sweep`: the key dimensions as ints, and each one's grid (:func:`n_grid`) and
    experiment (:func:`recall_sweep`) checked, in the order the sweep runs them, before the first one runs."""
    d_ks = _check_d_ks(d_ks)
    for d in d_ks:
        grid = _check_grid(d, points, max_ratio)
        run = _check_recall(d, _n_grid(d, grid["points"], grid["max_ratio"]), trials, kind, generator,
                            device, dtype)
    return {"d_ks": d_ks, "points": grid["points"], "max_ratio": grid["max_ratio"], "trials": run["trials"],
            "device": run["device"], "dtype": run["dtype"]}


@checked_by(_check_sweep)
def capacity_sweep(d_ks: Sequence[int], *, points: int = 24, max_ratio: float = 4.0, trials: int = 200,
                   kind: str = "gaussian", generator: torch.Generator | None = None,
                   device: torch.device | str | None = None, dtype: torch.dtype | None = None,
                   progress: bool = False) -> CapacitySweep:
    """Run :func:`recall_sweep` for every key dimension on its grid :func:`n_grid`; keep each trial's mean cosine.

    The loop over the few ``d_ks`` stays in Python on purpose: the grids (n up to ``max_ratio·d_k``)
    and key sizes differ, and padding every dimension to the largest one would multiply the work by
    ``len(d_ks)``. Everything inside (trials, n, items) is vectorised.
    """
    out = CapacitySweep(list(d_ks), [], [])
    for d in tqdm(d_ks, desc="d_k", disable=not progress):
        ns = _n_grid(d, points, max_ratio)
        parts = [m.cosine.nanmean(-1) for m in _recall_chunks(d, ns, trials, kind, generator, device, dtype)]
        out.ns.append(ns)
        out.fidelity.append(torch.cat(parts) if len(parts) > 1 else parts[0])
    return out


def _check_d_ks(d_ks: Sequence[int]) -> list[int]:
    """A non-empty sequence of key dimensions >= 1, returned as ints."""
    if isinstance(d_ks, (str, bytes)) or not hasattr(d_ks, "__len__"):
        raise TypeError(f"d_ks: expected a non-empty sequence of key dimensions such as [16, 32], "
                        f"got {type(d_ks).__name__} {d_ks!r}")
    if len(d_ks) == 0:
        raise ValueError(f"d_ks: expected a non-empty sequence of key dimensions, got {d_ks!r}")
    return [check_int(f"d_ks[{i}]", d, low=1) for i, d in enumerate(d_ks)]


__all__ = [
    "CapacitySweep",
    "RecallMetrics",
    "average_capacity_theory",
    "capacity_from_fidelity",
    "capacity_sweep",
    "fidelity_gap",
    "fidelity_theory",
    "n_grid",
    "recall_sweep",
]
