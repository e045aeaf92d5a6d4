"""Capacity of the associative memory: how many bell→food pairs fit in the bucket ``S`` before they blur.

Store ``n`` pairs with Hebb's rule, ``S = Σ_i v_i k_iᵀ``, and read item ``j`` back with its own key:

    S k_j = v_j (k_j·k_j) + Σ_{i≠j} v_i (k_i·k_j)       (signal + crosstalk)

For unit keys drawn uniformly on the sphere, ``E[(k_i·k_j)²] = 1/d_k`` exactly (``E[k kᵀ] = I/d_k``), so
the crosstalk's squared norm is about ``(n−1)/d_k`` and the mean cosine between the read-out and the
true value is about ``1/√(1 + (n−1)/d_k)``: average-case capacity grows as ``O(d_k)``.

What "error-free" capacity means depends on the criterion, so it is measured on actual read-outs,
per trial, at every ``n`` (:func:`retrieval_capacity`, :func:`capacity_scaling`):

- (a) ``"cosine"``: every stored item's cosine ≥ θ (random values): grows like ``d_k``;
- (b) ``"argmax"``: every item decoded correctly by argmax over a fixed codebook: close to ``d_k``;
- (c) ``"adversarial"``: every stored item must keep a read-out on its value's side (cosine > 0, so
  sign decoding works) whatever unit values were stored. The sign-flip adversary ``v_i = −sign(k_i·k_j) v_j``
  makes the read-out ``(1 − Σ_{i≠j}|k_i·k_j|) v_j`` (unit keys) and no choice of values does worse, so
  this criterion is *derived*: it fails at the first n with ``max_j Σ_{i≠j}|k_i·k_j| ≥ 1``, a function of
  the keys alone (:func:`adversarial_error_curve` builds those values and measures the read-out). Its
  capacity grows like ``√d_k`` (each ``|k_i·k_j|`` has mean ``√(2/(π d_k))``: :func:`worst_case_bound`).

The comparison memories of :func:`readout_weights`: the delta rule (one pass) and softmax attention.
Older entry points: :func:`recall_sweep` / :func:`capacity_sweep` (mean-cosine curves with one-hot
values), the theory curves :func:`fidelity_theory`, :func:`average_capacity_theory`,
:func:`worst_case_bound`, the estimators ``capacity_from_*`` and :func:`fit_slope`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

import torch
from tqdm.auto import tqdm

from ._checks import check_choice, check_float_dtype, check_int, check_numbers, check_real, check_tensor
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
    dtype = torch.get_default_dtype() if dtype is None else check_float_dtype("dtype", dtype)
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
    closest (largest dot product) to its own value among the *n stored* values (a codebook that grows
    with n; with one-hot values this only asks whether ``k_j·k_j > k_i·k_j`` for every stored i, i.e.
    whether each key is its own nearest key: see :func:`retrieval_capacity` for a fixed codebook);
    crosstalk: the row's summed crosstalk relative to its signal, ``Σ_{i≠j} |k_i·k_j| / ‖k_j‖²``
    (below 1 is a sufficient condition for recall whatever the values).
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
    an error). Caution: one-hot values make ``d_v = n`` grow with n, so ``correct`` is nearest-neighbour
    lookup on the keys, not a memory capacity (:func:`retrieval_capacity` ``"argmax"`` fixes the codebook).

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
    return parts[0] if len(parts) == 1 else RecallMetrics(*(torch.cat(f, dim=0) for f in zip(*parts, strict=True)))


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
    """Where a *typical* row's summed crosstalk reaches the signal: ``n − 1 ≈ √(π d_k / 2)``.

    Each of the ``n − 1`` overlaps has ``E|k_i·k_j| ≈ √(2/(π d_k))`` (the mean of a half-normal, i.e. of
    ``|x|`` for ``x ~ N(0, 1/d_k)``); their sum stays below the signal 1 while ``n − 1 ≲ √(π d_k / 2)``.
    The *worst* of n rows crosses earlier, so the capacities of criterion (c) (that worst row's crossing,
    see :func:`adversarial_error_curve`) sit below this curve.
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
    """The largest n with every item ``correct`` in ≥ ``fraction`` of trials.

    With the ``correct`` field of :func:`recall_sweep` (one-hot values, a codebook of the n stored values)
    this measures key separation, not memory capacity; use :func:`retrieval_capacity` for a fixed codebook.

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
    """The sufficient bound: the largest n whose worst row has summed crosstalk < 1 in ≥ ``fraction`` of trials.

    ``Σ_{i≠j}|k_i·k_j| < 1`` for every row guarantees recall whatever the values; its mean grows as
    ``(n−1)√(2/(π d_k))`` by definition, so its capacity's slope ½ follows from the definition. It is
    the exact answer for adversarial values (:func:`adversarial_error_curve`), not for random ones.

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
        fidelity, all_correct, worst, first = (torch.cat(f) if len(parts) > 1 else f[0]
                                               for f in zip(*parts, strict=True))
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
        "average": [capacity_from_fidelity(n, f, threshold) for n, f in zip(sweep.ns, sweep.fidelity, strict=True)],
        "all_correct": [capacity_all_correct(n, c, fraction_correct)
                        for n, c in zip(sweep.ns, sweep.all_correct, strict=True)],
        "crosstalk": [capacity_from_crosstalk(n, x, fraction_crosstalk)
                      for n, x in zip(sweep.ns, sweep.worst_crosstalk, strict=True)],
    }




