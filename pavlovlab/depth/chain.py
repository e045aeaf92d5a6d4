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

This module simulates such stacks (:func:`chain_error`), one hop looked at closely (:func:`one_hop`), and a
stack WITHOUT clean-up (:func:`raw_chain`: raw read-outs are the next layer's queries, as in a linear
Transformer). Their closed-form errors and bounds are in :mod:`pavlovlab.depth.theory`; shapes of a
stack compared at an equal budget in :mod:`pavlovlab.depth.contest`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import torch

from .._checks import check_choice, check_device, check_float_dtype, check_int, checked_by, unchecked
from ..sampling import _check_draw, random_keys

_random_keys = unchecked(random_keys)

COMBINE = ("average", "vote")
"""How a layer's H heads are combined before the clean-up: their read-outs averaged, or each head decodes and
the heads vote."""


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


def _check_positive(name: str, value: object) -> int:
    """A positive integer; NumPy integers (e.g. from ``np.arange``) are accepted."""
    return check_int(name, int(value) if isinstance(value, np.integer) else value, low=1)


def _check_hop(n: int, d_k: int, d_v: int | None, trials: int, device: torch.device | str | None,
               dtype: torch.dtype) -> dict[str, Any]:
    """The sizes of a hop (n >= 2 associations, d_k, d_v, trials), its device and dtype, as checked values."""
    n, d_k, trials = _check_positive("n", n), _check_positive("d_k", d_k), _check_positive("trials", trials)
    d_v = None if d_v is None else _check_positive("d_v", d_v)
    if n < 2:
        raise ValueError(f"n: expected at least 2 stored associations (so there is something to confuse), got {n}")
    dtype = check_float_dtype("dtype", dtype, allow_none=False)
    return {"n": n, "d_k": d_k, "d_v": d_v, "trials": trials, "dtype": dtype, "device": check_device("device", device)}


def _check_draws(heads: tuple[int, ...], generator: torch.Generator | None, hop: Mapping[str, Any]) -> None:
    """The generator, and the keys and values that a hop of checked sizes (:func:`_check_hop`) draws for ``heads``,
    checked as :func:`pavlovlab.sampling.random_keys` checks them (they fit in memory), keys first."""
    for d in (hop["d_k"], hop["d_k"] if hop["d_v"] is None else hop["d_v"]):
        _check_draw((hop["trials"], *heads, hop["n"]), d, "sphere", generator, hop["device"], hop["dtype"])


def _check_chain(L: int, H: int, n: int, d_k: int, d_v: int | None, combine: str, trials: int,
                 generator: torch.Generator | None, device: torch.device | str | None,
                 dtype: torch.dtype) -> dict[str, Any]:
    """The arguments of :func:`chain_error`, and the draws of a layer (:func:`_check_draws`)."""
    checked = {"L": _check_positive("L", L), "H": _check_positive("H", H),
               **_check_hop(n, d_k, d_v, trials, device, dtype)}
    check_choice("combine", combine, COMBINE)
    _check_draws((checked["H"],), generator, checked)
    return checked


@checked_by(_check_chain)
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
    T, d_v = trials, d_k if d_v is None else d_v
    current = torch.arange(n).expand(T, n).to(device)                   # true = decoded item of each chain
    truth = current.clone()
    wrong_by_depth, head_wrong, hop_wrong = [], 0.0, 0.0
    for _ in range(L):  # the hops are sequential; everything else is batched
        perm = torch.rand(T, n, generator=generator).argsort(dim=-1).to(device)          # π: (T, n)
        K = _random_keys(T, H, n, d=d_k, kind="sphere", generator=generator, device=device, dtype=dtype)
        V = _random_keys(T, H, n, d=d_v, kind="sphere", generator=generator, device=device, dtype=dtype)
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


