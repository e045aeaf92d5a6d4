"""Capacity of the associative memory: how many bell→food pairs fit in the bucket ``S`` before they blur.

Store ``n`` pairs with Hebb's rule, ``S = Σ_i v_i k_iᵀ``, and read item ``j`` back with its own key:

    S k_j = v_j (k_j·k_j) + Σ_{i≠j} v_i (k_i·k_j)       (signal + crosstalk)

With random keys of dimension ``d_k`` each overlap ``k_i·k_j`` has variance ``1/d_k``, so the crosstalk
grows like ``√((n−1)/d_k)`` and the mean cosine between the read-out and the true value is about
``1/√(1 + (n−1)/d_k)``: average-case capacity grows as ``O(d_k)``. Requiring the summed crosstalk
``Σ_{i≠j} |k_i·k_j|`` to stay below the signal for every row (error-free recall, whatever the values)
only allows ``n ≲ √(π d_k / 2)``: worst-case capacity grows as ``O(√d_k)`` (arXiv:2508.08289).

Main entry points: :func:`random_keys` / :func:`random_values`, :func:`store_and_recall` (any values),
:func:`recall_sweep` (many trials and many n at once, one-hot values), :func:`capacity_sweep` (several
``d_k``), the theory curves :func:`fidelity_theory`, :func:`average_capacity_theory`,
:func:`worst_case_bound`, and the estimators ``capacity_from_*`` and :func:`fit_slope`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import torch
from tqdm.auto import tqdm

from ._checks import check_choice, check_int, check_numbers, check_real, check_tensor
from ._checks import check_float_dtype as check_dtype  # the lead renames the call at merge (issue 14)
from .hebbian import outer_product_memory

KINDS = ("gaussian", "sphere", "orthogonal", "binary")
"""Key/value distributions: i.i.d. N(0, 1/d) entries; uniform on the unit sphere; orthonormal frames
(blocks of ``d`` mutually orthogonal unit vectors); entries ±1/√d with equal probability."""

_GRAM_BYTES = 2**25
"""Memory budget of one vectorised chunk of Gram matrices in :func:`recall_sweep` (32 MiB)."""


# --------------------------------------------------------------------------------------------- sampling
def _shape(shape: tuple) -> tuple[int, ...]:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, torch.Size)):
        shape = tuple(shape[0])
    for i, s in enumerate(shape):
        check_int(f"shape[{i}]", s, low=0)
    return tuple(shape)


def random_keys(*shape: int, d: int, kind: str = "gaussian", generator: torch.Generator | None = None,
                device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> torch.Tensor:
    """Random keys of dimension ``d``, shape ``(*shape, d)``, with ``E‖k‖² = 1``.

    kind: ``"gaussian"`` (entries N(0, 1/d)), ``"sphere"`` (unit vectors, uniform direction),
    ``"orthogonal"`` (along dim -2 the keys form orthonormal frames: the first ``d`` are mutually
    orthogonal, the next ``d`` an independent frame, and so on) or ``"binary"`` (entries ±1/√d).
    Numbers are drawn on the CPU (``generator``) and then moved, so every device sees the same keys.

    >>> K = random_keys(100, 16, d=32, kind="sphere")   # 100 trials of 16 keys in 32 dimensions
    """
    shape = _shape(shape)
    d = check_int("d", d, low=1)
    kind = check_choice("kind", kind, KINDS)
    dtype = torch.get_default_dtype() if dtype is None else check_dtype("dtype", dtype)
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(f"generator: expected a torch.Generator or None, got {type(generator).__name__}")
    work = torch.float64 if dtype == torch.float64 else torch.float32
    if kind == "binary":
        x = torch.randint(0, 2, (*shape, d), generator=generator, dtype=torch.int8).to(work).mul_(2 / math.sqrt(d))
        x = x.sub_(1 / math.sqrt(d))
    elif kind == "orthogonal":
        lead, n = (shape[:-1], shape[-1]) if shape else ((), 1)
        blocks = max(1, -(-n // d))
        g = torch.randn(*lead, blocks, d, d, generator=generator, dtype=torch.float64)
        q, r = torch.linalg.qr(g)
        q = q * torch.sign(torch.diagonal(r, dim1=-2, dim2=-1))[..., None, :]  # Haar-distributed frames
        x = q.mT.reshape(*lead, blocks * d, d)[..., :n, :].to(work)  # rows of each frame are orthonormal
        x = x.reshape(*shape, d)
    else:
        x = torch.randn(*shape, d, generator=generator, dtype=work)
        x = x.div_(x.norm(dim=-1, keepdim=True).clamp_min_(1e-30)) if kind == "sphere" else x.div_(math.sqrt(d))
    return x.to(device=device, dtype=dtype)


def random_values(*shape: int, d: int, kind: str = "gaussian", generator: torch.Generator | None = None,
                  device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> torch.Tensor:
    """Random values (the "food", US) of dimension ``d``, shape ``(*shape, d)``: same kinds as :func:`random_keys`."""
    return random_keys(*shape, d=d, kind=kind, generator=generator, device=device, dtype=dtype)


# ------------------------------------------------------------------------------------------- experiment
class RecallMetrics(NamedTuple):
    """Per-item metrics of a store-and-recall experiment (``nan``/``False`` where an item was not stored).

    cosine: cos(read-out, true value); sq_error: ‖read-out − true value‖²; correct: the read-out is
    closest (largest dot product) to its own value among the stored ones; crosstalk: the row's summed
    crosstalk relative to its signal, ``Σ_{i≠j} |k_i·k_j| / ‖k_j‖²`` (below 1 ⇒ error-free recall).
    """

    cosine: torch.Tensor
    sq_error: torch.Tensor
    correct: torch.Tensor
    crosstalk: torch.Tensor


def _crosstalk(G: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Signal ‖k_j‖² (diagonal of the Gram matrix) and the absolute off-diagonal overlaps."""
    diag = torch.diagonal(G, dim1=-2, dim2=-1)
    off = G.abs()
    off.diagonal(dim1=-2, dim2=-1).zero_()
    return diag, off


