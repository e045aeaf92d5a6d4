"""Unlearning one association: "the dog should stop salivating to one bell, but not to the others".

A Hebbian memory ``S = Σ_i r_i v_i k_iᵀ`` holds n bell→food associations (bell i heard r_i times).
To remove bell ``k*``'s association there are two ideas:

- **subtract its Hebbian trace**, ``S ← S − v* k*ᵀ``: this needs the memory's history (how often the
  bell was paired, with which food) and still leaves ``S k* = Σ_{i≠*} r_i v_i (k_i·k*)``: what the
  *other*, similar bells taught generalises to k*;
- **a targeted delta update** (Rescorla–Wagner / DeltaNet, one step): measure what the memory now
  predicts for k* and write only the error towards the wanted value,
  ``S ← S + β (v_new − S k*) k*ᵀ`` with ``β = 1/‖k*‖²``, so that afterwards ``S k* = v_new`` exactly.

Any change to S also moves the read-out of other keys that overlap k*: the **collateral damage**,
measured on the other associations as the change of their conditioned response ``v_j·S k_j``
(and of their recall cosine ``cos(S k_j, v_j)``).
With ``protect=`` keys, the delta update is restricted to the directions orthogonal to them, so their
read-outs do not move at all.
"""

from __future__ import annotations

from typing import NamedTuple, cast

import torch

from .._checks import (
    all_finite,
    check_device,
    check_dim,
    check_float_dtype,
    check_int,
    check_real,
    check_same_kind,
    check_shape,
    check_tensor,
    checked_by,
    unchecked,
)
from ..memory.hebbian import _outer_product_memory, _recall_cosine, check_pairs
from ..sampling import _check_draw, random_keys

METHODS = ("hebbian", "delta", "delta_protected")
"""The edits compared: subtract the exact Hebbian trace, a delta-rule step to zero, and the delta step that
leaves a protected set of cues unchanged."""


_random_keys = unchecked(random_keys)
"""The draw of :func:`pavlovlab.sampling.random_keys`, on sizes this module's doors checked (with the draws)."""


def _check_association_draws(n: int, d_k: int, d_v: int, batch_shape: tuple[int, ...],
                             generator: torch.Generator | None) -> None:
    """The draws of :func:`_random_associations`: n unit keys and values per memory, in float64 on the CPU
    ``generator``, checked to fit in memory."""
    _check_draw((*batch_shape, n), d_k, "sphere", generator, None, torch.float64)
    _check_draw((*batch_shape, n), d_v, "sphere", generator, None, torch.float64)


def _check_associations(n: int, d_k: int, d_v: int, overlap: float, batch_shape: tuple[int, ...],
                        device: torch.device | str | None,
                        dtype: torch.dtype) -> dict[str, object]:
    """The arguments of :func:`random_associations`; overlap, batch_shape, device and dtype as checked."""
    check_int("n", n, low=1)
    check_int("d_k", d_k, low=2)
    check_int("d_v", d_v, low=1)
    overlap = check_real("overlap", overlap, low=-1.0, high=1.0)
    dtype = check_float_dtype("dtype", dtype, allow_none=False)
    batch_shape = check_shape("batch_shape", batch_shape)
    checked_device = check_device("device", device)
    if overlap != 0.0 and n < 2:
        raise ValueError(f"n: expected at least 2 associations when overlap is set, got {n}")
    return {"overlap": overlap, "batch_shape": batch_shape, "device": checked_device, "dtype": dtype}


def _check_drawn_associations(n: int, d_k: int, d_v: int, overlap: float, batch_shape: tuple[int, ...],
                              generator: torch.Generator | None, device: torch.device | str | None,
                              dtype: torch.dtype) -> dict[str, object]:
    """The arguments of :func:`random_associations` (:func:`_check_associations`) and its draws."""
    checked = _check_associations(n, d_k, d_v, overlap, batch_shape, device, dtype)
    _check_association_draws(n, d_k, d_v, cast(tuple[int, ...], checked["batch_shape"]), generator)
    return checked


