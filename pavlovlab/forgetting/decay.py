"""Forgetting on purpose: decay, its memory horizon, multi-scale heads (RetNet) and gated decay.

A Hebbian memory never forgets: every bell it ever heard still rings in ``S``. Multiplying the
memory by ``γ < 1`` before each write makes old associations fade::

    S_t = γ S_{t-1} + v_t k_tᵀ     ⇒     an association written ℓ steps ago is read with weight γ^ℓ

so its read-out halves after ``ℓ½ = ln 2 / (−ln γ)`` steps (the half-life, our "memory horizon").
RetNet (Sun et al. 2023) gives each head its own γ_h = 1 − 2^(−5−h): short and long memories side
by side. Gated decay makes γ depend on the token (one scalar gate per token), ``S_t = g_t S_{t-1} + v_t k_tᵀ``, so the
model itself decides when to forget (a context boundary wipes the slate; quiet stretches keep it): the form
itself is :func:`pavlovlab.attention.scalar_gated_linear_attention`; this module measures what it remembers.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from typing import cast

import torch

from .._checks import (
    check_device,
    check_float_dtype,
    check_int,
    check_real,
    check_real_tensor,
    check_tensor,
    checked_by,
    unchecked,
)
from ..attention.forms import (
    BETA_MAX,
    LOW_PRECISION,
    _check_quadratic,
    delta_rule_attention,
    linear_attention,
    scalar_gated_linear_attention,
)
from ..sampling import _check_draw, random_keys

_random_keys = unchecked(random_keys)
_linear_attention = unchecked(linear_attention)
_delta_rule_attention = unchecked(delta_rule_attention)
"""The algorithms of the shared doors, called on what this module's doors checked and drew."""


def _check_gamma(gamma: float | torch.Tensor, name: str = "gamma", *, high_open: bool = False) -> torch.Tensor:
    """γ as a float64 CPU-or-device tensor checked to lie in (0, 1] (or (0, 1) when ``high_open``)."""
    if isinstance(gamma, torch.Tensor):
        check_tensor(name, gamma, min_rank=0)
        check_real_tensor(name, gamma, high=1.0)
        if bool((gamma <= 0).any()):
            raise ValueError(f"{name}: expected values in (0, 1], got a minimum of {gamma.min().item():.4g}")
        g = gamma
    else:
        g = torch.tensor(check_real(name, gamma, low=0.0, low_open=True, high=1.0), dtype=torch.float64)
    if high_open and bool((g >= 1).any()):
        raise ValueError(f"{name}: expected values in (0, 1) (γ = 1 never forgets), got {g.max().item():.4g}")
    return g


def _check_heads(n_heads: int, first: int, device: torch.device | str | None,
                 dtype: torch.dtype) -> dict[str, object]:
    """The arguments of :func:`retnet_decays`; the device and dtype as checked."""
    check_int("n_heads", n_heads, low=1)
    check_int("first", first, low=1)
    dtype = check_float_dtype("dtype", dtype, allow_none=False)
    return {"device": check_device("device", device), "dtype": dtype}