def store_and_recall(keys: torch.Tensor, values: torch.Tensor) -> RecallMetrics:
    """Store every pair with Hebb's rule ``S = Σ_i v_i k_iᵀ``, then read each item back as ``S k_j``.

    keys: (..., n, d_k), values: (..., n, d_v); leading dims (trials, ...) broadcast.
    Returns :class:`RecallMetrics` with fields of shape (..., n).
    """
    S = outer_product_memory(keys, values)                 # (..., d_v, d_k): the bucket (checks the pairs)
    read = keys @ S.mT                                     # (..., n, d_v): S k_j for every j
    cosine = torch.nn.functional.cosine_similarity(read, values, dim=-1)
    sq_error = (read - values).pow(2).sum(-1)
    scores = read @ values.mT                              # (..., n, n): match against every stored value
    own = torch.diagonal(scores, dim1=-2, dim2=-1)
    rival = scores.masked_fill(torch.eye(scores.shape[-1], dtype=torch.bool, device=scores.device), -math.inf)
    correct = own > rival.amax(-1) if scores.shape[-1] > 1 else torch.ones_like(own, dtype=torch.bool)
    diag, off = _crosstalk(keys @ keys.mT)
    return RecallMetrics(cosine, sq_error, correct, off.sum(-1) / diag)


def _check_ns(ns: Sequence[int] | torch.Tensor) -> torch.Tensor:
    ns_t = torch.as_tensor(ns) if not isinstance(ns, torch.Tensor) else ns.cpu()
    if ns_t.dim() != 1 or ns_t.numel() == 0 or ns_t.is_floating_point() or ns_t.dtype == torch.bool:
        raise ValueError(f"ns: expected a non-empty 1-D sequence of integers, got {ns!r}")
    if bool((ns_t < 1).any()):
        raise ValueError(f"ns: expected numbers of pairs >= 1, got a minimum of {int(ns_t.min())}")
    if bool((ns_t[1:] <= ns_t[:-1]).any()):
        raise ValueError(f"ns: expected strictly increasing numbers of pairs, got {ns_t.tolist()}")
    return ns_t.long()


