"""Stacked conditioning circuits: depth accumulates retrieval errors, width (heads) suppresses them.

The tower of cards. Layer ℓ of a stack stores n associations ``item i → item π_ℓ(i)`` (a random
permutation of n items: bell → food, food → saliva, ...). A chain starts at an item and hops once per
layer: layer ℓ's read-out, cleaned up to the nearest stored item, is layer ℓ+1's query.

Each layer has H heads; head h is a Hebbian memory with its *own* random unit key codes ``K_h`` (n, d_k)
and value codes ``V_h`` (n, d_v) for the items (like the independent W_K, W_V of real heads)::

    S_h = Σ_i V_h[π(i)] K_h[i]ᵀ,     r_h = S_h K_h[x],     s_h[m] = V_h[m] · r_h  (cleanup scores)

``s_h[π(x)] = 1 + noise`` and ``s_h[m] = noise`` for the other items: the noise is the crosstalk of the
other n − 1 pairs (notebooks 02 and 04). Heads are combined by

- ``"average"``: average the H score vectors, then clean up (argmax): the read-outs are averaged
  before the cleanup, so H independent crosstalks average down (variance / H);
- ``"vote"``: each head cleans up on its own and the item with most votes wins (ties go to the
  larger average score).

Theory (derived in notebook 05, see :func:`hop_error_theory`). The read-out of one head is
``r = v_j + c``: the right value plus the crosstalk ``c = Σ_{i≠x} (k_i·k_x) v_{π(i)}`` of the other pairs,
whose components have variance ``σ² = (n−1)/(d_k d_v)`` (notebook 04). The clean-up is the **nearest stored
value** (the argmax of ``v_m·r`` over the codebook of n unit values). The right item loses to m when
``D_m = (v_j − v_m)·r < 0``; this gives the single-head error p(n, d_k) (a Gaussian approximation). A chain
of L hops is right only if every hop is: ``1 − (1 − p)^L ≈ L·p``, linear in depth *because* every layer of
the simulation draws its own codes (independent hops): a consequence of the set-up, not a test of it.
Averaging H heads divides σ² by H, so ``log p`` falls about linearly in H.

What can be *derived* with one inequality (:func:`hop_failure_bound`): the hop loses to m only if
``‖c‖ ≥ √((1 − t_m)/2)`` (Cauchy–Schwarz; ``t_m = v_j·v_m``), and ``E[‖c‖² | values] = (n−1)/d_k``, so by
Markov's inequality a hop fails with probability at most ``2(n−1)/(d_k(1 − t_max))`` — twice the paper's
per-head figure for near-orthogonal values, no bound at all when two values nearly coincide, and no fall
with H (the averaged crosstalk has the same norm). The paper's ``L·((n−1)/d_k)^H`` (:func:`paper_bound`)
is not derived for this clean-up.

Two more experiments: :func:`raw_chain`, a stack WITHOUT clean-up (raw read-outs are the next
layer's queries, as in a linear Transformer), whose noise compounds (:func:`raw_noise_theory`); and
:func:`same_task_budget`, shapes compared on the same K-hop task at an equal budget of head dimensions.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from importlib import resources
from typing import NamedTuple

import numpy as np
import torch

from ._checks import check_choice, check_device, check_float_dtype, check_int, check_numbers, warn_nonfinite
from .sampling import random_keys
from .statistics import t_quantile

Numbers = float | np.ndarray | torch.Tensor | Sequence[float]
"""A number or an array of numbers (broadcast together; a float comes back for scalar inputs)."""

COMBINE = ("average", "vote")
THEORY_RULES = ("average", "all_fail")


class StackResult(NamedTuple):
    """What :func:`chain_error` measures.

    error: end-to-end error rate after all L layers (fraction of chains whose last item is wrong).
    error_by_depth: (L,) tensor, the error rate after layers 1..L (so one deep run gives error vs depth).
    head_error: fraction of single-head decisions (argmax of one head's scores) that miss the right next
        item of the chain's current input, over all layers and heads: the measured per-head error.
    hop_error: fraction of combined decisions that miss the right next item of their input: the
        measured per-hop error of the combined heads.
    chains: number of chains measured.
    """

    error: float
    error_by_depth: torch.Tensor
    head_error: float
    hop_error: float
    chains: int


def _int(name: str, value: object) -> int:
    """A positive integer; NumPy integers (e.g. from ``np.arange``) are accepted."""
    return check_int(name, int(value) if isinstance(value, np.integer) else value, low=1)


def chain_error(L: int, H: int, n: int, d_k: int, *, d_v: int | None = None, combine: str = "average",
                trials: int = 200, generator: torch.Generator | None = None, device: torch.device | str | None = None,
                dtype: torch.dtype = torch.float32) -> StackResult:
    """Measure the end-to-end error of L stacked layers of H Hebbian heads, over many chains at once.

    ``trials`` independent stacks are drawn (fresh permutations and codes), and in each one n chains
    start, one from every item, so ``trials · n`` chains run together (vectorised over trials, chains
    and heads; the loop is over the L layers only). Codes are drawn on the CPU with ``generator`` and
    moved to ``device``.

    Args:
        L: depth (hops). H: heads per layer. n: associations stored per head. d_k, d_v: key and value
            dimensions of each head (``d_v`` defaults to ``d_k``).
        combine: ``"average"`` (average the heads' cleanup scores, then argmax) or ``"vote"``.

    Returns:
        :class:`StackResult` (error, error_by_depth (L,), head_error, hop_error, chains).

    >>> chain_error(4, 2, 16, 32, generator=torch.Generator().manual_seed(0)).error
    """
    L, H, n, d_k, trials = (_int(name, value) for name, value in
                            (("L", L), ("H", H), ("n", n), ("d_k", d_k), ("trials", trials)))
    d_v = d_k if d_v is None else _int("d_v", d_v)
    if n < 2:
        raise ValueError(f"n: expected at least 2 stored associations (so there is something to confuse), got {n}")
    combine = check_choice("combine", combine, COMBINE)
    dtype = check_float_dtype("dtype", dtype, allow_none=False)
    device = check_device("device", device)
    T = trials
    current = torch.arange(n).expand(T, n).to(device)                   # true = decoded item of each chain
    truth = current.clone()
    wrong_by_depth, head_wrong, hop_wrong = [], 0.0, 0.0
    for _ in range(L):  # the hops are sequential; everything else is batched
        perm = torch.rand(T, n, generator=generator).argsort(dim=-1).to(device)          # π: (T, n)
        K = random_keys(T, H, n, d=d_k, kind="sphere", generator=generator, device=device, dtype=dtype)
        V = random_keys(T, H, n, d=d_v, kind="sphere", generator=generator, device=device, dtype=dtype)
        overlaps = K @ K.gather(2, current[:, None, :, None].expand(T, H, n, d_k)).mT    # (T, H, i, chain): K[i]·K[x]
        Vpi = V.gather(2, perm[:, None, :, None].expand(T, H, n, d_v))                   # V[π(i)] in row i
        scores = V @ (Vpi.mT @ overlaps)                                                 # (T, H, m, chain)
        target = perm.gather(1, current)                                                 # right next item: (T, chains)
        head_pick = scores.argmax(dim=2)                                                 # (T, H, chains)
        head_wrong += (head_pick != target[:, None]).double().mean().item()
        mean = scores.mean(dim=1)                                                        # (T, m, chain)
        if combine == "average":
            pick = mean.argmax(dim=1)
        else:
            votes = torch.nn.functional.one_hot(head_pick, n).sum(dim=1).to(dtype)       # (T, chain, m)
            tie_break = mean.mT / (2 * mean.abs().amax(dim=1, keepdim=True).mT + 1.0)    # |·| < 1/2
            pick = (votes + tie_break).argmax(dim=-1)
        hop_wrong += (pick != target).double().mean().item()
        current, truth = pick, perm.gather(1, truth)
        wrong_by_depth.append((current != truth).double().mean())
    by_depth = torch.stack(wrong_by_depth).cpu()
    return StackResult(float(by_depth[-1]), by_depth, head_wrong / L, hop_wrong / L, T * n)


class HopSample(NamedTuple):
    """What :func:`one_hop` measures for every chain (tensors of shape (trials, n)).

    failed: the nearest-value clean-up picked a wrong item.
    crosstalk_norm: ‖c‖ = ‖r − v_j‖, the norm of the crosstalk in the read-out r (v_j the right value).
    t_max: the largest cosine ``v_j·v_m`` of the right value with another stored value (the closest competitor).
    """

    failed: torch.Tensor
    crosstalk_norm: torch.Tensor
    t_max: torch.Tensor


def one_hop(n: int, d_k: int, *, d_v: int | None = None, trials: int = 200, generator: torch.Generator | None = None,
            device: torch.device | str | None = None, dtype: torch.dtype = torch.float32) -> HopSample:
    """One hop of one head, looked at closely: the read-out's crosstalk norm and the codebook's closest pair.

    ``trials`` memories ``S = Σ_i v_π(i) k_iᵀ`` (random unit codes, as in :func:`chain_error`), each read
    with every one of its n keys: ``r = S k_x = v_j + c`` (j = π(x)), cleaned up to the nearest stored value
    (``argmax_m v_m·r``). Vectorised over trials and chains.

    Returns:
        :class:`HopSample` (failed, crosstalk_norm, t_max), each (trials, n).
    """
    n, d_k, T = _int("n", n), _int("d_k", d_k), _int("trials", trials)
    d_v = d_k if d_v is None else _int("d_v", d_v)
    if n < 2:
        raise ValueError(f"n: expected at least 2 stored associations (so there is something to confuse), got {n}")
    dtype = check_float_dtype("dtype", dtype, allow_none=False)
    device = check_device("device", device)
    perm = torch.rand(T, n, generator=generator).argsort(dim=-1).to(device)              # π: (T, n)
    K = random_keys(T, n, d=d_k, kind="sphere", generator=generator, device=device, dtype=dtype)
    V = random_keys(T, n, d=d_v, kind="sphere", generator=generator, device=device, dtype=dtype)
    right = V.gather(1, perm[..., None].expand(T, n, d_v))                                 # v_π(x) for chain x
    r = K @ (right.mT @ K).mT                                                              # S k_x: (T, chain, d_v)
    failed = (r @ V.mT).argmax(-1) != perm
    cosines = (right @ V.mT).scatter(-1, perm[..., None], -2.0)                            # the right value itself out
    return HopSample(failed.cpu(), (r - right).norm(dim=-1).cpu(), cosines.amax(-1).cpu())


def _as_array(x: Numbers) -> np.ndarray:
    return np.asarray(x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else x, dtype=np.float64)


def _out(values: np.ndarray, *inputs: Numbers) -> float | np.ndarray:
    return float(values) if all(np.ndim(_as_array(x)) == 0 for x in inputs) else values


def crosstalk_variance(n: Numbers, d_k: Numbers, d_v: Numbers | None = None, H: Numbers = 1) -> float | np.ndarray:
    """Variance of each component of the crosstalk in one head's read-out, ``(n−1)/(d_k·d_v)``, ÷ H when
    H heads are averaged (notebook 04's ``(n−1)/d_k`` for unit-variance values, here per unit-norm value)."""
    for name, x, low in (("n", n, 1), ("d_k", d_k, 1), ("d_v", d_k if d_v is None else d_v, 1), ("H", H, 1)):
        check_numbers(name, x, low=low)
    n, d_k, H = _as_array(n), _as_array(d_k), _as_array(H)
    d_v = d_k if d_v is None else _as_array(d_v)
    return _out((n - 1) / (d_k * d_v * H), n, d_k, H)


def _overlap_nodes(m: np.ndarray, points: int) -> tuple[np.ndarray, np.ndarray]:
    """Quadrature nodes and weights (..., points) for the overlap t = u·w of two random unit vectors
    in m dimensions: density ∝ (1 − t²)^((m−3)/2), mean 0, variance 1/m."""
    x, w = np.polynomial.legendre.leggauss(points)
    half = np.minimum(1.0, 8.0 / np.sqrt(m))[..., None]
    t = x * half
    ww = w * np.clip(1 - t ** 2, 0.0, None) ** ((m[..., None] - 3) / 2)
    return t, ww / ww.sum(-1, keepdims=True)


def hop_error_theory(n: Numbers, d_k: Numbers, d_v: Numbers | None = None, H: Numbers = 1, *,
                     points: int = 32) -> float | np.ndarray:
    """Predicted error of one hop: the right item loses to one of the n − 1 others after cleanup.

    For competitor m of the right item j (value overlap ``t = v_j·v_m``, key overlap ``g = k_m·k_x``,
    crosstalk ``c`` of the other pairs, each component of variance ``σ² =`` :func:`crosstalk_variance`)::

        D_m = (v_j − v_m)·r = (1 − t)(1 − g + A) − √(1 − t²) X_m,      A = v_j·c,  A, X_m ~ N(0, σ²)

    so ``P(D_m < 0 | A) = E_{t,g} Φ(−√((1−t)/(1+t)) (1 − g + A)/σ)`` and, with A shared by all
    competitors, ``p = 1 − E_A[(1 − P(D_m < 0 | A))^(n−1)]``. Two approximations: A and X are treated as
    Gaussian (sums of many crosstalk terms), and the competitors are treated as **independent given the
    answer** (given A). They are not: all X_m are projections of the same crosstalk c, so the events
    "m beats j" are positively correlated and fewer distinct failures occur than independence predicts; the
    theory overestimates large errors (n = 24, d_k = d_v = 16: 0.279 against 0.252 measured).
    t and g follow the exact overlap law of unit vectors.
    H averaged heads are approximated as one head with overlaps in H·d dimensions and variances ÷ H
    (good for H ≲ 3; it underestimates the tiny errors of wider layers). With ``H = 1`` this is the
    single-head error p(n, d_k). Needs d_k, d_v ≥ 4. Arguments broadcast; a float for scalar inputs.
    """
    for name, x in (("n", n), ("d_k", d_k), ("d_v", d_k if d_v is None else d_v), ("H", H)):
        check_numbers(name, x)
    check_int("points", points, low=1)
    n_, dk = _as_array(n), _as_array(d_k)
    dv = dk if d_v is None else _as_array(d_v)
    H_ = _as_array(H)
    if np.any(dk < 4) or np.any(dv < 4):
        raise ValueError(f"d_k, d_v: expected dimensions >= 4 for the theory, got d_k={d_k}, d_v={d_v}")
    if np.any(n_ < 2) or np.any(H_ < 1):
        raise ValueError(f"n, H: expected n >= 2 and H >= 1, got n={n}, H={H}")
    n_, dk, dv, H_ = np.broadcast_arrays(n_, dk, dv, H_)
    sigma_a = np.sqrt((n_ - 1) / (dk * dv * H_))[..., None, None, None]        # A = v_j·c
    sigma_x = np.sqrt(np.maximum(n_ - 2, 1e-3) / (dk * dv * H_))[..., None, None, None]
    t, wt = _overlap_nodes(H_ * dv, points)                                    # (..., P)
    g, wg = _overlap_nodes(H_ * dk, points)
    xa, wa = np.polynomial.hermite_e.hermegauss(points)                        # A nodes: (P,)
    wa = wa / wa.sum()
    A = sigma_a * xa[:, None, None]                                            # (..., P_A, 1, 1)
    slope = np.sqrt((1 - t) / (1 + t))[..., None, :, None]                     # (..., 1, P_t, 1)
    z = -slope * (1 - g[..., None, None, :] + A) / sigma_x
    miss = (torch.special.ndtr(torch.as_tensor(z)).numpy()
            * wt[..., None, :, None] * wg[..., None, None, :]).sum((-1, -2))    # (..., P_A)
    p = 1 - (wa * (1 - miss) ** (n_[..., None] - 1)).sum(-1)
    return _out(np.clip(p, 0.0, 1.0), n, d_k, H)


def stack_error_theory(L: Numbers, H: Numbers, n: Numbers, d_k: Numbers, d_v: Numbers | None = None, *,
                       rule: str = "average", p_head: Numbers | None = None) -> float | np.ndarray:
    """Predicted end-to-end error of L hops with H heads per layer: ``1 − (1 − p_hop)^L ≈ L·p_hop``.

    rule ``"average"``: ``p_hop = hop_error_theory(n, d_k, d_v, H)`` (averaged heads);
    rule ``"all_fail"``: ``p_hop = p^H`` with ``p`` the single-head error (``p_head`` if given, else
    ``hop_error_theory(n, d_k, d_v)``): the probability that all H independent heads fail *each on its
    own*, the paper's form ``L · p^H``. It is the hop error of a rule under which one right head suffices
    (an oracle that takes the answer of any head that is right). For averaged heads it describes no event:
    the average can be wrong while some heads are right (one confidently wrong head outweighs them) and
    right while every head is wrong (their errors point at different items). Arguments broadcast.
    """
    rule = check_choice("rule", rule, THEORY_RULES)
    check_numbers("L", L, low=0)
    check_numbers("H", H, low=1)
    if p_head is not None:
        check_numbers("p_head", p_head, low=0, high=1)
    L, H = _as_array(L), _as_array(H)
    if rule == "average":
        p_hop = _as_array(hop_error_theory(n, d_k, d_v, H))
    else:
        p = _as_array(hop_error_theory(n, d_k, d_v) if p_head is None else p_head)
        p_hop = p ** H
    return _out(1 - (1 - p_hop) ** L, L, H, n, d_k)


def paper_bound(L: Numbers, H: Numbers, n: Numbers, d_k: Numbers, *, cap: bool = True) -> float | np.ndarray:
    """The paper's expression ``L · ((n−1)/d_k)^H`` (arXiv:2508.08289), as it is argued:

    1. one head: its read-out is the signal (norm 1) plus crosstalk of power ``E‖c‖² = (n−1)/d_k``;
       "by Chebyshev the crosstalk outweighs the signal with probability at most ``(n−1)/d_k``";
    2. "a hop fails only when all H (independent) heads fail": ``((n−1)/d_k)^H``;
    3. the chain fails when any of its L hops does; the union bound adds the L hop risks.

    Step 3 is sound. Steps 1 and 2 are **not** a derivation for the nearest-value clean-up of
    :func:`chain_error`: the hop loses to competitor m as soon as ``‖c‖ ≥ √((1 − t_m)/2)`` (≈ 0.71, not 1,
    for near-orthogonal values; ``t_m = v_j·v_m``), so Markov's inequality gives ``2(n−1)/(d_k(1 − t_max))``
    per hop (:func:`hop_failure_bound`), and for averaged heads the averaged crosstalk has the same power
    ``(n−1)/d_k`` (no factor per head), while "all heads fail" is neither necessary nor sufficient for an
    averaged hop to fail (see :func:`stack_error_theory`). So this expression is a *bound* only where a
    measurement puts it above the error (with ``d_v = d_k`` it lies far above every error we measured); it
    is not one in general (``n = 3, d_k = 64, d_v = 2``: 0.031, measured about 0.045).

    It is vacuous (≥ 1) once ``n − 1 ≥ d_k``, for any L, H. ``cap=True`` caps it at 1; ``cap=False`` returns
    the raw product (to show where it is vacuous).
    """
    for name, x, low in (("L", L, 0), ("H", H, 1), ("n", n, 1), ("d_k", d_k, 1)):
        check_numbers(name, x, low=low)
    L, H, n, d_k = (_as_array(x) for x in (L, H, n, d_k))
    raw = L * ((n - 1) / d_k) ** H
    return _out(np.minimum(1.0, raw) if cap else raw, L, H, n, d_k)


def loss_threshold(t: Numbers) -> float | np.ndarray:
    """The smallest crosstalk norm with which competitor m can beat the right value j: ``√((1 − t)/2)``.

    With ``r = v_j + c`` and unit values of cosine ``t = v_j·v_m``, m wins the nearest-value clean-up iff
    ``(v_m − v_j)·c > 1 − t``; by Cauchy–Schwarz ``(v_m − v_j)·c ≤ ‖v_m − v_j‖ ‖c‖ = √(2(1 − t)) ‖c‖``, so a
    loss needs ``‖c‖ > √((1 − t)/2)``, reached when c points along ``v_m − v_j``. ≈ 0.71 for ``t = 0``.
    """
    check_numbers("t", t, low=-1, high=1)
    return _out(np.sqrt((1 - _as_array(t)) / 2), t)


def hop_failure_bound(n: Numbers, d_k: Numbers, d_v: Numbers | None = None, H: Numbers = 1, *,
                      t_max: Numbers | None = None) -> float | np.ndarray:
    """A derived upper bound on the error of one hop with the nearest-value clean-up of :func:`chain_error`.

    Averaging H heads' scores is one clean-up with the concatenated codes ``ũ_m = (v_m^1, ..., v_m^H)/√H``
    (unit norm) and crosstalk ``c̃ = (c^1, ..., c^H)/√H``. Given all values, the key overlaps have mean 0 and
    are uncorrelated, so ``E[‖c̃‖² | values] = (n−1)/d_k`` for every H. A loss needs
    ``‖c̃‖² ≥ (1 − t_max)/2`` (:func:`loss_threshold`; ``t_max`` the largest cosine ``ũ_j·ũ_m`` of the right
    value with a competitor), so by Markov's inequality ``P(X ≥ a) ≤ E X / a`` for ``X ≥ 0``:

        P(hop fails | values) ≤ 2(n−1) / (d_k (1 − t_max))                     (``t_max`` given)

    Without the codebook, split on ``t_max < τ``: the overlap of the concatenated codes is the mean of H
    independent overlaps of unit vectors in d_v dimensions, each sub-Gaussian with variance proxy 1/d_v
    (its moment generating function is below ``exp(λ²/(2 d_v))`` term by term), so
    ``P(t_max ≥ τ) ≤ (n−1) exp(−H d_v τ²/2)`` (union over the n − 1 competitors) and

        P(hop fails) ≤ min_τ [ (n−1) exp(−H d_v τ²/2) + 2(n−1) / (d_k (1 − τ)) ]   (τ on a grid in [0, 1)).

    Both are capped at 1. Every τ gives a valid bound, so the grid minimum is one. The bound is never below
    ``2(n−1)/d_k``, whatever H: one inequality on the norm of the crosstalk cannot see the averaging along
    each decision direction (that needs the tails, :func:`hop_error_theory`). A chain of L hops fails with
    probability at most L times it (the union bound).
    Arguments broadcast; a float for scalar inputs.
    """
    for name, x in (("n", n), ("d_k", d_k), ("d_v", d_k if d_v is None else d_v), ("H", H)):
        check_numbers(name, x, low=1)
    n_, dk, H_ = _as_array(n), _as_array(d_k), _as_array(H)
    dv = dk if d_v is None else _as_array(d_v)
    if t_max is not None:
        check_numbers("t_max", t_max, low=-1, high=1)
        t = _as_array(t_max)
        with np.errstate(divide="ignore"):
            bound = np.where(t < 1, 2 * (n_ - 1) / (dk * np.maximum(1 - t, 1e-300)), np.inf)
        return _out(np.minimum(1.0, bound), n, d_k, H, t_max)
    tau = np.linspace(0.0, 0.999, 1000)
    n_, dk, dv, H_ = (x[..., None] for x in np.broadcast_arrays(n_, dk, dv, H_))
    bound = ((n_ - 1) * np.exp(-H_ * dv * tau ** 2 / 2) + 2 * (n_ - 1) / (dk * (1 - tau))).min(-1)
    return _out(np.minimum(1.0, bound), n, d_k, H)


class RawChainResult(NamedTuple):
    """What :func:`raw_chain` measures, after each of the L layers (tensors of shape (L,)).

    error_by_depth: fraction of chains whose read-out, decoded by nearest code at that depth, is wrong
        (the decoding is only a measurement: it is never fed back).
    noise_by_depth: noise-to-signal power ratio ``ρ = E‖r − (r·c)c‖² / E (r·c)²`` of the read-out r
        against the right code c (ratio of the means over chains).
    chains: number of chains measured.
    """

    error_by_depth: torch.Tensor
    noise_by_depth: torch.Tensor
    chains: int


def raw_chain(L: int, n: int, d: int, *, trials: int = 200, generator: torch.Generator | None = None,
              device: torch.device | str | None = None, dtype: torch.dtype = torch.float32) -> RawChainResult:
    """A stack of L Hebbian layers whose raw read-outs (no clean-up) are the next layer's queries.

    Level ℓ = 0..L has its own random unit codes ``C_ℓ`` (n, d) for the n items; layer ℓ stores
    ``S_ℓ = Σ_i C_{ℓ+1}[π_ℓ(i)] C_ℓ[i]ᵀ`` (d × d), so what layer ℓ writes as a value is what layer ℓ+1
    matches as a key, as in a real model whose residual stream carries the read-out upward. A chain
    starts at ``r_0 = C_0[x]`` and passes ``r_ℓ = S_ℓ r_{ℓ−1}``: the crosstalk of each layer is not
    removed, it is read by the next layer as a (wrong) mixture of stored items. Vectorised over
    ``trials`` stacks × n chains; the loop is over the L layers. Theory: :func:`raw_noise_theory`.

    Returns:
        :class:`RawChainResult` (error_by_depth (L,), noise_by_depth (L,), chains).
    """
    L, n, d, T = (_int(name, value) for name, value in (("L", L), ("n", n), ("d", d), ("trials", trials)))
    if n < 2:
        raise ValueError(f"n: expected at least 2 stored associations, got {n}")
    dtype = check_float_dtype("dtype", dtype, allow_none=False)
    device = check_device("device", device)
    codes = random_keys(T, n, d=d, kind="sphere", generator=generator, device=device, dtype=dtype)   # C_0
    r, truth = codes, torch.arange(n).expand(T, n).to(device)                   # (T, chain, d), (T, chain)
    errors, noise = [], []
    for _ in range(L):  # the layers are sequential; trials and chains are batched
        nxt = random_keys(T, n, d=d, kind="sphere", generator=generator, device=device, dtype=dtype)
        perm = torch.rand(T, n, generator=generator).argsort(dim=-1).to(device)
        S = nxt.gather(1, perm[..., None].expand(T, n, d)).mT @ codes             # Σ_i C'[π(i)] C[i]ᵀ: (T, d, d)
        r, truth, codes = r @ S.mT, perm.gather(1, truth), nxt
        right = codes.gather(1, truth[..., None].expand(T, n, d))                # the right code of each chain
        signal = (r * right).sum(-1)
        noise.append(((r * r).sum(-1) - signal ** 2).mean() / (signal ** 2).mean())
        errors.append(((r @ codes.mT).argmax(-1) != truth).double().mean())
    return RawChainResult(torch.stack(errors).cpu(), torch.stack(noise).double().cpu(), T * n)


def raw_noise_theory(L: Numbers, n: Numbers, d: Numbers) -> float | np.ndarray:
    """Noise-to-signal power ratio after L raw layers: ``ρ_L = (1 + λ)^L − 1`` with ``λ = (n−1)/d``.

    One layer adds crosstalk of power λ per unit of what it reads (notebook 04: fidelity 1/√(1+λ)),
    and the noise it receives is made of stored codes, which the layer retrieves like signal (gain 1):
    ``1 + ρ_ℓ = (1 + λ)(1 + ρ_{ℓ−1})``. So ρ grows like L·λ while L·λ ≪ 1, then compounds.
    """
    for name, x, low in (("L", L, 0), ("n", n, 1), ("d", d, 1)):
        check_numbers(name, x, low=low)
    L_, n_, d_ = _as_array(L), _as_array(n), _as_array(d)
    with np.errstate(over="ignore"):
        rho = (1 + (n_ - 1) / d_) ** L_ - 1
    warn_nonfinite("raw_noise_theory", torch.as_tensor(rho), "(1 + (n − 1)/d)^L overflows float64")
    return _out(rho, L, n, d)


def same_task_budget(hops: int, width: int, n: int, *, trials: int = 100, min_head: int = 4,
                     generator: torch.Generator | None = None,
                     device: torch.device | str | None = None) -> list[dict[str, float]]:
    """Every way to spend a per-layer budget of ``width = H · d_k`` head dimensions on the SAME K-hop task.

    The task is fixed: chains of ``hops`` = K hops through memories of n associations, so every shape
    has L = K layers (one retrieval per layer) and differs only in how its width is cut into heads:
    H heads of ``d_k = width / H`` (``d_v = d_k``, averaged), for every divisor H with ``d_k ≥ min_head``.
    Equal ``H · d_k`` means equal query/key/value projection parameters (``3 · d_model · H · d_k`` per
    layer in a Transformer); the memory entries ``H · d_k²`` are not equal (reported).

    Returns one row per shape, fewest heads first: ``{"L", "H", "d_k", "entries", "measured", "se",
    "theory", "paper_bound"}`` (``se``: binomial standard error of ``measured``; ``paper_bound``
    uncapped :func:`paper_bound`).
    """
    hops, width, n = _int("hops", hops), _int("width", width), _int("n", n)
    min_head = check_int("min_head", min_head, low=1)
    shapes = [h for h in range(1, width + 1) if width % h == 0 and width // h >= max(4, min_head)]
    if not shapes:
        raise ValueError(f"width: expected a width with at least one way to cut it into heads of d_k >= "
                         f"{max(4, min_head)} (max(4, min_head)), got width = {width}")
    rows = []
    for H in shapes:
        d_k = width // H
        r = chain_error(hops, H, n, d_k, trials=trials, generator=generator, device=device)
        rows.append({"L": hops, "H": H, "d_k": d_k, "entries": H * d_k * d_k, "measured": r.error,
                     "se": math.sqrt(max(r.error * (1 - r.error), 1.0 / r.chains) / r.chains),
                     "theory": float(stack_error_theory(hops, H, n, d_k)),
                     "paper_bound": float(paper_bound(hops, H, n, d_k, cap=False))})
    return rows


class ShapeDifference(NamedTuple):
    """Difference of two shapes' mean final accuracies, with its 95 % Welch interval (seeds are the replicates)."""

    diff: float
    lo: float
    hi: float
    df: float


def shape_difference(a: Numbers, b: Numbers) -> ShapeDifference:
    """Mean of ``a`` minus mean of ``b`` (per-seed accuracies of two shapes), with a 95 % Welch interval.

    ``se = √(s_a²/n_a + s_b²/n_b)`` (sample variances, ddof 1); Welch–Satterthwaite degrees of freedom
    ``df = se⁴ / ((s_a²/n_a)²/(n_a−1) + (s_b²/n_b)²/(n_b−1))``, rounded down for the t quantile (conservative);
    interval ``diff ± t_{0.975}(⌊df⌋) · se``. Needs at least 2 seeds per shape.
    """
    check_numbers("a", a)
    check_numbers("b", b)
    a, b = _as_array(a).ravel(), _as_array(b).ravel()
    if a.size < 2 or b.size < 2:
        raise ValueError(f"a, b: expected at least 2 seeds each, got {a.size} and {b.size}")
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    se = math.sqrt(va + vb)
    diff = float(a.mean() - b.mean())
    if se == 0:
        return ShapeDifference(diff, diff, diff, math.inf)
    df = se ** 4 / (va ** 2 / (a.size - 1) + vb ** 2 / (b.size - 1))
    half = t_quantile(max(1, math.floor(df + 1e-9))) * se   # 2.0 may come out as 1.999…
    return ShapeDifference(diff, diff - half, diff + half, float(df))


def budget_shapes(budget: int) -> list[tuple[int, int]]:
    """All (L, H) with ``L · H = budget`` (the same number of heads, hence of parameters), shallow first."""
    budget = _int("budget", budget)
    return [(L, budget // L) for L in range(1, budget + 1) if budget % L == 0]


def cached_shape_runs(hops: int) -> dict:
    """The fuller depth-vs-width training runs that notebook 05 shows, shipped with the package.

    ``benchmarks/depth_width.py --save pavlovlab/data/depth_width_{hops}hop.json`` made them (the command and
    its arguments are in the file's ``"setup"``); ``"runs"`` holds one record per shape: ``"shape"``,
    ``"step"`` (the evaluation steps) and ``"accuracy"`` (seeds × steps, held-out accuracy). A cache, clearly
    labelled as such where it is shown: re-run the command to check it. ``hops``: 1 or 2.
    """
    hops = check_int("hops", hops, low=1)
    source = resources.files("pavlovlab") / "data" / f"depth_width_{hops}hop.json"
    if not source.is_file():
        raise ValueError(f"hops: expected 1 or 2 (the cached runs shipped in pavlovlab/data), got {hops}")
    return json.loads(source.read_text(encoding="utf-8"))


__all__ = [
    "COMBINE",
    "HopSample",
    "RawChainResult",
    "ShapeDifference",
    "StackResult",
    "budget_shapes",
    "cached_shape_runs",
    "chain_error",
    "crosstalk_variance",
    "hop_error_theory",
    "hop_failure_bound",
    "loss_threshold",
    "one_hop",
    "paper_bound",
    "raw_chain",
    "raw_noise_theory",
    "same_task_budget",
    "shape_difference",
    "stack_error_theory",
]