def _draw_hop(heads: tuple[int, ...], n: int, d_k: int, d_v: int, T: int, generator: torch.Generator | None,
              device: torch.device | str | None, dtype: torch.dtype
              ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """One hop's draws: ``T`` permutations π of the n items (T, n), unit keys K (T, *heads, n, d_k) and values
    V (T, *heads, n, d_v), and the right value of each chain, ``V[π(x)]`` (T, *heads, n, d_v)."""
    perm = torch.rand(T, n, generator=generator).argsort(dim=-1).to(device)              # π: (T, n)
    K = _random_keys(T, *heads, n, d=d_k, kind="sphere", generator=generator, device=device, dtype=dtype)
    V = _random_keys(T, *heads, n, d=d_v, kind="sphere", generator=generator, device=device, dtype=dtype)
    index = perm.view(T, *(1 for _ in heads), n, 1).expand(T, *heads, n, d_v)
    return perm, K, V, V.gather(-2, index)


def _check_one_hop(n: int, d_k: int, d_v: int | None, trials: int, generator: torch.Generator | None,
                   device: torch.device | str | None, dtype: torch.dtype) -> dict[str, Any]:
    """The arguments of :func:`one_hop`, and its draws (:func:`_check_draws`)."""
    checked = _check_hop(n, d_k, d_v, trials, device, dtype)
    _check_draws((), generator, checked)
    return checked


@checked_by(_check_one_hop)
def one_hop(n: int, d_k: int, *, d_v: int | None = None, trials: int = 200, generator: torch.Generator | None = None,
            device: torch.device | str | None = None, dtype: torch.dtype = torch.float32) -> HopSample:
    """One hop of one head, looked at closely: the read-out's crosstalk norm and the codebook's closest pair.

    ``trials`` memories ``S = Σ_i v_π(i) k_iᵀ`` (random unit codes, as in :func:`chain_error`), each read
    with every one of its n keys: ``r = S k_x = v_j + c`` (j = π(x)), cleaned up to the nearest stored value
    (``argmax_m v_m·r``). Vectorised over trials and chains.

    Returns:
        :class:`HopSample` (failed, crosstalk_norm, t_max), each (trials, n).
    """
    d_v = d_k if d_v is None else d_v
    perm, K, V, right = _draw_hop((), n, d_k, d_v, trials, generator, device, dtype)       # right: v_π(x), chain x
    r = K @ (right.mT @ K).mT                                                              # S k_x: (T, chain, d_v)
    failed = (r @ V.mT).argmax(-1) != perm
    cosines = (right @ V.mT).scatter(-1, perm[..., None], -2.0)                            # the right value itself out
    return HopSample(failed.cpu(), (r - right).norm(dim=-1).cpu(), cosines.amax(-1).cpu())


class HeadsHopSample(NamedTuple):
    """What :func:`heads_hop` measures for every chain of one hop through H independent heads.

    failed_average: (trials, n) the averaged heads' clean-up picked a wrong item.
    failed_each: (trials, H, n) head h's own clean-up picked a wrong item (so ``failed_each.all(1)`` is the
        event "every head fails", the failure of a decoder that needs one right head).
    crosstalk_power: (trials, n) ``Z = Σ_h ‖c^h‖²``, the summed crosstalk power of the H heads.
    t_max: (trials, H, n) per head, the largest cosine ``v_j^h·v_m^h`` of the right value with a competitor.
    t_mean_max: (trials, n) the largest head-averaged cosine ``max_m (1/H) Σ_h v_j^h·v_m^h``.
    """

    failed_average: torch.Tensor
    failed_each: torch.Tensor
    crosstalk_power: torch.Tensor
    t_max: torch.Tensor
    t_mean_max: torch.Tensor


def _check_heads_hop(n: int, d_k: int, H: int, d_v: int | None, trials: int, generator: torch.Generator | None,
                     device: torch.device | str | None, dtype: torch.dtype) -> dict[str, Any]:
    """The arguments of :func:`heads_hop`, and its draws (:func:`_check_draws`)."""
    checked = {"H": _check_positive("H", H), **_check_hop(n, d_k, d_v, trials, device, dtype)}
    _check_draws((checked["H"],), generator, checked)
    return checked


@checked_by(_check_heads_hop)
def heads_hop(n: int, d_k: int, H: int, *, d_v: int | None = None, trials: int = 200,
              generator: torch.Generator | None = None, device: torch.device | str | None = None,
              dtype: torch.dtype = torch.float32) -> HeadsHopSample:
    """One hop through H independent heads, looked at closely: both decoders, the crosstalk power, the codebooks.

    Every head stores the same n associations ``x → π(x)`` with its own random unit codes
    (``S_h = Σ_i v^h_π(i) k^hᵢᵀ``, as in :func:`chain_error`) and is read with every key:
    ``r^h = S_h k^h_x = v^h_j + c^h`` (j = π(x)). Two decoders are scored: the **average** of the heads'
    clean-up scores ``(1/H) Σ_h v^h_m·r^h`` (argmax, as ``chain_error``), and each head's own clean-up
    (``failed_each``). Vectorised over trials, heads and chains.

    Returns:
        :class:`HeadsHopSample`; per-chain tensors (trials, n), per-head ones (trials, H, n).
    """
    T, d_v = trials, d_k if d_v is None else d_v
    perm, K, V, right = _draw_hop((H,), n, d_k, d_v, T, generator, device, dtype)  # right: v^h_π(x), (T, H, chain, d_v)
    r = K @ (right.mT @ K).mT                                                              # S_h k^h_x
    scores = r @ V.mT                                                                      # (T, H, chain, m)
    cosines = right @ V.mT                                                                 # v^h_j · v^h_m
    own = perm[:, None, :, None].expand(T, H, n, 1)
    t_max = cosines.scatter(-1, own, -2.0).amax(-1)
    t_mean_max = cosines.mean(1).scatter(-1, perm[..., None], -2.0).amax(-1)
    return HeadsHopSample((scores.mean(1).argmax(-1) != perm).cpu(), (scores.argmax(-1) != perm[:, None]).cpu(),
                          ((r - right) ** 2).sum((-1, 1)).cpu(), t_max.cpu(), t_mean_max.cpu())


_heads_hop = unchecked(heads_hop)


def _check_bounds(n: int, d_k: int, heads: Sequence[int], d_v: int | None, trials: int,
                  generator: torch.Generator | None, device: torch.device | str | None,
                  dtype: torch.dtype) -> dict[str, Any]:
    """The arguments of :func:`bounds_against_heads`, in the order its samples meet them: the first head count,
    the hop, then each count with the draws of its sample (:func:`_check_draws`)."""
    if isinstance(heads, (str, bytes)) or not isinstance(heads, Sequence) or not heads:
        raise TypeError(f"heads: expected a non-empty sequence of head counts, got {type(heads).__name__}")
    counts: list[int] = []
    checked: dict[str, Any] = {}
    for H in heads:
        counts.append(_check_positive("heads", H))
        checked = checked or _check_hop(n, d_k, d_v, trials, device, dtype)
        _check_draws((counts[-1],), generator, checked)
    return {"heads": counts, **checked}


@checked_by(_check_bounds)
def bounds_against_heads(n: int, d_k: int, heads: Sequence[int], *, d_v: int | None = None, trials: int = 2000,
                         generator: torch.Generator | None = None, device: torch.device | str | None = None,
                         dtype: torch.dtype = torch.float64) -> list[dict[str, float]]:
    """The bounds of the paper's form with their constants, against the measured error, for each H in ``heads``.

    One :func:`heads_hop` sample per H (``trials`` memories × n chains) gives the measured errors of both
    decoders and ``M_H = mean(Z^H) / mean(Z)^H`` (Z: :attr:`HeadsHopSample.crosstalk_power`); the bounds are
    averaged over the sampled codebooks:

    - ``averaged``: :func:`pavlovlab.depth.theory.averaged_heads_bound` with the measured ``M_H``;
    - ``all_fail``: :func:`pavlovlab.depth.theory.all_heads_fail_bound` (one right head suffices);
    - ``second``: :func:`pavlovlab.depth.theory.hop_failure_bound` at the head-averaged ``t̄_max``
      (Markov on Z itself: no fall with H).

    Returns one row per H: ``{"H", "M", "chains", "averaged", "all_fail", "second", "err_avg", "err_all"}``.
    """
    from .theory import _hop_failure_bound, all_heads_fail_bound, averaged_heads_bound

    rows = []
    for H in heads:
        s = _heads_hop(n, d_k, H, d_v=d_v, trials=trials, generator=generator, device=device, dtype=dtype)
        Z = s.crosstalk_power.double()
        M = ((Z / Z.mean()) ** H).mean().item()  # = mean(Z^H) / mean(Z)^H, without Z^H's overflow (Z ≈ 150 at H = 150)
        # the bounds' doors check what was measured here: the cosines' range, M_H finite
        rows.append({"H": H, "M": M, "chains": s.failed_average.numel(),
                     "averaged": averaged_heads_bound(n, d_k, s.t_mean_max, H, M).mean().item(),
                     "all_fail": all_heads_fail_bound(n, d_k, s.t_max.movedim(1, -1)).mean().item(),
                     "second": _hop_failure_bound(n, d_k, t_max=s.t_mean_max).mean().item(),  # t̄_max checked above
                     "err_avg": s.failed_average.double().mean().item(),
                     "err_all": s.failed_each.all(1).double().mean().item()})
    return rows


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


def _check_raw_chain(L: int, n: int, d: int, trials: int, generator: torch.Generator | None,
                     device: torch.device | str | None, dtype: torch.dtype) -> dict[str, Any]:
    """The arguments of :func:`raw_chain` (n >= 2) as checked values, and the codes of a level checked as
    :func:`pavlovlab.sampling.random_keys` checks them (they fit in memory)."""
    L, n, d, trials = (_check_positive(name, value)
                       for name, value in (("L", L), ("n", n), ("d", d), ("trials", trials)))
    if n < 2:
        raise ValueError(f"n: expected at least 2 stored associations, got {n}")
    dtype = check_float_dtype("dtype", dtype, allow_none=False)
    device = check_device("device", device)
    _check_draw((trials, n), d, "sphere", generator, device, dtype)
    return {"L": L, "n": n, "d": d, "trials": trials, "dtype": dtype, "device": device}


@checked_by(_check_raw_chain)
def raw_chain(L: int, n: int, d: int, *, trials: int = 200, generator: torch.Generator | None = None,
              device: torch.device | str | None = None, dtype: torch.dtype = torch.float32) -> RawChainResult:
    """A stack of L Hebbian layers whose raw read-outs (no clean-up) are the next layer's queries.

    Level ℓ = 0..L has its own random unit codes ``C_ℓ`` (n, d) for the n items; layer ℓ stores
    ``S_ℓ = Σ_i C_{ℓ+1}[π_ℓ(i)] C_ℓ[i]ᵀ`` (d × d), so what layer ℓ writes as a value is what layer ℓ+1
    matches as a key, as in a real model whose residual stream carries the read-out upward. A chain
    starts at ``r_0 = C_0[x]`` and passes ``r_ℓ = S_ℓ r_{ℓ−1}``: the crosstalk of each layer is not
    removed, it is read by the next layer as a (wrong) mixture of stored items. Vectorised over
    ``trials`` stacks × n chains; the loop is over the L layers.
    Theory: :func:`pavlovlab.depth.theory.raw_noise_theory`.

    Returns:
        :class:`RawChainResult` (error_by_depth (L,), noise_by_depth (L,), chains).
    """
    T = trials
    codes = _random_keys(T, n, d=d, kind="sphere", generator=generator, device=device, dtype=dtype)   # C_0
    r, truth = codes, torch.arange(n).expand(T, n).to(device)                   # (T, chain, d), (T, chain)
    errors, noise = [], []
    for _ in range(L):  # the layers are sequential; trials and chains are batched
        nxt = _random_keys(T, n, d=d, kind="sphere", generator=generator, device=device, dtype=dtype)
        perm = torch.rand(T, n, generator=generator).argsort(dim=-1).to(device)
        S = nxt.gather(1, perm[..., None].expand(T, n, d)).mT @ codes             # Σ_i C'[π(i)] C[i]ᵀ: (T, d, d)
        r, truth, codes = r @ S.mT, perm.gather(1, truth), nxt
        right = codes.gather(1, truth[..., None].expand(T, n, d))                # the right code of each chain
        signal = (r * right).sum(-1)
        noise.append(((r * r).sum(-1) - signal ** 2).mean() / (signal ** 2).mean())
        errors.append(((r @ codes.mT).argmax(-1) != truth).double().mean())
    return RawChainResult(torch.stack(errors).cpu(), torch.stack(noise).double().cpu(), T * n)


__all__ = [
    "COMBINE",
    "HeadsHopSample",
    "HopSample",
    "RawChainResult",
    "StackResult",
    "bounds_against_heads",
    "chain_error",
    "heads_hop",
    "one_hop",
    "raw_chain",
]