def recall_from_keys(keys: torch.Tensor, ns: Sequence[int] | torch.Tensor) -> RecallMetrics:
    """Store the first ``n`` keys (for every ``n`` in ``ns``) with one-hot values and read each back.

    The values are one-hot labels (an orthonormal set: any other orthonormal values give the same
    numbers), so every error comes from the keys' crosstalk. With the Gram matrix ``G = K Kᵀ`` the
    read-out of item ``j`` after ``n`` writes has coordinates ``G[j, :n]``: cosine ``G_jj / ‖G[j, :n]‖``,
    squared error ``‖G[j, :n]‖² − 2 G_jj + 1``, correct when ``G_jj > max_{i<n, i≠j} G_ji`` (a tie is
    an error).

    keys: (..., N, d_k) with ``N >= max(ns)``; ns: increasing ints. Every ``n`` reuses the same draw
    (the first ``n`` keys), exactly as a context that keeps growing.
    Returns :class:`RecallMetrics` with fields (..., len(ns), max(ns)); item ``j >= n`` is nan/False.
    """
    check_tensor("keys", keys, min_rank=2)
    ns_t = _check_ns(ns)
    N = int(ns_t[-1])
    if keys.shape[-2] < N:
        raise ValueError(f"keys: expected at least max(ns) = {N} keys along dim -2, got shape {tuple(keys.shape)}")
    return _recall(keys.detach()[..., :N, :], ns_t.to(keys.device))


def _recall(keys: torch.Tensor, ns: torch.Tensor, gram: torch.Tensor | None = None,
            beaten: torch.Tensor | None = None) -> RecallMetrics:
    """:func:`recall_from_keys` without checks; ``gram`` (..., N, N) and ``beaten`` (bool, same shape) are
    optional work buffers, reused from chunk to chunk (allocating big fresh tensors costs more than the maths)."""
    N = keys.shape[-2]
    G = torch.matmul(keys, keys.mT, out=gram) if gram is not None else keys @ keys.mT   # (..., N, N)
    diag = torch.diagonal(G, dim1=-2, dim2=-1).clone()                     # the signals ‖k_j‖²
    idx = torch.arange(N, device=keys.device)
    # the first rival i ≠ j at least as strong as the signal: item j is decoded correctly while n <= it
    beaten = torch.ge(G, diag[..., None], out=beaten) if beaten is not None else torch.ge(G, diag[..., None])
    beaten.diagonal(dim1=-2, dim2=-1).fill_(False)
    first = beaten.view(torch.uint8).argmax(-1, keepdim=True)             # first True (or 0 when none)
    first = torch.where(beaten.gather(-1, first), first, N)[..., 0]
    # prefix sums Σ_{i<n} over the grid: G is symmetric, so sum rows i (contiguous) in the segments
    # [n_{b-1}, n_b) between grid points, then accumulate the segments; fields come out as (..., P, N)
    segment = torch.searchsorted(ns, idx, right=True)                     # row i -> its segment (P: unused)
    P = ns.numel()

    def prefix_sums(x: torch.Tensor) -> torch.Tensor:
        out = torch.zeros(*x.shape[:-2], P + 1, N, dtype=x.dtype, device=x.device)
        return out.index_add_(-2, segment, x)[..., :P, :].cumsum(-2)

    cross = prefix_sums(G.abs_())                                          # Σ_{i<n} |G_ij| (in place: G is spent)
    sumsq = prefix_sums(G.square_())                                       # Σ_{i<n} G_ij²
    cross = ((cross - diag[..., None, :]) / diag[..., None, :]).clamp_min_(0)   # Σ_{i<n, i≠j} |G_ij| / G_jj
    stored = idx[None, :] < ns[:, None]                                    # (P, N): item j was stored
    nan = torch.tensor(math.nan, dtype=keys.dtype, device=keys.device)
    return RecallMetrics(
        torch.where(stored, diag[..., None, :] / sumsq.sqrt(), nan),
        torch.where(stored, sumsq - 2 * diag[..., None, :] + 1, nan),
        (first[..., None, :] >= ns[:, None]) & stored,
        torch.where(stored, cross, nan),
    )