@checked_by(_check_drawn_associations)
def random_associations(n: int, d_k: int, d_v: int, *, batch_shape: tuple[int, ...] = (), overlap: float = 0.0,
                        generator: torch.Generator | None = None, device: torch.device | str | None = None,
                        dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, torch.Tensor]:
    """n random unit keys (bells) and unit values (foods); keys 0 and 1 share cosine ``overlap``.

    Returns keys (*batch_shape, n, d_k) and values (*batch_shape, n, d_v), drawn on the CPU generator.
    ``overlap = 0`` leaves key 1 random (cosine ≈ ±1/√d_k with key 0, like every other pair).
    """
    return _random_associations(n, d_k, d_v, batch_shape, overlap, generator, cast(torch.device | None, device), dtype)


def _random_associations(n: int, d_k: int, d_v: int, batch_shape: tuple[int, ...], overlap: float,
                         generator: torch.Generator | None, device: torch.device | None,
                         dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`random_associations` on checked arguments."""
    keys = _random_keys(*batch_shape, n, d=d_k, kind="sphere", generator=generator, dtype=torch.float64)
    values = _random_keys(*batch_shape, n, d=d_v, kind="sphere", generator=generator, dtype=torch.float64)
    if overlap != 0.0:
        k0, k1 = keys[..., 0, :], keys[..., 1, :]
        u = k1 - (k1 * k0).sum(-1, keepdim=True) * k0
        u = u / u.norm(dim=-1, keepdim=True)
        keys = keys.clone()
        keys[..., 1, :] = overlap * k0 + (1.0 - overlap ** 2) ** 0.5 * u
    return keys.to(device=device, dtype=dtype), values.to(device=device, dtype=dtype)


def _check_read(S: torch.Tensor, keys: torch.Tensor, values: torch.Tensor) -> None:
    """Check a memory S (..., d_v, d_k) and the pairs keys (..., n, d_k), values (..., n, d_v) read from it."""
    check_pairs(keys, values)
    check_tensor("S", S, min_rank=2)
    check_same_kind(S=S, keys=keys, values=values)
    check_dim("keys", keys.shape[-1], S.shape[-1], "key dimension d_k (last dim of S)")
    check_dim("values", values.shape[-1], S.shape[-2], "value dimension d_v (dim -2 of S)")


def _check_memory_and_key(S: torch.Tensor, k: torch.Tensor) -> None:
    """Check a memory S (..., d_v, d_k) and a non-zero key k (..., d_k) to unlearn."""
    check_tensor("S", S, min_rank=2)
    check_tensor("k", k, min_rank=1)
    check_same_kind(S=S, k=k)
    check_dim("k", k.shape[-1], S.shape[-1], "key dimension d_k (last dim of S)")
    if bool((k.norm(dim=-1) == 0).any()):
        raise ValueError("k: expected a non-zero key (the bell to unlearn), got a zero vector")


def _check_hebbian_edit(S: torch.Tensor, k: torch.Tensor, v: torch.Tensor, times: float) -> dict[str, float]:
    """The arguments of :func:`unlearn_hebbian`; ``times`` as a float."""
    _check_memory_and_key(S, k)
    check_tensor("v", v, min_rank=1)
    check_same_kind(S=S, v=v)
    check_dim("v", v.shape[-1], S.shape[-2], "value dimension d_v (dim -2 of S)")
    return {"times": check_real("times", times, low=0.0)}


@checked_by(_check_hebbian_edit, nonfinite="very large S, k, v or times overflow the dtype")
def unlearn_hebbian(S: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, times: float = 1.0) -> torch.Tensor:
    """Subtract the association's Hebbian trace: ``S − times · v kᵀ``.

    S: (..., d_v, d_k), k: (..., d_k), v: (..., d_v). Exact only if the pair was written exactly
    ``times`` times with this very value, and never removes what overlapping keys taught about k.
    """
    return _unlearn_hebbian(S, k, v, times)


def _unlearn_hebbian(S: torch.Tensor, k: torch.Tensor, v: torch.Tensor, times: float = 1.0) -> torch.Tensor:
    """``S − times · v kᵀ`` (:func:`unlearn_hebbian` on checked arguments)."""
    return S - times * v[..., :, None] * k[..., None, :]


def _check_protect(protect: object, k: torch.Tensor) -> None:
    """Protected keys (..., m, d_k): a tensor like k, fewer than d_k, linearly independent (else the projection
    that keeps them untouched does not exist); names two rows that are the same key."""
    protect = check_tensor("protect", protect, min_rank=2)
    check_same_kind(k=k, protect=protect)
    check_dim("protect", protect.shape[-1], k.shape[-1], "key dimension d_k (last dim of k)")
    m = protect.shape[-2]
    if m >= k.shape[-1]:
        raise ValueError(f"protect: expected fewer protected keys than d_k = {k.shape[-1]} (else no direction "
                         f"is left to edit), got {m}")
    if m == 0:
        return  # nothing to protect
    P = torch.nn.functional.normalize(protect.detach().double(), dim=-1)
    cos = (P @ P.mT).abs().reshape(-1, m, m).amax(0) - 2 * torch.eye(m, dtype=torch.float64)   # (m, m), diag out
    if float(cos.max()) > 1 - 1e-9:
        i, j = sorted(divmod(int(cos.argmax()), m))
        raise ValueError(f"protect: rows {i} and {j} are the same key (up to sign and scale): protect each key once")
    rank = torch.linalg.matrix_rank(protect.detach().double())
    if bool((rank < m).any()):
        raise ValueError(f"protect: expected linearly independent keys, got {m} keys spanning only "
                         f"{int(rank.min())} dimensions")


def _check_delta_edit(S: torch.Tensor, k: torch.Tensor, v_new: torch.Tensor | None, beta: float | None,
                      protect: torch.Tensor | None) -> dict[str, object]:
    """The arguments of :func:`unlearn_delta`, with the step's bound ``β‖k‖² <= 2`` (β <= 2 with ``protect``) and
    a key whose squared norm fits in its dtype; β as a float (None: the exact step), v_new zeros when None."""
    _check_memory_and_key(S, k)
    if v_new is not None:
        check_tensor("v_new", v_new, min_rank=1)
        check_same_kind(S=S, v_new=v_new)
        check_dim("v_new", v_new.shape[-1], S.shape[-2], "value dimension d_v (dim -2 of S)")
    if protect is not None:
        _check_protect(protect, k)
    elif not all_finite((k * k).sum(-1, keepdim=True)):  # k / inf would be a zero step: S returned unchanged
        raise ValueError(f"k: expected a key whose squared norm ‖k‖² fits in {k.dtype}, got one of norm "
                         f"{float(k.norm(dim=-1).max()):.3g} whose square overflows it (rescale k)")
    zero = S.new_zeros(S.shape[-2]) if v_new is None else v_new
    if beta is None:
        return {"v_new": zero}
    b = check_real("beta", beta, low=0.0)
    worst = b if protect is not None else float((b * (k * k).sum(-1)).max()) if k.numel() else 0.0
    if worst > 2.0:  # the key's error is multiplied by 1 − gain: |1 − gain| > 1 strengthens it
        raise ValueError(f"beta: expected beta·‖k‖² <= 2 (the step multiplies the key's error by 1 − beta·‖k‖², "
                         f"which must stay within [−1, 1]), got beta = {b:g} with beta·‖k‖² = {worst:.4g}"
                         if protect is None else
                         f"beta: expected a number <= 2 with protect (the step multiplies the key's error by "
                         f"1 − beta), got {b:g}")
    return {"v_new": zero, "beta": b}


@checked_by(_check_delta_edit, nonfinite="very large S, k or v_new overflow the dtype")
def unlearn_delta(S: torch.Tensor, k: torch.Tensor, v_new: torch.Tensor | None = None, *, beta: float | None = None,
                  protect: torch.Tensor | None = None) -> torch.Tensor:
    """A targeted delta update: ``S + β (v_new − S k) uᵀ`` so that the key ``k`` now reads ``v_new``.

    Without ``protect``: u = k and β = 1/‖k‖² by default, the smallest change of S (in Frobenius
    norm) after which ``S k = v_new`` exactly. With ``protect`` keys P (..., m, d_k), m < d_k:
    u is the part of k orthogonal to every protected key, scaled so that ``u·k = 1`` (β = 1), so
    ``S k = v_new`` and ``S p = S_before p`` for every protected p.

    Args:
        S: (..., d_v, d_k); k: (..., d_k); v_new: (..., d_v), default zeros ("stop salivating").
        beta: the step size; default the exact one (1/‖k‖², or 1 with ``protect``). β ∈ (0, 1/‖k‖²)
            removes only a fraction β‖k‖² of the error; the step multiplies the key's error by 1 − β‖k‖²
            (1 − β with ``protect``), so β‖k‖² > 2 (β > 2) would strengthen the memory: it raises.
    Returns:
        the new memory, (..., d_v, d_k).
    """
    return _unlearn_delta(S, k, cast(torch.Tensor, v_new), beta, protect)


def _unlearn_delta(S: torch.Tensor, k: torch.Tensor, v_new: torch.Tensor, beta: float | None = None,
                   protect: torch.Tensor | None = None) -> torch.Tensor:
    """``S + β (v_new − S k) uᵀ`` (:func:`unlearn_delta` on checked arguments): u = k/‖k‖², or the part of k
    orthogonal to the protected keys scaled so that u·k = 1; β = 1 unless given (then u·k = β‖k‖², or β)."""
    error = v_new - (S @ k[..., :, None])[..., 0]                       # what we want − what it predicts
    if protect is None:
        u = k / (k * k).sum(-1, keepdim=True)
    else:
        coef = torch.linalg.solve(protect @ protect.mT, (protect @ k[..., :, None]))  # k's part in span(protect)
        u = k - (protect.mT @ coef)[..., 0]
        norm = (u * k).sum(-1, keepdim=True)
        if bool((norm.abs() < 1e-6 * (k * k).sum(-1, keepdim=True)).any()):
            raise ValueError("protect: k lies in the span of the protected keys, so it cannot be edited alone")
        u = u / norm
    if beta is not None:
        u = u * (beta * (k * k).sum(-1, keepdim=True) if protect is None else torch.full_like(u[..., :1], beta))
    return S + error[..., :, None] * u[..., None, :]


class UnlearningReport(NamedTuple):
    """What an unlearning step did (each field has the memory's batch shape ``...``; per-association
    fields end in n)."""

    residual: torch.Tensor
    """‖S_after k* − v_new‖ / ‖S_before k* − v_new‖: the fraction of the unwanted response left (0 = gone)."""
    strength_before: torch.Tensor
    """(..., n) conditioned response ``v_j·S k_j / ‖v_j‖²`` of every association before (1 = full)."""
    strength_after: torch.Tensor
    """(..., n) the same after."""
    cos_before: torch.Tensor
    """(..., n) recall cosine ``cos(S k_j, v_j)`` before."""
    cos_after: torch.Tensor
    """(..., n) recall cosine after."""
    collateral: torch.Tensor
    """mean over the other associations of |strength_after − strength_before| (0 = untouched)."""
    worst: torch.Tensor
    """max over the other associations of |strength_after − strength_before|."""
    cos_change: torch.Tensor
    """mean over the other associations of cos_after − cos_before (negative = recall got worse)."""


@checked_by(_check_read, nonfinite="very large S, keys or values overflow the dtype")
def recall_strength(S: torch.Tensor, keys: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """The conditioned response of each association along its own value: ``v_i·S k_i / ‖v_i‖²``.

    S: (..., d_v, d_k), keys: (..., n, d_k), values: (..., n, d_v) -> (..., n); 1 for a pair written
    once with unit key and no crosstalk, r for one written r times, 0 when unlearned.
    """
    return _recall_strength(S, keys, values)


def _recall_strength(S: torch.Tensor, keys: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """``v_i·S k_i / ‖v_i‖²`` (:func:`recall_strength` on checked arguments)."""
    return ((keys @ S.mT) * values).sum(-1) / (values * values).sum(-1).clamp(min=torch.finfo(values.dtype).tiny)


def _check_report(S_before: torch.Tensor, S_after: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                  target: int, v_new: torch.Tensor | None) -> None:
    """The arguments of :func:`unlearning_report`."""
    check_pairs(keys, values)
    n = keys.shape[-2]
    check_int("target", target, low=0)
    if target >= n or n < 2:
        raise ValueError(f"target: expected an index in [0, {n - 1}] with at least one other association, got {target}")
    check_tensor("S_before", S_before, min_rank=2)
    check_tensor("S_after", S_after, min_rank=2)
    check_same_kind(S_before=S_before, S_after=S_after)
    if S_before.shape[-2:] != S_after.shape[-2:]:
        raise ValueError(f"S_after: expected the shape of S_before {tuple(S_before.shape)}, got {tuple(S_after.shape)}")
    if v_new is not None:
        check_tensor("v_new", v_new, min_rank=1)
        check_same_kind(S_before=S_before, v_new=v_new)
        check_dim("v_new", v_new.shape[-1], S_before.shape[-2], "value dimension d_v (dim -2 of S_before)")


@checked_by(_check_report)
def unlearning_report(S_before: torch.Tensor, S_after: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                      target: int, v_new: torch.Tensor | None = None) -> UnlearningReport:
    """Measure an unlearning step: the target's residual response and the collateral damage on the others.

    S_before, S_after: (..., d_v, d_k); keys (..., n, d_k), values (..., n, d_v); target: the index of
    the unlearned association; v_new: (..., d_v) the wanted read-out (default zeros).
    """
    return _unlearning_report(S_before, S_after, keys, values, target, v_new)


def _unlearning_report(S_before: torch.Tensor, S_after: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                       target: int, v_new: torch.Tensor | None = None) -> UnlearningReport:
    """:func:`unlearning_report` on checked arguments."""
    n = keys.shape[-2]
    k = keys[..., target, :]
    want = S_before.new_zeros(S_before.shape[-2]) if v_new is None else v_new
    before = ((S_before @ k[..., :, None])[..., 0] - want).norm(dim=-1)
    after = ((S_after @ k[..., :, None])[..., 0] - want).norm(dim=-1)
    residual = after / before.clamp(min=torch.finfo(before.dtype).tiny)
    sb, sa = _recall_strength(S_before, keys, values), _recall_strength(S_after, keys, values)
    cb, ca = _recall_cosine(keys, values, S_before), _recall_cosine(keys, values, S_after)
    others = torch.ones(n, dtype=torch.bool, device=keys.device)
    others[target] = False
    moved = (sa - sb)[..., others].abs()
    return UnlearningReport(residual, sb, sa, cb, ca, moved.mean(-1), moved.max(-1).values,
                            (ca - cb)[..., others].mean(-1))


def _check_unlearning_experiment(n: int, d_k: int, d_v: int, repeats: float, overlap: float, n_trials: int,
                                 hebbian_times: float, generator: torch.Generator | None,
                                 device: torch.device | str | None, dtype: torch.dtype) -> dict[str, object]:
    """The arguments of :func:`unlearning_experiment`; overlap, device, dtype, repeats and hebbian_times as
    checked; its draws."""
    check_int("n_trials", n_trials, low=1)
    check_int("n", n, low=2)
    check_int("d_k", d_k, low=1)
    if n - 1 >= d_k:
        raise ValueError(f"n: the 'delta_protected' method protects the other n − 1 keys, which needs n − 1 < d_k; "
                         f"got n = {n}, d_k = {d_k}")
    checked = _check_associations(n, d_k, d_v, overlap, (n_trials,), device, dtype)
    times = {"repeats": check_real("repeats", repeats, low=0.0, low_open=True),
             "hebbian_times": check_real("times", hebbian_times, low=0.0)}
    _check_association_draws(n, d_k, d_v, (n_trials,), generator)
    return {"overlap": checked["overlap"], "device": checked["device"], "dtype": checked["dtype"], **times}


@checked_by(_check_unlearning_experiment)
def unlearning_experiment(n: int = 16, d_k: int = 64, d_v: int = 64, *, repeats: float = 1.0, overlap: float = 0.0,
                          n_trials: int = 256, hebbian_times: float = 1.0, generator: torch.Generator | None = None,
                          device: torch.device | str | None = None,
                          dtype: torch.dtype = torch.float32) -> dict[str, UnlearningReport]:
    """Unlearn association 0 of a Hebbian memory in ``n_trials`` random memories at once, three ways.

    Each memory stores n unit pairs, pair 0 written ``repeats`` times (the others once), keys 0 and 1
    with cosine ``overlap``. Methods: ``"hebbian"`` subtracts ``hebbian_times`` traces v₀k₀ᵀ;
    ``"delta"`` is ``unlearn_delta`` towards 0; ``"delta_protected"`` is the same with the other n − 1
    keys protected. Returns {method: UnlearningReport} with fields of shape (n_trials,) / (n_trials, n).
    """
    keys, values = _random_associations(n, d_k, d_v, (n_trials,), overlap, generator, cast(torch.device | None, device),
                                        dtype)
    r = torch.ones(n, dtype=dtype, device=keys.device)
    r[0] = repeats
    S = _outer_product_memory(keys, values, r)
    k0, v0 = keys[..., 0, :], values[..., 0, :]
    after = {
        "hebbian": _unlearn_hebbian(S, k0, v0, hebbian_times),
        "delta": _unlearn_delta(S, k0, S.new_zeros(S.shape[-2])),
        "delta_protected": _unlearn_delta(S, k0, S.new_zeros(S.shape[-2]), protect=keys[..., 1:, :]),
    }
    return {m: _unlearning_report(S, S_after, keys, values, 0) for m, S_after in after.items()}


CUES = ("bell 0", "bell 1 (stored look-alike)", "blend of bells 0 and 1", "unseen look-alike", "unseen bell")
"""The cues :func:`probe_cues` builds and :func:`generalisation_after_unlearning` reads after bell 0 is unlearned."""


def _check_cue_draw(lead: tuple[int, ...], d_k: int, generator: torch.Generator | None) -> None:
    """The draw of :func:`_probe_cues`: two unit vectors per memory of the leading dims ``lead``, in float64 on
    the CPU ``generator``, checked to fit in memory."""
    _check_draw((*lead, 2), d_k, "sphere", generator, None, torch.float64)


def _check_probe_cues(keys: torch.Tensor, overlap: float, generator: torch.Generator | None) -> dict[str, float]:
    """The arguments of :func:`probe_cues`: at least 2 unit keys of at least 2 dims; ``overlap`` as a float; the
    draw."""
    check_tensor("keys", keys, min_rank=2)
    if keys.shape[-2] < 2 or keys.shape[-1] < 2:
        raise ValueError(f"keys: expected at least 2 keys of at least 2 dims, got shape {tuple(keys.shape)}")
    overlap = check_real("overlap", overlap, low=-1.0, high=1.0)
    norms = keys.detach().norm(dim=-1)
    if bool(((norms - 1).abs() > 1e-3).any()):
        raise ValueError(f"keys: expected unit keys (norm 1 along the last dim), got norms from "
                         f"{norms.min().item():.4g} to {norms.max().item():.4g}")
    _check_cue_draw(tuple(keys.shape[:-2]), keys.shape[-1], generator)
    return {"overlap": overlap}


@checked_by(_check_probe_cues)
def probe_cues(keys: torch.Tensor, *, overlap: float = 0.7, generator: torch.Generator | None = None) -> torch.Tensor:
    """Cues to probe what an edit of association 0 removed: the stored bells 0 and 1, their blend
    ``normalise(k₀ + k₁)``, an unseen look-alike ``overlap·k₀ + √(1 − overlap²)·w`` (w a random unit vector
    orthogonal to k₀, never stored) and an unseen random bell, in the order of :data:`CUES`.

    keys: (..., n, d_k) unit keys, n ≥ 2 -> cues (..., 5, d_k), unit vectors; drawn on the CPU ``generator``.
    """
    return _probe_cues(keys, overlap, generator)


def _probe_cues(keys: torch.Tensor, overlap: float, generator: torch.Generator | None) -> torch.Tensor:
    """:func:`probe_cues` on checked arguments."""
    k0, k1 = keys[..., 0, :], keys[..., 1, :]
    fresh = _random_keys(*keys.shape[:-2], 2, d=keys.shape[-1], kind="sphere", generator=generator,
                        dtype=torch.float64).to(keys)
    w = fresh[..., 0, :] - (fresh[..., 0, :] * k0).sum(-1, keepdim=True) * k0
    w = w / w.norm(dim=-1, keepdim=True)
    blend = (k0 + k1) / (k0 + k1).norm(dim=-1, keepdim=True)
    look_alike = overlap * k0 + (1.0 - overlap ** 2) ** 0.5 * w
    return torch.stack([k0, k1, blend, look_alike, fresh[..., 1, :]], dim=-2)


def _check_cue_response(S: torch.Tensor, cues: torch.Tensor, value: torch.Tensor) -> None:
    """The arguments of :func:`cue_response`: a memory, cues and a non-zero value of matching sizes."""
    check_tensor("S", S, min_rank=2)
    check_tensor("cues", cues, min_rank=2)
    check_tensor("value", value, min_rank=1)
    check_same_kind(S=S, cues=cues, value=value)
    check_dim("cues", cues.shape[-1], S.shape[-1], "key dimension d_k (last dim of S)")
    check_dim("value", value.shape[-1], S.shape[-2], "value dimension d_v (dim -2 of S)")
    if bool(((value * value).sum(-1) == 0).any()):
        raise ValueError("value: expected a non-zero value vector (the response is divided by ‖v‖²), got a zero one")


@checked_by(_check_cue_response, nonfinite="very large S, cues or value overflow the dtype")
def cue_response(S: torch.Tensor, cues: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    """How strongly each cue q evokes one food v: ``v·S q / ‖v‖²`` (1 = the full learned response).

    S: (..., d_v, d_k), cues: (..., m, d_k), value: (..., d_v) -> (..., m).
    """
    return _cue_response(S, cues, value)


def _cue_response(S: torch.Tensor, cues: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    """``v·S q / ‖v‖²`` for each cue (:func:`cue_response` on checked arguments)."""
    reads = cues @ S.mT                                                   # (..., m, d_v)
    return (reads * value[..., None, :]).sum(-1) / (value * value).sum(-1, keepdim=True)


def _check_edit_set_up(n_trials: int, n: int, d_k: int, d_v: int, overlap: float, generator: torch.Generator | None,
                       device: torch.device | str | None, dtype: torch.dtype) -> dict[str, object]:
    """The checks of an edit experiment's set-up (n_trials memories of n pairs, bells 0 and 1 at cosine
    ``overlap``, the other n − 1 keys protectable) and of its draws (the pairs, the probe cues); overlap, device
    and dtype as checked."""
    check_int("n_trials", n_trials, low=1)
    check_int("n", n, low=2)
    check_int("d_k", d_k, low=2)
    if n - 1 >= d_k:
        raise ValueError(f"n: protecting the other n − 1 keys needs n − 1 < d_k; got n = {n}, d_k = {d_k}")
    overlap = check_real("overlap", overlap, low=-1.0, high=1.0)
    if abs(overlap) == 1:
        raise ValueError(f"overlap: expected a number strictly between -1 and 1 (with |overlap| = 1 bell 1 is "
                         f"±bell 0, and editing bell 0 while protecting bell 1 is impossible), got {overlap}")
    checked = _check_associations(n, d_k, d_v, overlap, (n_trials,), device, dtype)
    _check_association_draws(n, d_k, d_v, (n_trials,), generator)
    _check_cue_draw((n_trials,), d_k, generator)
    return {"overlap": checked["overlap"], "device": checked["device"], "dtype": checked["dtype"]}


def _check_edit_reach(n_trials: int, n: int, d_k: int, d_v: int, overlap: float, n_cues: int,
                      generator: torch.Generator | None, device: torch.device | str | None,
                      dtype: torch.dtype) -> dict[str, object]:
    """The arguments of :func:`edit_reach`: the set-up's (:func:`_check_edit_set_up`) and the number of cues, and
    the draw of the unseen cues."""
    check_int("n_cues", n_cues, low=1)
    checked = _check_edit_set_up(n_trials, n, d_k, d_v, overlap, generator, device, dtype)
    _check_draw((n_trials, n_cues), d_k, "sphere", generator, None, torch.float64)
    return checked


def _edits(S: torch.Tensor, keys: torch.Tensor, values: torch.Tensor) -> dict[str, torch.Tensor]:
    """The memory before and after association 0 is edited by each method of :data:`METHODS`."""
    k0, v0 = keys[..., 0, :], values[..., 0, :]
    zero = S.new_zeros(S.shape[-2])
    return {"before": S, "hebbian": _unlearn_hebbian(S, k0, v0), "delta": _unlearn_delta(S, k0, zero),
            "delta_protected": _unlearn_delta(S, k0, zero, protect=keys[..., 1:, :])}


@checked_by(_check_edit_set_up)
def generalisation_after_unlearning(n: int = 16, d_k: int = 64, d_v: int = 64, *, overlap: float = 0.7,
                                    n_trials: int = 256, generator: torch.Generator | None = None,
                                    device: torch.device | str | None = None,
                                    dtype: torch.dtype = torch.float32) -> dict[str, torch.Tensor]:
    """What an edit of association 0 removes: the response to food 0 at the :func:`probe_cues`, before and after.

    Each of ``n_trials`` memories stores n unit pairs once, ``S = Σ v kᵀ``, with keys 0 and 1 at cosine
    ``overlap``; association 0 is then edited three ways (see :func:`unlearning_experiment`) and every cue is
    read along food 0, :func:`cue_response`. Returns {"before" or a method of :data:`METHODS`: (n_trials, 5)},
    columns in the order of :data:`CUES`.
    """
    keys, values = _random_associations(n, d_k, d_v, (n_trials,), overlap, generator, cast(torch.device | None, device),
                                        dtype)
    cues = _probe_cues(keys, overlap, generator)
    edits = _edits(_outer_product_memory(keys, values), keys, values)
    return {name: _cue_response(M, cues, values[..., 0, :]) for name, M in edits.items()}


class EditReach(NamedTuple):
    """How far an edit of association 0 reaches beyond the cues it was checked on (:func:`edit_reach`).

    Each field is (n_trials,), one number per memory."""

    step: torch.Tensor
    """‖S_after − S_before‖_F: the size of the edit."""
    unseen_change: torch.Tensor
    """RMS over unseen random unit cues q of ‖(S_after − S_before) q‖ (closed form: ``step / √d_k``)."""
    look_alike_food1: torch.Tensor
    """food 1 evoked by the unseen look-alike of bell 0 after the edit, ``v₁·S q / ‖v₁‖²``."""


@checked_by(_check_edit_reach)
def edit_reach(n: int = 16, d_k: int = 64, d_v: int = 64, *, overlap: float = 0.7, n_trials: int = 256,
               n_cues: int = 64, generator: torch.Generator | None = None, device: torch.device | str | None = None,
               dtype: torch.dtype = torch.float32) -> dict[str, EditReach]:
    """What an edit of association 0 does to cues outside the stored and protected set.

    The memories and edits of :func:`generalisation_after_unlearning` (keys 0 and 1 at cosine ``overlap``,
    association 0 edited by the Hebbian trace, the delta update, and the delta update with the other n − 1
    keys protected); then per memory: the edit's size, the RMS read-out change on ``n_cues`` unseen random
    unit cues (a uniform unit cue sees ``E‖ΔS q‖² = ‖ΔS‖²_F / d_k``), and food 1 at the unseen look-alike of
    bell 0 (:func:`probe_cues`; before the edit about ``overlap²``, since the look-alike shares k₀ with bell 1).
    Returns {"before" or a method: EditReach}; "before" has a zero step and change.
    """
    keys, values = _random_associations(n, d_k, d_v, (n_trials,), overlap, generator, cast(torch.device | None, device),
                                        dtype)
    look_alike = _probe_cues(keys, overlap, generator)[..., 3:4, :]
    unseen = _random_keys(n_trials, n_cues, d=d_k, kind="sphere", generator=generator, dtype=torch.float64).to(keys)
    S = _outer_product_memory(keys, values)
    reach = {}
    for name, M in _edits(S, keys, values).items():
        delta = M - S
        reach[name] = EditReach(delta.flatten(-2).norm(dim=-1), (unseen @ delta.mT).square().sum(-1).mean(-1).sqrt(),
                                _cue_response(M, look_alike, values[..., 1, :])[..., 0])
    return reach


__all__ = ["CUES", "METHODS", "EditReach", "UnlearningReport", "cue_response", "edit_reach",
           "generalisation_after_unlearning",
           "probe_cues", "random_associations", "recall_strength",
           "unlearn_delta", "unlearn_hebbian", "unlearning_experiment", "unlearning_report"]