@checked_by(_check_heads)
def retnet_decays(n_heads: int, *, first: int = 5, device: torch.device | str | None = None,
                  dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """RetNet's multi-scale decays ``γ_h = 1 − 2^(−first−h)`` for h = 0..n_heads−1 (``first = 5``).

    Returns a tensor (n_heads,): 0.96875, 0.984375, 0.9921875, ... each head remembers twice as long
    as the one before. >>> retnet_decays(4)
    """
    h = torch.arange(n_heads, dtype=torch.float64)
    return _check_below_one((1.0 - 2.0 ** (-first - h)).to(device=device, dtype=dtype), first)


def _check_below_one(gammas: torch.Tensor, first: int) -> torch.Tensor:
    """RetNet's decays, refused where ``1 − 2^−m`` rounds to 1 ("never forget") in their dtype, once m exceeds the
    mantissa."""
    if bool((gammas >= 1).any()):
        ok = int((gammas < 1).sum())
        raise ValueError(f"n_heads: in {gammas.dtype} only the first {ok} of {len(gammas)} heads (first={first}) have "
                         f"a decay γ < 1, the others round to γ = 1.0 (never forget); use dtype=torch.float64 or fewer "
                         "heads")
    return gammas


def _check_decay_rate(gamma: float | torch.Tensor) -> dict[str, float] | None:
    """γ in (0, 1] for :func:`half_life` and :func:`effective_window`: a tensor as given, a number as a float."""
    g = _check_gamma(gamma)
    return None if isinstance(gamma, torch.Tensor) else {"gamma": float(g)}


def _decay_tensor(gamma: float | torch.Tensor) -> torch.Tensor:
    """γ as a tensor: a tensor as given, a number in float64."""
    return gamma if isinstance(gamma, torch.Tensor) else torch.tensor(gamma, dtype=torch.float64)


@checked_by(_check_decay_rate)
def half_life(gamma: float | torch.Tensor) -> float | torch.Tensor:
    """The memory horizon ``ℓ½ = ln 2 / (−ln γ)``: after ℓ½ writes an association is read at half strength.

    gamma: a float or a tensor (...) in (0, 1]; γ = 1 gives ``inf`` (a Hebbian memory never fades).
    Returns the same kind (float or tensor of the same shape). For γ close to 1, ℓ½ ≈ 0.69 / (1 − γ).
    """
    g = _decay_tensor(gamma)
    out = torch.where(g >= 1, math.inf, math.log(2.0) / -torch.log(g))
    return out if isinstance(gamma, torch.Tensor) else float(out)


@checked_by(_check_decay_rate)
def effective_window(gamma: float | torch.Tensor) -> float | torch.Tensor:
    """The total weight ``Σ_ℓ γ^ℓ = 1 / (1 − γ)``: how many recent writes the memory effectively sums.

    gamma: a float or a tensor in (0, 1]; γ = 1 gives ``inf``.
    """
    g = _decay_tensor(gamma)
    out = torch.where(g >= 1, math.inf, 1.0 / (1.0 - g))
    return out if isinstance(gamma, torch.Tensor) else float(out)


def _check_retention(gamma: float | torch.Tensor, lags: torch.Tensor) -> dict[str, torch.Tensor]:
    """The arguments of :func:`retention`: γ in (0, 1] as a tensor (:func:`_check_gamma`), and the lags."""
    g = _check_gamma(gamma)
    _check_lags(lags)
    return {"gamma": g}


@checked_by(_check_retention)
def retention(gamma: float | torch.Tensor, lags: torch.Tensor) -> torch.Tensor:
    """Theory: the read-out of an association written ℓ steps back, relative to a fresh one: ``γ^ℓ``.

    gamma: float or tensor (...); lags: (L,) non-negative -> (..., L).
    """
    g = cast(torch.Tensor, gamma).to(device=lags.device)                # made a tensor by the check
    return g[..., None] ** lags.to(g.dtype)


def _check_lags(lags: torch.Tensor) -> torch.Tensor:
    """Lags (L,): a rank-1 tensor of non-negative numbers."""
    if not isinstance(lags, torch.Tensor):
        raise TypeError(f"lags: expected a torch.Tensor of lags (L,), got {type(lags).__name__}")
    if lags.dim() != 1:
        raise ValueError(f"lags: expected a tensor of rank 1 (L,), got shape {tuple(lags.shape)}")
    if bool((lags < 0).any()):
        raise ValueError(f"lags: expected non-negative lags, got a minimum of {lags.min().item()}")
    return lags


def _check_trials(d_k: int, d_v: int, n_trials: int, device: torch.device | str | None, dtype: torch.dtype, *,
                  d_k_low: int = 1) -> tuple[torch.device | None, torch.dtype]:
    """The sizes of a recall measurement (d_k >= ``d_k_low``, d_v, n_trials), its device and dtype (returned)."""
    check_int("d_k", d_k, low=d_k_low)
    check_int("d_v", d_v, low=1)
    check_int("n_trials", n_trials, low=1)
    dtype = check_float_dtype("dtype", dtype, allow_none=False)
    return check_device("device", device), dtype


def _check_pair_draws(n_trials: int, T: int, d_k: int, d_v: int, generator: torch.Generator | None) -> None:
    """The draws of :func:`_first_pair_recall` and :func:`recall_by_age`: n_trials × T unit keys and values in
    float64 on the CPU ``generator``, checked to fit in memory."""
    _check_draw((n_trials, T), d_k, "sphere", generator, None, torch.float64)
    _check_draw((n_trials, T), d_v, "sphere", generator, None, torch.float64)


def _check_chunks(lead: tuple[int, ...], T: int, chunk_size: int, device: torch.device | None,
                  dtype: torch.dtype) -> None:
    """The chunks' scores of a chunkwise form over T steps with leading dims ``lead``, checked to fit in memory."""
    _check_quadratic("chunk", torch.Size(lead), T, chunk_size, torch.empty(0, device=device, dtype=dtype))


def _check_recall_vs_lag(gamma: float | torch.Tensor, max_lag: int, d_k: int, d_v: int, n_trials: int,
                         orthogonal: bool, chunk_size: int, generator: torch.Generator | None,
                         device: torch.device | str | None, dtype: torch.dtype) -> dict[str, object]:
    """The arguments of :func:`recall_vs_lag`: γ as a tensor, the device and dtype as checked (d_k >= 2 for keys
    orthogonal to the target's), the draws and the chunks of linear attention checked to fit in memory."""
    check_int("max_lag", max_lag, low=0)
    device, dtype = _check_trials(d_k, d_v, n_trials, device, dtype, d_k_low=2 if orthogonal else 1)
    g = _check_gamma(gamma)
    _check_pair_draws(n_trials, max_lag + 1, d_k, d_v, generator)
    chunk_size = check_int("chunk_size", chunk_size, low=1)
    _check_chunks((*g.shape, n_trials), max_lag + 1, chunk_size, device, dtype)
    return {"gamma": g, "chunk_size": chunk_size, "device": device, "dtype": dtype}


@checked_by(_check_recall_vs_lag)
def recall_vs_lag(gamma: float | torch.Tensor, max_lag: int, *, d_k: int = 64, d_v: int = 64, n_trials: int = 64,
                  orthogonal: bool = False, chunk_size: int = 64, generator: torch.Generator | None = None,
                  device: torch.device | str | None = None, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Measured recall of one association as a function of its age, for each decay γ (each head).

    Each trial writes a target pair (k₀, v₀) (unit vectors), then ``max_lag`` distractor pairs, all
    through ``linear_attention(..., decay=γ)`` with the heads as a leading dim, and queries with k₀
    at every step. The read-out at lag ℓ, projected on the target value::

        r(ℓ) = v₀ · S_ℓ k₀ = γ^ℓ + Σ_{s=1..ℓ} γ^(ℓ−s) (k₀·k_s)(v_s·v₀)     (mean γ^ℓ, plus crosstalk)

    With ``orthogonal=True`` the distractor keys are orthogonal to k₀, so the crosstalk vanishes.
    Every head sees the same draws (drawn on the CPU ``generator``, then moved).

    Args:
        gamma: float or tensor (...,) of decays in (0, 1], e.g. ``retnet_decays(H)``.
        max_lag: the oldest lag measured; lags are ``0..max_lag``.
    Returns:
        r: (..., n_trials, max_lag + 1), the target's read-out strength per trial and lag.
    """
    g = cast(torch.Tensor, gamma)                                  # made a tensor by the check
    decay = g.to(device=device, dtype=dtype)[..., None].expand(*g.shape, n_trials)
    return _first_pair_recall(
        lambda q, k, v: _linear_attention(q, k, v, decay=decay, mode="chunk", chunk_size=chunk_size),
        g.shape, n_trials, max_lag + 1, d_k, d_v, orthogonal=orthogonal, generator=generator, device=device,
        dtype=dtype)


def _first_pair_recall(attend: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor],
                       lead: tuple[int, ...], n_trials: int, T: int, d_k: int, d_v: int, *, orthogonal: bool,
                       generator: torch.Generator | None, device: torch.device | str | None,
                       dtype: torch.dtype) -> torch.Tensor:
    """Write T random unit pairs per trial, read with the first key k₀ at every step, project on v₀.

    ``attend(q, k, v)`` runs the memory: q (*lead, n_trials, T, d_k) is k₀ repeated (``lead`` = the
    heads), k (n_trials, T, d_k), v (n_trials, T, d_v). Returns ``v₀ · o_t``: (*lead, n_trials, T).
    Drawn on the CPU ``generator`` in float64, then moved; ``orthogonal`` makes the distractor keys ⊥ k₀.
    """
    k = _random_keys(n_trials, T, d=d_k, kind="sphere", generator=generator, dtype=torch.float64)
    v = _random_keys(n_trials, T, d=d_v, kind="sphere", generator=generator, dtype=torch.float64)
    if orthogonal:  # remove each distractor key's component along k₀, then renormalise
        k0 = k[:, :1]
        rest = k[:, 1:] - (k[:, 1:] * k0).sum(-1, keepdim=True) * k0
        k = torch.cat([k0, rest / rest.norm(dim=-1, keepdim=True)], dim=1)
    k, v = k.to(device=device, dtype=dtype), v.to(device=device, dtype=dtype)
    q = k[:, :1].expand(*lead, n_trials, T, d_k)                    # heads as leading dims
    o = attend(q, k, v)                                              # (*lead, n_trials, T, d_v)
    return (o * v[:, :1]).sum(-1)


def _check_curves(strength: torch.Tensor, level: float) -> dict[str, float]:
    """Curves (..., L >= 2) and a level they reach (returned as a float)."""
    check_tensor("strength", strength, min_rank=1)
    if strength.shape[-1] < 2:
        raise ValueError(f"strength: expected a curve over at least 2 lags (..., L >= 2) to interpolate, got shape "
                         f"{tuple(strength.shape)}")
    level = check_real("level", level)
    top = float(strength.max())
    if top < level:
        raise ValueError(f"level: expected a level the curves reach (at most their maximum, {top:.4g}), got "
                         f"{level:g}: a curve that never rises to it cannot fall to it")
    return {"level": level}


@checked_by(_check_curves)
def measured_half_life(strength: torch.Tensor, *, level: float = 0.5) -> torch.Tensor:
    """The first lag at which a recall curve falls to ``level`` (linear interpolation between lags).

    strength: (..., L) a curve over lags 0..L−1 (e.g. the mean of ``recall_vs_lag`` over trials).
    Returns (...) lags as floats; ``inf`` where the curve never falls that low, 0 where it starts below it. A
    ``level`` above every curve's maximum raises (ValueError): no curve reaches it, so none can fall to it.
    """
    below = strength < level
    found = below.any(-1)
    i = below.to(torch.int64).argmax(-1).clamp(min=1)        # first index below the level
    hi = strength.gather(-1, i[..., None])[..., 0]
    lo = strength.gather(-1, (i - 1)[..., None])[..., 0]
    frac = (lo - level) / (lo - hi).clamp(min=torch.finfo(strength.dtype).tiny)
    lag = (i - 1).to(strength.dtype) + frac
    lag = torch.where(below[..., 0], torch.zeros_like(lag), lag)
    return torch.where(found, lag, torch.full_like(lag, math.inf))


def _check_resampling(curves: torch.Tensor, resamples: int) -> dict[str, int]:
    """Per-trial curves (..., trials >= 2, L) and a number of resamples >= 2 (returned)."""
    check_tensor("curves", curves, min_rank=2)
    if curves.shape[-2] < 2:
        raise ValueError(f"curves: expected at least 2 trials (dim -2) to resample, got shape {tuple(curves.shape)}")
    return {"resamples": check_int("resamples", resamples, low=2)}


@checked_by(_check_resampling)
def half_life_se(curves: torch.Tensor, *, level: float = 0.5, resamples: int = 400,
                 generator: torch.Generator | None = None) -> torch.Tensor:
    """Bootstrap standard error of :func:`measured_half_life` of the mean curve, from the spread of the trials.

    curves: (..., trials, L) per-trial recall curves (e.g. :func:`recall_vs_lag`). Each resample draws the
    trials with replacement (the same draws for every leading index), averages them, and finds where that
    mean crosses ``level``; the standard deviation over ``resamples`` is the sampling error of the measured
    half-life. A band of a few of these standard errors around ``ln 2/(−ln γ)`` fails by noise only rarely
    (about 6 in 100,000 at four s.e., for a normal error). Returns (...) float64.
    """
    trials = curves.shape[-2]
    picks = torch.randint(0, trials, (resamples, trials), generator=generator).to(curves.device)
    lags = torch.stack([measured_half_life(curves.index_select(-2, p).mean(-2), level=level) for p in picks], -1)
    return lags.double().std(-1)


def _check_age_groups(recall: torch.Tensor, baseline: torch.Tensor, edges: Sequence[int]) -> dict[str, list[int]]:
    """Paired recall curves (trials >= 2, n_pairs) and increasing ages up to n_pairs (returned as ints)."""
    check_tensor("recall", recall, rank=2)
    check_tensor("baseline", baseline, rank=2)
    if recall.shape != baseline.shape or recall.shape[0] < 2:
        raise ValueError(f"baseline: expected the shape of recall {tuple(recall.shape)} with at least 2 trials, "
                         f"got {tuple(baseline.shape)}")
    ages = [check_int(f"edges[{i}]", e, low=0) for i, e in enumerate(edges)]
    if len(ages) < 2 or any(b <= a for a, b in itertools.pairwise(ages)) or ages[-1] > recall.shape[-1]:
        raise ValueError(f"edges: expected at least two increasing ages up to n_pairs = {recall.shape[-1]}, "
                         f"got {ages}")
    return {"edges": ages}


@checked_by(_check_age_groups)
def age_group_margin(recall: torch.Tensor, baseline: torch.Tensor, edges: Sequence[int]) -> torch.Tensor:
    """How far one memory recalls above another in each age group, in standard errors of the paired difference.

    recall, baseline: (trials, n_pairs) cosines by age from :func:`recall_by_age`, the same trials for both.
    edges: ``a_0 < a_1 < … < a_G``, the age groups ``[a_g, a_{g+1})``. For each group the per-trial mean over
    its ages is differenced, ``d = recall − baseline``, and the margin is ``mean(d) / (sd(d)/√trials)``
    (positive: ``recall`` is higher). Returns (G,) float64; its minimum says whether ``recall`` is above
    ``baseline`` in *every* group.
    """
    diff = torch.stack([(recall[:, a:b] - baseline[:, a:b]).double().mean(-1) for a, b in itertools.pairwise(edges)])
    return diff.mean(-1) / (diff.std(-1) / math.sqrt(diff.shape[-1]))


def _check_gated_recall(g: torch.Tensor, d_k: int, d_v: int, n_trials: int, generator: torch.Generator | None,
                        device: torch.device | str | None, dtype: torch.dtype) -> dict[str, object]:
    """The arguments of :func:`gated_recall`: the gates g (..., T), the sizes, and the device and dtype as
    checked; the draws checked to fit in memory."""
    check_tensor("g", g, min_rank=1)
    device, dtype = _check_trials(d_k, d_v, n_trials, device, dtype)
    _check_pair_draws(n_trials, g.shape[-1], d_k, d_v, generator)
    return {"device": device, "dtype": dtype}


@checked_by(_check_gated_recall)
def gated_recall(g: torch.Tensor, *, d_k: int = 64, d_v: int = 64, n_trials: int = 64,
                 generator: torch.Generator | None = None, device: torch.device | str | None = None,
                 dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Recall of the first association of a sequence under a gate schedule, at every later step.

    Writes a target pair (k₀, v₀) at t = 0 then random distractor pairs, through
    ``scalar_gated_linear_attention`` with gates ``g`` (..., T), and reads with k₀ at every step.
    Returns r: (..., n_trials, T), the read-out projected on v₀ (theory: ``Π_{r=1..t} g_r``).
    """
    gates = g.to(device=device, dtype=dtype)[..., None, :]
    return _first_pair_recall(lambda q, k, v: scalar_gated_linear_attention(q, k, v, gates), (), n_trials, g.shape[-1],
                              d_k, d_v, orthogonal=False, generator=generator, device=device, dtype=dtype)


_AGE_CHUNK = 64
"""The chunk size :func:`recall_by_age` runs the chunkwise forms with (their default)."""


def _check_ages(n_pairs: int, d_k: int, d_v: int, gammas: Sequence[float], betas: Sequence[float], n_trials: int,
                generator: torch.Generator | None, device: torch.device | str | None,
                dtype: torch.dtype) -> dict[str, object]:
    """The arguments of :func:`recall_by_age`: γs and βs as lists of floats, the device and the dtype as checked;
    the draws and the chunks of the forms (:data:`_AGE_CHUNK` steps, the delta form's in float32 for a
    low-precision dtype) checked to fit in memory."""
    check_int("n_pairs", n_pairs, low=1)
    check_int("d_k", d_k, low=1)
    check_int("d_v", d_v, low=1)
    check_int("n_trials", n_trials, low=1)
    for name, seq in (("gammas", gammas), ("betas", betas)):
        if isinstance(seq, (str, bytes)) or not isinstance(seq, Iterable):
            raise TypeError(f"{name}: expected a sequence of numbers such as (0.9,), got {type(seq).__name__}")
    checked_gammas = [float(_check_gamma(g, "gammas", high_open=True)) for g in gammas]
    checked_betas = [check_real("betas", b, low=0.0, low_open=True, high=BETA_MAX) for b in betas]
    dtype = check_float_dtype("dtype", dtype, allow_none=False)
    device = check_device("device", device)
    _check_pair_draws(n_trials, n_pairs, d_k, d_v, generator)
    _check_chunks((n_trials,), n_pairs, _AGE_CHUNK, device, dtype)
    if checked_betas:
        _check_chunks((n_trials,), n_pairs, _AGE_CHUNK, device, torch.float32 if dtype in LOW_PRECISION else dtype)
    return {"gammas": checked_gammas, "betas": checked_betas, "device": device, "dtype": dtype}


@checked_by(_check_ages)
def recall_by_age(n_pairs: int, *, d_k: int = 64, d_v: int = 64, gammas: Sequence[float] = (0.95,),
                  betas: Sequence[float] = (1.0,), n_trials: int = 128, generator: torch.Generator | None = None,
                  device: torch.device | str | None = None,
                  dtype: torch.dtype = torch.float32) -> dict[str, torch.Tensor]:
    """Recall of every pair against its age, for a Hebbian, decayed Hebbian and delta memory under the same load.

    Each trial writes ``n_pairs`` random unit pairs (k_i, v_i) into every memory, then reads every key once:
    ``cos(S k_i, v_i)``. Memories: ``"hebbian"`` (S = Σ v kᵀ, γ = 1), ``"decay γ"`` for each γ in ``gammas``
    (S = Σ_a γ^a v kᵀ, a the pair's age) and ``"delta β"`` for each β in ``betas`` (the delta rule, which
    forgets an old pair only where later keys overlap it). Drawn on the CPU ``generator`` in float64, then moved.

    Returns {name: (n_trials, n_pairs)} with column a the pair of age a (a = 0: written last).
    """
    k = _random_keys(n_trials, n_pairs, d=d_k, kind="sphere", generator=generator, dtype=torch.float64)
    v = _random_keys(n_trials, n_pairs, d=d_v, kind="sphere", generator=generator, dtype=torch.float64)
    k, v = k.to(device=device, dtype=dtype), v.to(device=device, dtype=dtype)
    states = {"hebbian": _linear_attention(k, k, v, chunk_size=_AGE_CHUNK, return_state=True)[1]}
    for gm in gammas:
        states[f"decay {gm:g}"] = _linear_attention(k, k, v, decay=gm, chunk_size=_AGE_CHUNK, return_state=True)[1]
    for b in betas:                                                 # β checked in (0, 2], unit keys: a contraction
        beta = torch.full((n_pairs,), b, dtype=dtype, device=k.device)  # one β per write, as the form takes it
        states[f"delta {b:g}"] = _delta_rule_attention(k, k, v, beta, chunk_size=_AGE_CHUNK,
                                                       initial_state=k.new_zeros(n_trials, d_v, d_k),
                                                       return_state=True)[1]
    return {name: torch.nn.functional.cosine_similarity(k @ S.mT, v, dim=-1, eps=1e-12).flip(-1)
            for name, S in states.items()}


__all__ = ["age_group_margin", "effective_window", "gated_recall", "half_life", "half_life_se", "measured_half_life",
           "recall_by_age", "recall_vs_lag", "retention", "retnet_decays"]
