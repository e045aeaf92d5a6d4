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
- (c) ``"adversarial"``: the values are chosen, given the keys, to maximise the worst error. The worst
  error is then exactly ``max_j Σ_{i≠j} |k_i·k_j|`` (for unit keys), so this criterion and the
  *sufficient bound* ``Σ_{i≠j}|k_i·k_j| < 1`` coincide, and the capacity grows like ``√d_k``
  (each ``|k_i·k_j|`` has mean ``√(2/(π d_k))``: :func:`worst_case_bound`).

The memories compared by :func:`readout_weights` (:data:`MEMORIES`): the Hebbian sum, the delta rule
(one pass) and softmax attention. Random keys come from :mod:`pavlovlab.sampling`, the slope fits
from :mod:`pavlovlab.statistics`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

import torch
from tqdm.auto import tqdm

from ._checks import check_choice, check_int, check_numbers, check_real, check_tensor
from .hebbian import outer_product_memory
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
    ns_t = torch.as_tensor(ns) if not isinstance(ns, torch.Tensor) else ns.cpu()
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
                   dtype: torch.dtype | None):
    """Checked arguments, then the experiment trial-chunk by trial-chunk (yields RecallMetrics)."""
    d_k = check_int("d_k", d_k, low=1)
    trials = check_int("trials", trials, low=1)
    kind = check_choice("kind", kind, KINDS)
    ns_t = _check_ns(ns)
    N = int(ns_t[-1])
    chunk = _chunk(N, dtype)
    gram = beaten = None
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
    The *worst* of n rows crosses earlier, so measured adversarial capacities sit below this curve.
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


# --------------------------------------------------------------------------------------- the full sweep
class CapacitySweep(NamedTuple):
    """Results of :func:`capacity_sweep`, one entry per key dimension (lists, as the n grids differ).

    ns[i]: (P,) the grid for d_ks[i]; fidelity[i]: (trials, P) mean cosine over the items of each trial.
    """

    d_ks: list[int]
    ns: list[torch.Tensor]
    fidelity: list[torch.Tensor]


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
    """Run :func:`recall_sweep` for every key dimension on its grid :func:`n_grid`; keep each trial's mean cosine.

    The loop over the few ``d_ks`` stays in Python on purpose: the grids (n up to ``max_ratio·d_k``)
    and key sizes differ, and padding every dimension to the largest one would multiply the work by
    ``len(d_ks)``. Everything inside (trials, n, items) is vectorised.
    """
    if isinstance(d_ks, int) or len(d_ks) == 0:
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
MEMORIES = ("hebbian", "delta", "softmax")
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
    rule = check_choice("rule", rule, MEMORIES)
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
    """The worst item's recall error when an adversary picks the values, after n writes, n = 1..N (Hebbian).

    Given the keys, the adversary chooses unit values to maximise ``max_j ‖S_n k_j − v_j‖``. By the triangle
    inequality ``‖S_n k_j − v_j‖ = ‖(G_jj − 1) v_j + Σ_{i≠j} G_ij v_i‖ ≤ |G_jj − 1| + Σ_{i≠j, i≤n} |G_ij|``, and
    the bound is reached by scalar values ``v_i = sign(G_ij) σ`` (``σ = ±1`` the sign of ``G_jj − 1``,
    ``v_j = σ``). For the worst row ``j*`` this builds those values, stores them with Hebb's rule and
    reads ``j*`` back: the returned error is that measured read-out's error, and it equals the bound.

    keys: (..., N, d_k). Returns ``(error, worst_item)``, both (..., N): the error of item ``j*`` after n
    writes (relative to ``‖v‖ = 1``; ≥ 1 means the read-out is no closer to ``v_{j*}`` than 0 is, and
    for unit keys its sign is flipped) and ``j*``.
    """
    check_tensor("keys", keys, min_rank=2)
    G = keys @ keys.mT
    N = G.shape[-1]
    diag = torch.diagonal(G, dim1=-2, dim2=-1)                             # (..., N)
    off = G.abs() * ~torch.eye(N, dtype=torch.bool, device=G.device)
    bound = (diag - 1).abs()[..., :, None] + off.cumsum(-1)                # (..., N_j, N_n): bound for j after n
    bound = bound.masked_fill(~_tri(N, G.device, strict=False), -math.inf)
    worst = bound.argmax(-2)                                               # (..., N_n): j*(n)
    col = G.gather(-1, worst[..., None, :].expand(*G.shape[:-1], N))       # (..., N_i, N_n): G[i, j*(n)]
    sigma = torch.where(diag.gather(-1, worst) >= 1, 1.0, -1.0).to(G.dtype)   # (..., N_n)
    v = torch.where(col >= 0, 1.0, -1.0).to(G.dtype) * sigma[..., None, :]     # v_i = sign(G_ij*) σ
    is_j = torch.arange(N, device=G.device)[:, None] == worst[..., None, :]
    v = torch.where(is_j, sigma[..., None, :].expand_as(v), v)              # v_{j*} = σ
    v = v * _tri(N, G.device, strict=False)                                 # only the first n pairs are stored
    read = (v * col).sum(-2)                                                # S_n k_{j*} = Σ_{i≤n} v_i (k_i·k_{j*})
    return (read - sigma).abs(), worst


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
      - ``"adversarial"`` (c): the values are chosen, given the keys, to maximise the worst item's error
        (:func:`adversarial_error_curve`); fails once that error reaches 1 (Hebbian memory only).
    rule / beta: the memory, see :func:`readout_weights`. Keys: ``kind`` (unit sphere by default).
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
        slope, slope_se = fit_slope(d_ks, mean), bootstrap_slope_se(d_ks, caps, resamples=resamples, seed=0)
    return CapacityScaling(d_ks, mean, sem, torch.stack(cens), slope, slope_se, caps)


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
    "MEMORIES",
    "SCALINGS",
    "CapacityScaling",
    "CapacitySweep",
    "RecallMetrics",
    "RetrievalCapacity",
    "adversarial_error_curve",
    "average_capacity_theory",
    "capacity_from_fidelity",
    "capacity_scaling",
    "capacity_sweep",
    "decoding_curve",
    "fidelity_theory",
    "first_failure",
    "min_cosine_curve",
    "n_grid",
    "readout_weights",
    "recall_sweep",
    "retrieval_capacity",
    "scaling_residuals",
    "store_and_recall",
    "worst_case_bound",
]