def _recall_chunks(d_k: int, ns: Sequence[int] | torch.Tensor, trials: int, kind: str,
                   generator: torch.Generator | None, device: torch.device | str | None,
                   dtype: torch.dtype | None):
    """Checked arguments, then the experiment trial-chunk by trial-chunk (yields RecallMetrics)."""
    d_k = check_int("d_k", d_k, low=1)
    trials = check_int("trials", trials, low=1)
    kind = check_choice("kind", kind, KINDS)
    ns_t = _check_ns(ns)
    N = int(ns_t[-1])
    gram = beaten = None
    chunk = _chunk(N, dtype)
    for s in range(0, trials, chunk):  # memory chunks; all the trials inside a chunk run at once
        keys = random_keys(min(chunk, trials - s), N, d=d_k, kind=kind, generator=generator,
                           device=device, dtype=dtype)
        if gram is None:
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

    Each trial draws ``max(ns)`` random keys (``kind``), then :func:`recall_from_keys` stores the first
    ``n`` of them for every ``n`` in ``ns`` and reads each back. Trials are vectorised; they are only
    split into chunks so that the Gram matrices of one chunk stay within 32 MiB (the Binder budget).
    Returns :class:`RecallMetrics` with fields (trials, len(ns), max(ns)).
    """
    parts = list(_recall_chunks(d_k, ns, trials, kind, generator, device, dtype))
    return parts[0] if len(parts) == 1 else RecallMetrics(*(torch.cat(f, dim=0) for f in zip(*parts)))


# ---------------------------------------------------------------------------------------------- theory
def fidelity_theory(n: int | float | torch.Tensor, d_k: int | float | torch.Tensor) -> torch.Tensor:
    """Mean cosine between read-out and value after storing ``n`` pairs: ``1/√(1 + (n − 1)/d_k)``.

    Signal ``v_j`` (norm 1) plus ``n − 1`` crosstalk terms, each of variance ``1/d_k``, nearly orthogonal to it.
    n, d_k: numbers or tensors (broadcast). Returns a float64 tensor (or the dtype of a float tensor input).
    """
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
    """Error-free capacity from the summed crosstalk: ``n ≲ √(π d_k / 2)``.

    Each of the ``n − 1`` overlaps has ``E|k_i·k_j| ≈ √(2/(π d_k))``; their sum stays below the signal 1
    while ``n − 1 ≲ √(π d_k / 2)``.
    """
    d_t = torch.as_tensor(d_k, dtype=torch.float64)
    if bool((d_t <= 0).any()):
        raise ValueError(f"d_k: expected a positive key dimension, got a minimum of {float(d_t.min())}")
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
    return _largest_before_failure(ns_t, f >= threshold)


def capacity_all_correct(ns: Sequence[int] | torch.Tensor, correct: torch.Tensor, fraction: float = 0.9) -> int:
    """Error-free decoding capacity: the largest n with every item decoded correctly in ≥ ``fraction`` of trials.

    correct: per-item (trials, len(ns), n_max) booleans (items not stored count as correct), or
    per-trial (trials, len(ns)) booleans "all items correct".
    """
    fraction = check_real("fraction", fraction, low=0.0, high=1.0)
    if not isinstance(correct, torch.Tensor) or correct.dtype != torch.bool:
        raise TypeError(f"correct: expected a boolean tensor, got {getattr(correct, 'dtype', type(correct).__name__)}")
    if correct.dim() == 3:
        ns_t = _check_ns(ns)
        stored = torch.arange(correct.shape[-1], device=correct.device)[None, :] < ns_t.to(correct.device)[:, None]
        correct = (correct | ~stored).all(-1)
    ns_t, c = _curve("correct", ns, correct)
    return _largest_before_failure(ns_t, c.reshape(-1, ns_t.numel()).double().mean(0) >= fraction)


def capacity_from_crosstalk(ns: Sequence[int] | torch.Tensor, crosstalk: torch.Tensor, fraction: float = 0.5) -> int:
    """Worst-case capacity: the largest n whose worst row has summed crosstalk < 1 in ≥ ``fraction`` of trials.

    crosstalk: per-item (trials, len(ns), n_max) with nan for items not stored, or the worst row per trial
    (trials, len(ns)).
    """
    fraction = check_real("fraction", fraction, low=0.0, high=1.0)
    if isinstance(crosstalk, torch.Tensor) and crosstalk.dim() == 3:
        crosstalk = crosstalk.nan_to_num(nan=-math.inf).amax(-1)
    ns_t, x = _curve("crosstalk", ns, crosstalk)
    return _largest_before_failure(ns_t, (x.reshape(-1, ns_t.numel()) < 1).double().mean(0) >= fraction)


def fit_slope(x: Sequence[float] | torch.Tensor, y: Sequence[float] | torch.Tensor) -> float:
    """Least-squares slope of ``log y`` against ``log x`` (the exponent ``a`` in ``y ∝ x^a``)."""
    lx = torch.as_tensor(x, dtype=torch.float64).flatten()
    ly = torch.as_tensor(y, dtype=torch.float64).flatten()
    if lx.numel() != ly.numel() or lx.numel() < 2:
        raise ValueError(f"x, y: expected two sequences of the same length >= 2, got {lx.numel()} and {ly.numel()}")
    if bool((lx <= 0).any()) or bool((ly <= 0).any()):
        raise ValueError("x, y: expected positive numbers for a log-log fit")
    lx, ly = lx.log(), ly.log()
    lx = lx - lx.mean()
    return float((lx * (ly - ly.mean())).sum() / (lx * lx).sum())


# --------------------------------------------------------------------------------------- the full sweep
class CapacitySweep(NamedTuple):
    """Summaries of :func:`capacity_sweep`, one entry per key dimension (lists, as the n grids differ).

    ns[i]: (P,) the grid for d_ks[i]; fidelity[i]: (trials, P) mean cosine over the items of each trial;
    all_correct[i]: (trials, P) every item decoded correctly; worst_crosstalk[i]: (trials, P) the worst
    row's summed crosstalk; first_cosine[i]: (trials, P) the cosine of the first item stored.
    """

    d_ks: list[int]
    ns: list[torch.Tensor]
    fidelity: list[torch.Tensor]
    all_correct: list[torch.Tensor]
    worst_crosstalk: list[torch.Tensor]
    first_cosine: list[torch.Tensor]


def n_grid(d_k: int, points: int = 24, max_ratio: float = 4.0) -> torch.Tensor:
    """``points`` distinct numbers of pairs from 1 up to ``max_ratio · d_k``, spaced geometrically.

    Geometric spacing resolves both scales of the story: the worst-case capacity near ``√d_k`` and the
    average-case capacity near ``d_k``. Neighbours are kept distinct (each at least one more than the last).
    """
    d_k = check_int("d_k", d_k, low=1)
    points = check_int("points", points, low=1)
    max_ratio = check_real("max_ratio", max_ratio, low=0.0, low_open=True)
    top = max(points, round(max_ratio * d_k))
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
    """Run :func:`recall_sweep` for every key dimension on its grid :func:`n_grid` and keep per-trial summaries.

    The loop over the few ``d_ks`` stays in Python on purpose: the grids (n up to ``max_ratio·d_k``)
    and key sizes differ, and padding every dimension to the largest one would multiply the work by
    ``len(d_ks)``. Everything inside (trials, n, items) is vectorised.
    """
    if isinstance(d_ks, int) or len(d_ks) == 0:
        raise ValueError(f"d_ks: expected a non-empty sequence of key dimensions, got {d_ks!r}")
    d_ks = [check_int(f"d_ks[{i}]", d, low=1) for i, d in enumerate(d_ks)]
    out = CapacitySweep(d_ks, [], [], [], [], [])
    for d in tqdm(d_ks, desc="d_k", disable=not progress):
        ns = n_grid(d, points, max_ratio)
        parts = [_summarise(m) for m in _recall_chunks(d, ns, trials, kind, generator, device, dtype)]
        fidelity, all_correct, worst, first = (torch.cat(f) if len(parts) > 1 else f[0] for f in zip(*parts))
        out.ns.append(ns)
        out.fidelity.append(fidelity)
        out.all_correct.append(all_correct)
        out.worst_crosstalk.append(worst)
        out.first_cosine.append(first)
    return out


def _summarise(m: RecallMetrics) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per-trial summaries of per-item metrics (..., P, N): mean cosine, all correct, worst crosstalk, first cosine."""
    stored = ~m.cosine.isnan()
    return (m.cosine.nanmean(-1), (m.correct | ~stored).all(-1),
            m.crosstalk.nan_to_num(nan=-math.inf).amax(-1), m.cosine[..., 0])


def sweep_capacities(sweep: CapacitySweep, *, threshold: float = 0.8, fraction_correct: float = 0.9,
                     fraction_crosstalk: float = 0.5) -> dict[str, list[int]]:
    """The three capacity estimates for every d_k of a sweep: ``{"average", "all_correct", "crosstalk"}``."""
    return {
        "average": [capacity_from_fidelity(n, f, threshold) for n, f in zip(sweep.ns, sweep.fidelity)],
        "all_correct": [capacity_all_correct(n, c, fraction_correct) for n, c in zip(sweep.ns, sweep.all_correct)],
        "crosstalk": [capacity_from_crosstalk(n, x, fraction_crosstalk)
                      for n, x in zip(sweep.ns, sweep.worst_crosstalk)],
    }


__all__ = [
    "KINDS", "CapacitySweep", "RecallMetrics", "average_capacity_theory", "capacity_all_correct",
    "capacity_from_crosstalk", "capacity_from_fidelity", "capacity_sweep", "fidelity_theory", "fit_slope",
    "n_grid", "random_keys", "random_values", "recall_from_keys", "recall_sweep", "store_and_recall",
    "sweep_capacities", "worst_case_bound",
]
