"""The error of a stack of Hebbian retrievals in closed form: predictions, the paper's bound, a derived bound.

The set-up is :mod:`pavlovlab.depth.chain`'s: L layers of H heads, each head a Hebbian memory of n pairs with
random unit codes, every hop cleaned up to the nearest stored value.

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

A stack without clean-up (:func:`pavlovlab.depth.chain.raw_chain`) compounds its noise instead
(:func:`raw_noise_theory`).

Every closed form takes numbers, arrays or tensors (broadcast together) and returns a float64 tensor on the CPU
of their broadcast shape (0-d when every argument is a single number), as the closed forms of
:mod:`pavlovlab.capacity` do. The formulas are evaluated in NumPy (the quadrature's nodes come from it) and the
result is handed over as a tensor at the end.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from .._checks import check_choice, check_int, check_numbers, checked_by, unchecked

Numbers = float | np.ndarray | torch.Tensor | Sequence[float]
"""A number or an array of numbers (broadcast together)."""

THEORY_RULES = ("average", "all_fail")
"""The decoders the closed forms describe: averaged heads, or a hop that fails only when all H heads fail."""


def _as_array(x: Numbers) -> np.ndarray:
    """``x`` as a float64 NumPy array (a tensor detached and copied to the CPU)."""
    return np.asarray(x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else x, dtype=np.float64)


def _check_at_least(**numbers: tuple[Numbers, float | None]) -> None:
    """Each argument ``name=(x, low)``: numbers, arrays or tensors of finite numbers >= low (None: no bound)."""
    for name, (x, low) in numbers.items():
        check_numbers(name, x, low=low)


def _out(values: np.ndarray) -> torch.Tensor:
    """What a closed form returns: ``values`` as a float64 tensor on the CPU, of the same shape (0-d for a number)."""
    return torch.from_numpy(np.array(values, dtype=np.float64))


def _crosstalk_variance(n: np.ndarray, d_k: np.ndarray, d_v: np.ndarray, H: np.ndarray) -> np.ndarray:
    """Variance of each component of the crosstalk in one head's read-out, ``(n−1)/(d_k·d_v)``, ÷ H when H heads
    are averaged (notebook 04's ``(n−1)/d_k`` for unit-variance values, here per unit-norm value), on arrays."""
    return (n - 1) / (d_k * d_v * H)


def _overlap_nodes(m: np.ndarray, points: int) -> tuple[np.ndarray, np.ndarray]:
    """Quadrature nodes and weights (..., points) for the overlap t = u·w of two random unit vectors
    in m dimensions: density ∝ (1 − t²)^((m−3)/2), mean 0, variance 1/m."""
    x, w = np.polynomial.legendre.leggauss(points)
    half = np.minimum(1.0, 8.0 / np.sqrt(m))[..., None]
    t = x * half
    ww = w * np.clip(1 - t ** 2, 0.0, None) ** ((m[..., None] - 3) / 2)
    return t, ww / ww.sum(-1, keepdims=True)


def _check_hop_theory(n: Numbers, d_k: Numbers, d_v: Numbers | None, H: Numbers, points: int | None = None) -> None:
    """The arguments of :func:`hop_error_theory`: n >= 2, d_k, d_v >= 4, H >= 1 and quadrature points >= 1 (None:
    the door's default, for a door that reads the theory at its default)."""
    _check_at_least(n=(n, None), d_k=(d_k, None), d_v=(d_k if d_v is None else d_v, None), H=(H, None))
    if points is not None:
        check_int("points", points, low=1)
    dk = _as_array(d_k)
    if np.any(dk < 4) or np.any((dk if d_v is None else _as_array(d_v)) < 4):
        raise ValueError(f"d_k, d_v: expected dimensions >= 4 for the theory, got d_k={d_k}, d_v={d_v}")
    if np.any(_as_array(n) < 2) or np.any(_as_array(H) < 1):
        raise ValueError(f"n, H: expected n >= 2 and H >= 1, got n={n}, H={H}")


@checked_by(_check_hop_theory)
def hop_error_theory(n: Numbers, d_k: Numbers, d_v: Numbers | None = None, H: Numbers = 1, *,
                     points: int = 32) -> torch.Tensor:
    """Predicted error of one hop: the right item loses to one of the n − 1 others after cleanup.

    For competitor m of the right item j (value overlap ``t = v_j·v_m``, key overlap ``g = k_m·k_x``,
    crosstalk ``c`` of the other pairs, each component of variance ``σ² = (n−1)/(d_k·d_v·H)``)::

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
    single-head error p(n, d_k). Needs d_k, d_v ≥ 4. Arguments broadcast (see the module docstring for what comes back).
    """
    n_, dk, H_ = _as_array(n), _as_array(d_k), _as_array(H)
    dv = dk if d_v is None else _as_array(d_v)
    n_, dk, dv, H_ = np.broadcast_arrays(n_, dk, dv, H_)
    sigma_a = np.sqrt(_crosstalk_variance(n_, dk, dv, H_))[..., None, None, None]  # A = v_j·c
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
    return _out(np.clip(p, 0.0, 1.0))


_hop_error_theory = unchecked(hop_error_theory)


def _check_stack(rule: str, L: Numbers, H: Numbers, n: Numbers, d_k: Numbers, d_v: Numbers | None,
                 p_head: Numbers | None) -> None:
    """The rule, depth and heads of :func:`stack_error_theory`, a head error in [0, 1] if given, and the arguments of
    the hop theory it reads (:func:`hop_error_theory` at H averaged heads, or at one head without ``p_head``)."""
    rule = check_choice("rule", rule, THEORY_RULES)
    _check_at_least(L=(L, 0), H=(H, 1))
    if p_head is not None:
        check_numbers("p_head", p_head, low=0, high=1)
    if rule == "average":
        _check_hop_theory(n, d_k, d_v, _as_array(H))   # H as the body passes it on (a message shows it as such)
    elif p_head is None:
        _check_hop_theory(n, d_k, d_v, 1)


@checked_by(_check_stack)
def stack_error_theory(L: Numbers, H: Numbers, n: Numbers, d_k: Numbers, d_v: Numbers | None = None, *,
                       rule: str = "average", p_head: Numbers | None = None) -> torch.Tensor:
    """Predicted end-to-end error of L hops with H heads per layer: ``1 − (1 − p_hop)^L ≈ L·p_hop``.

    rule ``"average"``: ``p_hop = hop_error_theory(n, d_k, d_v, H)`` (averaged heads);
    rule ``"all_fail"``: ``p_hop = p^H`` with ``p`` the single-head error (``p_head`` if given, else
    ``hop_error_theory(n, d_k, d_v)``): the probability that all H independent heads fail *each on its
    own*, the paper's form ``L · p^H``. It is the hop error of a rule under which one right head suffices
    (an oracle that takes the answer of any head that is right). For averaged heads it describes no event:
    the average can be wrong while some heads are right (one confidently wrong head outweighs them) and
    right while every head is wrong (their errors point at different items). Arguments broadcast.
    """
    L, H = _as_array(L), _as_array(H)
    if rule == "average":
        p_hop = _as_array(_hop_error_theory(n, d_k, d_v, H))
    else:
        p = _as_array(_hop_error_theory(n, d_k, d_v) if p_head is None else p_head)
        p_hop = p ** H
    return _out(1 - (1 - p_hop) ** L)


def _check_paper_bound(L: Numbers, H: Numbers, n: Numbers, d_k: Numbers) -> None:
    """The depth L >= 0, heads H >= 1, pairs n >= 1 and key dimension d_k >= 1 of :func:`paper_bound`."""
    _check_at_least(L=(L, 0), H=(H, 1), n=(n, 1), d_k=(d_k, 1))


@checked_by(_check_paper_bound)
def paper_bound(L: Numbers, H: Numbers, n: Numbers, d_k: Numbers, *, cap: bool = True) -> torch.Tensor:
    """The paper's expression ``L · ((n−1)/d_k)^H`` (arXiv:2508.08289), as it is argued:

    1. one head: its read-out is the signal (norm 1) plus crosstalk of power ``E‖c‖² = (n−1)/d_k``;
       "by Chebyshev the crosstalk outweighs the signal with probability at most ``(n−1)/d_k``";
    2. "a hop fails only when all H (independent) heads fail": ``((n−1)/d_k)^H``;
    3. the chain fails when any of its L hops does; the union bound adds the L hop risks.

    Step 3 is sound. Steps 1 and 2 are **not** a derivation for the nearest-value clean-up of
    :func:`pavlovlab.depth.chain.chain_error`: the hop loses to competitor m as soon as
    ``‖c‖ ≥ √((1 − t_m)/2)`` (≈ 0.71, not 1, for near-orthogonal values; ``t_m = v_j·v_m``), so Markov's
    inequality gives ``2(n−1)/(d_k(1 − t_max))`` per hop (:func:`hop_failure_bound`), and for averaged heads
    the averaged crosstalk has the same power ``(n−1)/d_k`` (no factor per head), while "all heads fail" is
    neither necessary nor sufficient for an averaged hop to fail (see :func:`stack_error_theory`). So this
    expression is a *bound* only where a measurement puts it above the error (with ``d_v = d_k`` it lies far
    above every error we measured); it is not one in general (``n = 3, d_k = 64, d_v = 2``: 0.031, measured
    about 0.045).

    It is vacuous (≥ 1) once ``n − 1 ≥ d_k``, for any L, H. ``cap=True`` caps it at 1; ``cap=False`` returns
    the raw product (to show where it is vacuous).
    """
    L, H, n, d_k = (_as_array(x) for x in (L, H, n, d_k))
    raw = L * ((n - 1) / d_k) ** H
    return _out(np.minimum(1.0, raw) if cap else raw)


def _check_cosine(t: Numbers) -> None:
    """Cosines ``t`` of two unit vectors, in [−1, 1]."""
    check_numbers("t", t, low=-1, high=1)


@checked_by(_check_cosine)
def loss_threshold(t: Numbers) -> torch.Tensor:
    """The smallest crosstalk norm with which competitor m can beat the right value j: ``√((1 − t)/2)``.

    With ``r = v_j + c`` and unit values of cosine ``t = v_j·v_m``, m wins the nearest-value clean-up iff
    ``(v_m − v_j)·c > 1 − t``; by Cauchy–Schwarz ``(v_m − v_j)·c ≤ ‖v_m − v_j‖ ‖c‖ = √(2(1 − t)) ‖c‖``, so a
    loss needs ``‖c‖ > √((1 − t)/2)``, reached when c points along ``v_m − v_j``. ≈ 0.71 for ``t = 0``.
    """
    return _out(np.sqrt((1 - _as_array(t)) / 2))


def _check_failure_bound(n: Numbers, d_k: Numbers, d_v: Numbers | None, H: Numbers, t_max: Numbers | None) -> None:
    """The sizes of :func:`hop_failure_bound` (each >= 1) and the closest competitor's cosine in [−1, 1] if given."""
    _check_at_least(n=(n, 1), d_k=(d_k, 1), d_v=(d_k if d_v is None else d_v, 1), H=(H, 1))
    if t_max is not None:
        check_numbers("t_max", t_max, low=-1, high=1)


@checked_by(_check_failure_bound)
def hop_failure_bound(n: Numbers, d_k: Numbers, d_v: Numbers | None = None, H: Numbers = 1, *,
                      t_max: Numbers | None = None) -> torch.Tensor:
    """A derived upper bound on the error of one hop with the nearest-value clean-up of
    :func:`pavlovlab.depth.chain.chain_error`.

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
    Arguments broadcast (see the module docstring for what comes back).
    """
    n_, dk, H_ = _as_array(n), _as_array(d_k), _as_array(H)
    dv = dk if d_v is None else _as_array(d_v)
    if t_max is not None:
        t = _as_array(t_max)
        with np.errstate(divide="ignore"):
            bound = np.where(t < 1, 2 * (n_ - 1) / (dk * np.maximum(1 - t, 1e-300)), np.inf)
        return _out(np.minimum(1.0, bound))
    tau = np.linspace(0.0, 0.999, 1000)
    n_, dk, dv, H_ = (x[..., None] for x in np.broadcast_arrays(n_, dk, dv, H_))
    bound = ((n_ - 1) * np.exp(-H_ * dv * tau ** 2 / 2) + 2 * (n_ - 1) / (dk * (1 - tau))).min(-1)
    return _out(np.minimum(1.0, bound))


_hop_failure_bound = unchecked(hop_failure_bound)


def _check_heads_cosines(n: Numbers, d_k: Numbers, t_max: Numbers) -> dict[str, np.ndarray]:
    """n, d_k >= 1 and one cosine in [−1, 1] per head on the last axis (returned as an array (..., H))."""
    _check_at_least(n=(n, 1), d_k=(d_k, 1))
    check_numbers("t_max", t_max, low=-1, high=1)
    t = _as_array(t_max)
    if t.ndim == 0:
        raise ValueError(f"t_max: expected one cosine per head on the last axis (..., H), got a scalar {t_max}")
    return {"t_max": t}


@checked_by(_check_heads_cosines)
def all_heads_fail_bound(n: Numbers, d_k: Numbers, t_max: Numbers) -> torch.Tensor:
    """A derived bound of the paper's form ``(n/d_k)^H``, with its constant, for the decoder under which a hop
    fails only when **every** head's own clean-up fails (one right head suffices):

        P(all H heads fail | values) = ∏_h P(head h fails | values_h) ≤ ∏_h min(1, 2(n−1)/(d_k(1 − t_max,h)))

    The heads draw independent codes, so given the values their failures are independent; each factor is
    :func:`hop_failure_bound` (Cauchy–Schwarz, then Markov on ``‖c^h‖²``). So ``r* ≤ L·∏_h C_h (n−1)/d_k``
    with ``C_h = 2/(1 − t_max,h)``: the paper's ``L·(n/d_k)^H`` up to this constant (a union bound over the
    L hops). ``t_max``: (..., H), each head's largest cosine of the right value with a competitor.
    """
    per_head = _as_array(_hop_failure_bound(_as_array(n)[..., None], _as_array(d_k)[..., None], t_max=t_max))
    return _out(np.prod(per_head, axis=-1))


def _check_averaged_heads(n: Numbers, d_k: Numbers, t_mean_max: Numbers, H: Numbers, moment_ratio: Numbers) -> None:
    """The sizes of :func:`averaged_heads_bound` (each >= 1), a head-averaged cosine in [−1, 1] and a moment ratio
    >= 0."""
    _check_at_least(n=(n, 1), d_k=(d_k, 1), H=(H, 1))
    check_numbers("t_mean_max", t_mean_max, low=-1, high=1)
    check_numbers("moment_ratio", moment_ratio, low=0)


@checked_by(_check_averaged_heads)
def averaged_heads_bound(n: Numbers, d_k: Numbers, t_mean_max: Numbers, H: Numbers,
                         moment_ratio: Numbers) -> torch.Tensor:
    """A derived bound of the paper's form for H **averaged** heads (the clean-up of
    :func:`pavlovlab.depth.chain.chain_error`):

        P(hop fails | values) ≤ min(1, M_H · (2(n−1) / (d_k (1 − t̄_max)))^H),     M_H = E[Z^H] / (E Z)^H

    Derivation: the right item j loses to m only if ``Σ_h (v^h_m − v^h_j)·c^h > Σ_h (1 − t^h_m) = H(1 − t̄_m)``.
    Cauchy–Schwarz twice bounds the left side by ``√(2 H (1 − t̄_m)) · √Z`` with ``Z = Σ_h ‖c^h‖²``, so a loss
    needs ``Z ≥ H(1 − t̄_max)/2``; Markov's inequality on ``Z^H`` gives ``P ≤ E[Z^H] / (H(1 − t̄_max)/2)^H``, and
    ``E[Z | values] = H(n−1)/d_k``. ``M_H`` (``moment_ratio``) is not known in closed form: it is measured
    (:func:`pavlovlab.depth.chain.heads_hop`, ``crosstalk_power``), 1 for H = 1. ``t_mean_max``: the largest
    head-averaged cosine of the right value with a competitor. Arguments broadcast.
    """
    n_, dk, t, H_, M = (_as_array(x) for x in (n, d_k, t_mean_max, H, moment_ratio))
    with np.errstate(divide="ignore", over="ignore"):
        base = np.where(t < 1, 2 * (n_ - 1) / (dk * np.maximum(1 - t, 1e-300)), np.inf)
        bound = M * base ** H_
    return _out(np.minimum(1.0, bound))


def _check_raw_noise(L: Numbers, n: Numbers, d: Numbers) -> None:
    _check_at_least(L=(L, 0), n=(n, 1), d=(d, 1))


@checked_by(_check_raw_noise, nonfinite="(1 + (n − 1)/d)^L overflows float64")
def raw_noise_theory(L: Numbers, n: Numbers, d: Numbers) -> torch.Tensor:
    """Noise-to-signal power ratio after L raw layers: ``ρ_L = (1 + λ)^L − 1`` with ``λ = (n−1)/d``.

    One layer adds crosstalk of power λ per unit of what it reads (notebook 04: fidelity 1/√(1+λ)),
    and the noise it receives is made of stored codes, which the layer retrieves like signal (gain 1):
    ``1 + ρ_ℓ = (1 + λ)(1 + ρ_{ℓ−1})``. So ρ grows like L·λ while L·λ ≪ 1, then compounds.
    """
    L_, n_, d_ = _as_array(L), _as_array(n), _as_array(d)
    with np.errstate(over="ignore"):
        rho = (1 + (n_ - 1) / d_) ** L_ - 1
    return _out(rho)


__all__ = [
    "THEORY_RULES",
    "all_heads_fail_bound",
    "averaged_heads_bound",
    "hop_error_theory",
    "hop_failure_bound",
    "loss_threshold",
    "paper_bound",
    "raw_noise_theory",
    "stack_error_theory",
]