# ===================================================================================================
# Capacity measured on actual read-outs: three retrieval criteria, per trial, at every n
# ===================================================================================================
RULES = ("hebbian", "delta", "softmax")
"""Memories compared by :func:`readout_weights`: the Hebbian sum (linear attention), the delta rule
(DeltaNet, one pass) and softmax attention (inverse temperature ``beta``, all past pairs kept)."""

CRITERIA = ("cosine", "argmax", "adversarial")
"""Retrieval criteria of :func:`retrieval_capacity`: (a) every stored item's cosine ≥ θ; (b) every item
decoded correctly by argmax over a fixed codebook; (c) adversarial values (Hebbian memory only)."""


def _tri(N: int, device: torch.device, *, strict: bool) -> torch.Tensor:
    """``U[i, m] = i < m`` (strict) or ``i <= m``: write i is already in the memory read at time m."""
    return torch.ones(N, N, dtype=torch.bool, device=device).triu(1 if strict else 0)


def readout_weights(keys: torch.Tensor, values: torch.Tensor, rule: str = "hebbian",
                    beta: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
    """Write all pairs in order, and express every read-out of every stored item as a weighted sum.

    For the three memories the read-out of item ``j`` (query ``k_j``) after the first ``n`` writes is

        r_j(n) = c_j(n) · Σ_{i ≤ n} A[j, i] w_i           (c_j(n) > 0 a scale that no criterion sees)

    - ``"hebbian"``: ``S_n = Σ_{i≤n} v_i k_iᵀ``: ``A = K Kᵀ`` (the Gram matrix), ``w_i = v_i``;
    - ``"delta"`` (one pass, rate β): ``S_t = S_{t−1} + β (v_t − S_{t−1} k_t) k_tᵀ`` writes
      ``u_t = β (v_t − S_{t−1} k_t)``, so ``S_n = Σ_{i≤n} u_i k_iᵀ`` with ``(I/β + tril(K Kᵀ, −1)) U = V``
      (a triangular solve, the UT transform): ``A = K Kᵀ``, ``w_i = u_i``;
    - ``"softmax"``: ``r_j(n) = Σ_{i≤n} softmax_i(β k_j·k_i) v_i``: ``A = exp(β (k_j·k_i − max_i k_j·k_i))``,
      ``w_i = v_i`` and ``c_j(n) = 1/Σ_{i≤n} A[j, i]``.

    keys: (..., N, d_k), values: (..., N, d_v). Returns ``A`` (..., N, N) and ``W`` (..., N, d_v).
    The package's own layers give the same read-outs (tests: ``pl.delta_rule_attention`` and
    ``pl.softmax_attention(..., scale=beta)``).
    """
    check_tensor("keys", keys, min_rank=2)
    check_tensor("values", values, min_rank=2)
    if keys.shape[-2] != values.shape[-2]:
        raise ValueError(f"values: expected as many values as keys ({keys.shape[-2]}) along dim -2, "
                         f"got shape {tuple(values.shape)}")
    rule = check_choice("rule", rule, RULES)
    beta = check_real("beta", beta, low=0.0, low_open=True)
    G = keys @ keys.mT
    if rule == "hebbian":
        return G, values
    if rule == "softmax":
        return (beta * (G - G.amax(-1, keepdim=True))).exp(), values
    N = G.shape[-1]
    L = torch.eye(N, dtype=G.dtype, device=G.device) / beta + G.tril(-1)
    K_lead = torch.broadcast_shapes(L.shape[:-2], values.shape[:-2])
    U = torch.linalg.solve_triangular(L.expand(*K_lead, N, N), values.expand(*K_lead, *values.shape[-2:]),
                                      upper=False)
    return G, U


def min_cosine_curve(weights: torch.Tensor, written: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """The worst stored item's cosine after every number of writes: ``min_{j≤n} cos(r_j(n), v_j)``, n = 1..N.

    ``r_j(n) = Σ_{i≤n} A[j, i] w_i`` (see :func:`readout_weights`). Without forming the (N, N, d_v)
    read-outs: with ``H = W Wᵀ`` and ``X = W Vᵀ``, the numerator ``r_j(n)·v_j = Σ_{i≤n} A_ji X_ij`` and
    ``‖r_j(n)‖² = Σ_{m≤n} (2 A_jm P_jm + A_jm² H_mm)`` with ``P = A (H ∘ [i<m])`` are prefix sums.

    weights: (..., N, N); written: (..., N, d_v); targets: (..., N, d_v). Returns (..., N) (entry n−1
    for n writes).
    """
    A, W, V = weights, written, targets
    N = A.shape[-1]
    H = W @ W.mT                                                          # (..., N, N)
    num = (A * (W @ V.mT).mT).cumsum(-1)                                  # num[j, n] = Σ_{i≤n} A_ji w_i·v_j
    P = A @ (H * _tri(N, A.device, strict=True))                          # P[j, m] = Σ_{i<m} A_ji H_im
    sq = (2 * A * P + A.square() * torch.diagonal(H, dim1=-2, dim2=-1)[..., None, :]).cumsum(-1)
    norm_v = V.norm(dim=-1)[..., :, None]
    cos = num / (sq.clamp_min(torch.finfo(sq.dtype).tiny).sqrt() * norm_v)
    cos = cos.masked_fill(~_tri(N, A.device, strict=False), math.inf)      # item j not yet written at n < j
    return cos.amin(-2)


def decoding_curve(weights: torch.Tensor, written: torch.Tensor, labels: torch.Tensor, codebook: torch.Tensor,
                   *, block: int = 32) -> torch.Tensor:
    """Whether every stored item is decoded correctly after n writes, n = 1..N (argmax over a fixed codebook).

    Item j is stored as the codeword ``codebook[labels[j]]``; its read-out ``r_j(n) = Σ_{i≤n} A[j, i] w_i``
    is decoded as ``argmax_m codebook[m]·r_j(n)``; correct when that is ``labels[j]`` and no other codeword
    ties it. The codebook (M, d_v) does not grow with n, so the question stays the same as the memory fills.
    Processed in blocks of ``block`` writes; stops early once every trial has failed.

    weights: (..., N, N); written: (..., N, d_v); labels: (..., N) long in [0, M). Returns (..., N) bool.
    """
    A = weights
    N, M = A.shape[-1], codebook.shape[0]
    E = written @ codebook.mT                                              # (..., N_i, M): c_m · w_i
    own_mask = torch.nn.functional.one_hot(labels, M).bool()[..., :, None, :]   # (..., N_j, 1, M)
    E_own = E.gather(-1, labels[..., None, :].expand(*E.shape[:-2], N, N)).mT  # [j, i] = E[i, c_j]
    own_all = (A * E_own).cumsum(-1)                                       # (..., N_j, N_n): own score after n
    score = torch.zeros(*A.shape[:-1], M, dtype=A.dtype, device=A.device)  # (..., N_j, M), running scores
    out = torch.ones(*A.shape[:-2], N, dtype=torch.bool, device=A.device)
    idx = torch.arange(N, device=A.device)
    for s in range(0, N, block):   # a loop over time (writes), as in a recurrent layer; trials stay vectorised
        e = min(N, s + block)      # only items j < e can be stored by the end of this block
        part = (A[..., :e, s:e, None] * E[..., None, s:e, :]).cumsum_(-2)
        part += score[..., :e, None, :]                                     # (..., j < e, b, M)
        score += A[..., :, s:e] @ E[..., s:e, :]                            # every item's running score
        rival = part.masked_fill_(own_mask[..., :e, :, :], -math.inf).amax(-1)        # best other codeword
        stored = idx[:e, None] <= idx[None, s:e]                                       # (j < e, b)
        out[..., s:e] = ((own_all[..., :e, s:e] > rival) | ~stored).all(-2)
        if not bool(out[..., :e].all(-1).any()):   # every trial has failed already: the rest cannot matter
            out[..., e:] = False
            break
    return out


def adversarial_error_curve(keys: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The worst item's recall error along its own value when an adversary picks the values, n = 1..N (Hebbian).

    After ``n`` writes the read-out of item ``j`` is ``S_n k_j = G_jj v_j + Σ_{i≠j, i≤n} G_ij v_i``
    (``G = K Kᵀ``). For unit values its component along the true value is

        v_j · S_n k_j = G_jj + Σ_{i≠j} G_ij (v_i·v_j)  ≥  G_jj − Σ_{i≠j, i≤n} |G_ij|,

    with equality for the **sign-flip** adversary ``v_i = −sign(G_ij) v_j``, which turns every crosstalk
    term against the signal: the read-out becomes ``(G_jj − Σ_{i≠j}|G_ij|) v_j``. So the adversary defeats
    sign decoding of item j (the read-out's cosine with ``v_j`` is ≤ 0; equivalently the nearer of ``±v_j``
    is the wrong one) exactly when ``Σ_{i≠j, i≤n} |G_ij| ≥ G_jj`` (``≥ 1`` for unit keys): criterion (c)
    is a function of the keys' Gram matrix alone.

    For every n this picks the row ``j*`` with the smallest ``G_jj − Σ_{i≠j}|G_ij|``, builds the sign-flip
    values (scalars ±1: any unit vector ``u`` times them gives the same numbers), stores the first n pairs
    with Hebb's rule ``S_n = Σ_{i≤n} v_i k_iᵀ``, reads ``S_n k_{j*}`` with the key itself, and returns the
    measured error along the value ``e = 1 − v_{j*}·S_n k_{j*}`` (``= Σ_{i≠j*}|G_ij*|`` for unit keys).

    keys: (..., N, d_k). Returns ``(error, worst_item)``, both (..., N), entry n−1 after n writes:
    ``error`` is 0 for a perfect recall and ≥ 1 when the read-out points away from (or is orthogonal to)
    its value, i.e. retrieval fails; ``worst_item`` is ``j*``.
    """
    check_tensor("keys", keys, min_rank=2)
    G = keys @ keys.mT                                                     # (..., N, N), symmetric
    N = G.shape[-1]
    diag = torch.diagonal(G, dim1=-2, dim2=-1)                             # (..., N): the signals G_jj
    off = G.abs() * ~torch.eye(N, dtype=torch.bool, device=G.device)
    margin = diag[..., :, None] - off.cumsum(-1)                           # (..., N_j, N_n): G_jj − Σ_{i≤n, i≠j}|G_ij|
    margin = margin.masked_fill(~_tri(N, G.device, strict=False), math.inf)   # item j not yet written at n < j
    worst = margin.argmin(-2)                                              # (..., N_n): j*(n)
    col = G.gather(-1, worst[..., None, :].expand(*G.shape[:-1], N))       # (..., N_i, N_n): G[i, j*(n)]
    v = torch.where(col >= 0, -1.0, 1.0).to(G.dtype)                       # v_i = −sign(G_ij*) v_j*, with v_j* = 1
    v = torch.where(torch.arange(N, device=G.device)[:, None] == worst[..., None, :], 1.0, v)
    v = v * _tri(N, G.device, strict=False)                                # after n writes only i ≤ n are stored
    S = v.mT @ keys                                                        # (..., N_n, d_k): S_n = Σ_{i≤n} v_i k_iᵀ
    query = keys.gather(-2, worst[..., :, None].expand(*worst.shape, keys.shape[-1]))   # (..., N_n, d_k): k_j*
    read = (S * query).sum(-1)                                             # S_n k_{j*}, one number per n
    return 1 - read, worst


def first_failure(ok: torch.Tensor) -> torch.Tensor:
    """Capacity per trial: the largest n such that the criterion holds after every n' ≤ n writes.

    ok: (..., N) bool, entry n−1 for n writes. Returns (...,) long: the number of leading True entries
    (N when it never fails: a censored trial, see :class:`RetrievalCapacity`).
    """
    if not isinstance(ok, torch.Tensor) or ok.dtype != torch.bool:
        raise TypeError(f"ok: expected a boolean tensor, got {getattr(ok, 'dtype', type(ok).__name__)}")
    return (~ok).to(torch.uint8).cumsum(-1).eq(0).sum(-1)


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
        :func:`adversarial_error_curve`; fails once the worst item's read-out has cosine ≤ 0 with its value
        (error along the value ≥ 1: sign decoding fails), i.e. at the first n with
        ``max_j Σ_{i≠j}|G_ij| ≥ G_jj`` (Hebbian memory only).
    rule / beta: the memory, see :func:`readout_weights`. Keys: ``kind`` (unit sphere by default).
    n_max: the longest context tried (default ``4 d_k``): a trial that never fails is censored.
    Trials run ``chunk`` at a time (vectorised inside a chunk; chunks bound the memory).
    """
    d_k = check_int("d_k", d_k, low=1)
    criterion = check_choice("criterion", criterion, CRITERIA)
    trials = check_int("trials", trials, low=1)
    n_max = 4 * d_k if n_max is None else check_int("n_max", n_max, low=1)
    rule = check_choice("rule", rule, RULES)
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


def _bootstrap_slope(d_ks: Sequence[int], caps: Sequence[torch.Tensor], resamples: int, seed: int) -> float:
    g = torch.Generator().manual_seed(seed)
    means = torch.stack([c.double()[torch.randint(0, len(c), (resamples, len(c)), generator=g)].mean(-1)
                         for c in caps], dim=-1)                                  # (resamples, len(d_ks))
    lx = torch.tensor(d_ks, dtype=torch.float64).log()
    lx = lx - lx.mean()
    ly = means.clamp_min(1e-12).log()
    slopes = ((ly - ly.mean(-1, keepdim=True)) * lx).sum(-1) / (lx * lx).sum()
    return float(slopes.std())


def capacity_scaling(d_ks: Sequence[int], criterion: str, *, n_max: Callable[[int], int] | None = None,
                     resamples: int = 1000, progress: bool = False, generator: torch.Generator | None = None,
                     **kwargs) -> CapacityScaling:
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
        slope, slope_se = fit_slope(d_ks, mean), _bootstrap_slope(d_ks, caps, resamples, 0)
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
    caps = torch.as_tensor(capacities, dtype=torch.float64).flatten().tolist()
    return {name: fit_slope(d_ks, [c / f(d) for c, d in zip(caps, d_ks, strict=True)]) for name, f in SCALINGS.items()}


__all__ = [
    "CRITERIA",
    "KINDS",
    "RULES",
    "SCALINGS",
    "CapacityScaling",
    "CapacitySweep",
    "RecallMetrics",
    "RetrievalCapacity",
    "adversarial_error_curve",
    "average_capacity_theory",
    "capacity_all_correct",
    "capacity_from_crosstalk",
    "capacity_from_fidelity",
    "capacity_scaling",
    "capacity_sweep",
    "decoding_curve",
    "fidelity_theory",
    "first_failure",
    "fit_slope",
    "local_slopes",
    "min_cosine_curve",
    "n_grid",
    "random_keys",
    "random_values",
    "readout_weights",
    "recall_from_keys",
    "recall_sweep",
    "retrieval_capacity",
    "scaling_residuals",
    "store_and_recall",
    "sweep_capacities",
    "worst_case_bound",
]
