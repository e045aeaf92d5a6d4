"""Concept drift: when the food moves, which memory keeps up?

A drift stream presents CS–US pairs ``(k_t, v_t)`` whose meaning changes over time: the same bell
(key) starts to predict a different food (value). Three kinds of change:

- ``redraw_stream``: a fixed set of keys whose values are all redrawn every ``period`` steps;
- ``rotation_stream``: the values turn slowly and steadily (gradual drift);
- ``arrival_stream``: new keys keep arriving, each with its own value.

``track`` then runs several learning rules side by side on the same stream (all rules and all
seeds at once) and records, per step, how well each memory tracks the *current* values.
Paper: arXiv:2508.08289 (the Hebbian memory cannot forget; the delta rule unlearns; an Oja-type
homeostatic rule bounds the memory). ``scale_values`` gives the values components of unequal size,
which is where the Oja-type rules show their bias.
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import torch

from .._checks import (
    check_choice,
    check_device,
    check_float_dtype,
    check_int,
    check_real,
    check_shape,
    check_tensor,
    checked_by,
    unchecked,
    warn_nonfinite,
)
from ..memory.associative import _FORMS, _check_rule_name, _step, check_lr
from ..sampling import _check_draw, random_keys

__all__ = ["DriftStream", "Tracking", "arrival_stream", "key_reuse_task", "recovery_steps", "redraw_stream",
           "rotation_stream", "scale_values", "track"]


def _check_first(self: DriftStream, steps: int) -> None:
    """The number of steps of :meth:`DriftStream.first`: 1 to the stream's length."""
    check_int("steps", steps, low=1, high=self.steps)


@dataclass
class DriftStream:
    """A stream of CS–US pairs and what each key means at every step.

    Shapes (``...`` = batch/seed dims, ``T`` steps, ``n`` keys):

    - ``keys``: (..., T, d_k) the key (CS) presented at step t (unit norm);
    - ``values``: (..., T, d_v) the value (US) presented with it;
    - ``probes``: (..., n, d_k) the ``n`` keys of the stream, used to test the memory;
    - ``targets``: (..., T, n, d_v) the current value of every key at step t;
    - ``active``: (..., T, n) bool, whether a key has appeared yet at step t;
    - ``drift_times``: (n_drifts,) long, the steps at which the values change (empty when the change
      is gradual).
    """

    keys: torch.Tensor
    values: torch.Tensor
    probes: torch.Tensor
    targets: torch.Tensor
    active: torch.Tensor
    drift_times: torch.Tensor

    @property
    def steps(self) -> int:
        """The number of steps T."""
        return self.keys.shape[-2]

    @checked_by(_check_first)
    def first(self, steps: int) -> DriftStream:
        """The stream's first ``steps`` steps (the same keys; drift times before ``steps`` only)."""
        return DriftStream(self.keys[..., :steps, :], self.values[..., :steps, :], self.probes,
                           self.targets[..., :steps, :, :], self.active[..., :steps, :],
                           self.drift_times[self.drift_times < steps])


_random_keys = unchecked(random_keys)
"""The draw of :func:`pavlovlab.sampling.random_keys`, on sizes the streams' doors checked (with the draws)."""


def _stream_keys(n: int, d_k: int, batch: Sequence[int], orthogonal: bool, generator: torch.Generator | None,
                 dtype: torch.dtype) -> torch.Tensor:
    """n unit keys in d_k dims, (*batch, n, d_k); orthonormal when asked (n ≤ d_k)."""
    kind = "orthogonal" if orthogonal else "sphere"
    return _random_keys(*batch, n, d=d_k, kind=kind, generator=generator, dtype=torch.float64).to(dtype)


def _check_draws(generator: torch.Generator | None, *draws: tuple[tuple[int, ...], int, str]) -> None:
    """The draws of a stream, ``(shape, d, kind)`` each, made in float64 on the CPU ``generator``: checked to fit
    in memory, as :func:`pavlovlab.sampling.random_keys` checks them."""
    for shape, d, kind in draws:
        _check_draw(shape, d, kind, generator, None, torch.float64)


def _check_common(n_keys: int, d_k: int, d_v: int, steps: int, batch_shape: Sequence[int], orthogonal: bool,
                  device: torch.device | str | None, dtype: object) -> dict[str, object]:
    """The arguments every stream shares (at most d_k keys when they are orthogonal); the batch shape as a
    ``torch.Size``, the device and the dtype as checked."""
    check_int("n_keys", n_keys, low=1)
    check_int("d_k", d_k, low=1)
    check_int("d_v", d_v, low=1)
    check_int("steps", steps, low=1)
    batch = torch.Size(check_shape("batch_shape", batch_shape))
    if orthogonal and n_keys > d_k:
        raise ValueError(f"n_keys: expected at most d_k = {d_k} keys for orthogonal keys, got {n_keys}")
    return {"batch_shape": batch, "device": check_device("device", device),
            "dtype": check_float_dtype("dtype", dtype, allow_none=False)}


def _check_redraw(n_keys: int, d_k: int, d_v: int, steps: int, period: int, batch_shape: Sequence[int],
                  orthogonal: bool, generator: torch.Generator | None,
                  device: torch.device | str | None, dtype: object) -> dict[str, object]:
    """The arguments of :func:`redraw_stream` (:func:`_check_common`, and a period of at least one step), and its
    draws."""
    checked = _check_common(n_keys, d_k, d_v, steps, batch_shape, orthogonal, device, dtype)
    check_int("period", period, low=1)
    batch = cast(torch.Size, checked["batch_shape"])
    _check_draws(generator, ((*batch, n_keys), d_k, "orthogonal" if orthogonal else "sphere"),
                 ((*batch, -(-steps // period), n_keys), d_v, "sphere"))
    return checked


def _check_rotation(n_keys: int, d_k: int, d_v: int, steps: int, turn_period: int, batch_shape: Sequence[int],
                    orthogonal: bool, generator: torch.Generator | None,
                    device: torch.device | str | None, dtype: object) -> dict[str, object]:
    """The arguments of :func:`rotation_stream` (:func:`_check_common`, and a whole number of steps per turn, in
    at least 2 value dims), and its draws."""
    checked = _check_common(n_keys, d_k, d_v, steps, batch_shape, orthogonal, device, dtype)
    check_int("turn_period", turn_period, low=1)
    if d_v < 2:
        raise ValueError(f"d_v: expected at least 2 value dims for a rotation, got {d_v}")
    batch = cast(torch.Size, checked["batch_shape"])
    _check_draws(generator, ((*batch, n_keys), d_k, "orthogonal" if orthogonal else "sphere"),
                 ((*batch, n_keys, 2), d_v, "orthogonal"))
    return checked


def _check_arrivals(every: int, start: int, n_keys: int) -> None:
    """Steps between arrivals, and the keys there at first (at most n_keys)."""
    check_int("every", every, low=1)
    check_int("start", start, low=1)
    if start > n_keys:
        raise ValueError(f"start: expected at most n_keys = {n_keys} keys at first, got {start}")


def _check_arrival(n_keys: int, d_k: int, d_v: int, steps: int, every: int, start: int, batch_shape: Sequence[int],
                   orthogonal: bool, generator: torch.Generator | None,
                   device: torch.device | str | None, dtype: object) -> dict[str, object]:
    """The arguments of :func:`arrival_stream` (:func:`_check_common` and :func:`_check_arrivals`), and its
    draws."""
    checked = _check_common(n_keys, d_k, d_v, steps, batch_shape, orthogonal, device, dtype)
    _check_arrivals(every, start, n_keys)
    batch = cast(torch.Size, checked["batch_shape"])
    _check_draws(generator, ((*batch, n_keys), d_k, "orthogonal" if orthogonal else "sphere"),
                 ((*batch, n_keys), d_v, "sphere"))
    return checked


def _shuffled_order(n: int, steps: int, batch: Sequence[int], generator: torch.Generator | None) -> torch.Tensor:
    """Key indices (*batch, steps): each block of n steps presents every key once, in a random order."""
    blocks = -(-steps // n)
    order = torch.rand(*batch, blocks, n, generator=generator).argsort(dim=-1)
    return order.flatten(-2)[..., :steps]


def _present(probes: torch.Tensor, targets: torch.Tensor, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Gather the key probes[idx_t] and its current value targets[t, idx_t] for every step."""
    d_k, d_v = probes.shape[-1], targets.shape[-1]
    keys = torch.gather(probes, -2, idx[..., None].expand(*idx.shape, d_k))
    values = torch.gather(targets, -2, idx[..., None, None].expand(*idx.shape, 1, d_v))[..., 0, :]
    return keys, values


def _finish(probes: torch.Tensor, targets: torch.Tensor, active: torch.Tensor, idx: torch.Tensor,
            drift_times: torch.Tensor, device: torch.device | str | None, dtype: torch.dtype) -> DriftStream:
    keys, values = _present(probes, targets, idx)
    keys, values, probes, targets = (x.to(device=device, dtype=dtype) for x in (keys, values, probes, targets))
    return DriftStream(keys, values, probes, targets,
                       active.to(device=device), drift_times.to(device=device))


@checked_by(_check_redraw)
def redraw_stream(n_keys: int = 8, d_k: int = 16, d_v: int = 16, steps: int = 5000, period: int = 500, *,
                  orthogonal: bool = True, batch_shape: Sequence[int] = (), generator: torch.Generator | None = None,
                  device: torch.device | str | None = None, dtype: torch.dtype = torch.float32) -> DriftStream:
    """Fixed keys whose values are all redrawn every ``period`` steps (abrupt drift).

    Each block of ``n_keys`` steps presents every key once in a random order; the values are random
    unit vectors, redrawn at t = period, 2·period, ... Random numbers come from the CPU ``generator``
    and are then moved to ``device``, so every device sees the same stream.

    Returns a :class:`DriftStream` with keys (..., steps, d_k), values (..., steps, d_v),
    targets (..., steps, n_keys, d_v) and ``drift_times`` = [period, 2·period, ...].
    """
    probes = _stream_keys(n_keys, d_k, batch_shape, orthogonal, generator, dtype)
    regimes = -(-steps // period)
    table = _random_keys(*batch_shape, regimes, n_keys, d=d_v, kind="sphere", generator=generator,
                         dtype=torch.float64).to(dtype)
    regime = torch.arange(steps) // period
    targets = table[..., regime, :, :]
    idx = _shuffled_order(n_keys, steps, batch_shape, generator)
    active = torch.ones(*batch_shape, steps, n_keys, dtype=torch.bool)
    drift_times = torch.arange(period, max(period, steps), period)
    return _finish(probes, targets, active, idx, drift_times, device, dtype)


@checked_by(_check_rotation)
def rotation_stream(n_keys: int = 8, d_k: int = 16, d_v: int = 16, steps: int = 5000, turn_period: int = 2000, *,
                    orthogonal: bool = True, batch_shape: Sequence[int] = (), generator: torch.Generator | None = None,
                    device: torch.device | str | None = None, dtype: torch.dtype = torch.float32) -> DriftStream:
    """Fixed keys whose values rotate steadily (gradual drift): one full turn every ``turn_period`` steps.

    ``v_i(t) = cos(ωt) a_i + sin(ωt) b_i`` with ω = 2π / turn_period and a_i ⊥ b_i random unit
    vectors (needs d_v ≥ 2), so every value keeps unit norm and turns by ω per step.
    Returns a :class:`DriftStream` (``drift_times`` is empty: the change never stops).
    """
    probes = _stream_keys(n_keys, d_k, batch_shape, orthogonal, generator, dtype)
    pair = _random_keys(*batch_shape, n_keys, 2, d=d_v, kind="orthogonal", generator=generator, dtype=torch.float64)
    a, b = pair[..., 0, :], pair[..., 1, :]                             # (*batch_shape, n, d_v), orthonormal
    angle = 2 * math.pi * torch.arange(steps, dtype=torch.float64) / turn_period
    targets = (angle.cos()[:, None, None] * a[..., None, :, :] + angle.sin()[:, None, None] * b[..., None, :, :])
    idx = _shuffled_order(n_keys, steps, batch_shape, generator)
    active = torch.ones(*batch_shape, steps, n_keys, dtype=torch.bool)
    return _finish(probes, targets.to(dtype), active, idx, torch.zeros(0, dtype=torch.long), device, dtype)


@checked_by(_check_arrival)
def arrival_stream(n_keys: int = 8, d_k: int = 16, d_v: int = 16, steps: int = 5000, every: int = 500,
                   start: int = 2, *, orthogonal: bool = True, batch_shape: Sequence[int] = (),
                   generator: torch.Generator | None = None, device: torch.device | str | None = None,
                   dtype: torch.dtype = torch.float32) -> DriftStream:
    """New keys arriving: ``start`` keys at first, then one more every ``every`` steps (up to ``n_keys``).

    At each step a key is drawn uniformly among those that have arrived; every key keeps its
    (random unit) value. ``active[..., t, i]`` says whether key i has arrived by step t, and
    ``drift_times`` are the arrival times.
    """
    probes = _stream_keys(n_keys, d_k, batch_shape, orthogonal, generator, dtype)
    values = _random_keys(*batch_shape, n_keys, d=d_v, kind="sphere", generator=generator,
                          dtype=torch.float64).to(dtype)
    targets = values[..., None, :, :].expand(*batch_shape, steps, n_keys, d_v)
    n_active = (start + torch.arange(steps) // every).clamp(max=n_keys)     # (steps,)
    active = (torch.arange(n_keys)[None, :] < n_active[:, None]).expand(*batch_shape, steps, n_keys)
    u = torch.rand(*batch_shape, steps, generator=generator, dtype=torch.float64)
    idx = (u * n_active).long().clamp(max=n_keys - 1)
    drift_times = torch.arange(every, every * (n_keys - start) + 1, every)
    drift_times = drift_times[drift_times < steps]
    return _finish(probes, targets, active, idx, drift_times, device, dtype)


@dataclass
class Tracking:
    """What ``track`` measured, one row per rule (``R`` rules, ``...`` the stream's batch dims).

    - ``cosine``: (R, ..., T) mean over the active keys of cos(S_t k_i, v_i(t)) after the write at t;
    - ``gain``: (R, ..., T) mean over the active keys of v_i(t)·S_t k_i / ‖v_i(t)‖² (1 = recalled at the
      right size along the right value; the recall bias in magnitude);
    - ``error``: (R, ..., T) mean over the active keys of ‖S_t k_i − v_i(t)‖²;
    - ``norm``: (R, ..., T) the Frobenius norm ‖S_t‖_F;
    - ``S``: (R, ..., d_v, d_k) the final memories; ``rules`` and ``lr`` (R,) name the rows.
    """

    rules: tuple[str, ...]
    lr: torch.Tensor
    cosine: torch.Tensor
    gain: torch.Tensor
    error: torch.Tensor
    norm: torch.Tensor
    S: torch.Tensor

    def __getitem__(self, rule: str) -> dict[str, torch.Tensor]:
        """The measurements of one rule: ``tracking["delta"]["cosine"]`` is (..., T)."""
        i = self.rules.index(check_choice("rule", rule, self.rules))
        return {"cosine": self.cosine[i], "gain": self.gain[i], "error": self.error[i], "norm": self.norm[i],
                "S": self.S[i]}


_CHUNK = 250  # memories measured together, in one batched pass


def _check_scales(stream: DriftStream, scales: torch.Tensor | Sequence[float]) -> dict[str, torch.Tensor]:
    """A stream and finite scales (d_v,), returned as a tensor like its values."""
    if not isinstance(stream, DriftStream):
        raise TypeError(f"stream: expected a DriftStream, got {type(stream).__name__}")
    checked = torch.as_tensor(scales, dtype=stream.values.dtype, device=stream.values.device)
    if checked.shape != stream.values.shape[-1:]:
        raise ValueError(f"scales: expected shape ({stream.values.shape[-1]},) (one scale per value dim), "
                         f"got {tuple(checked.shape)}")
    if not bool(torch.isfinite(checked).all()):
        raise ValueError("scales: expected finite numbers")
    return {"scales": checked}


@checked_by(_check_scales)
def scale_values(stream: DriftStream, scales: torch.Tensor | Sequence[float]) -> DriftStream:
    """The same stream with every value multiplied elementwise by ``scales`` (d_v,): values whose
    components have unequal sizes (e.g. ``torch.logspace(0, -1.3, d_v)``, from 1 down to 0.05)."""
    s = cast(torch.Tensor, scales)                                      # made a tensor by the check
    return DriftStream(stream.keys, stream.values * s, stream.probes, stream.targets * s, stream.active,
                       stream.drift_times)


def _check_stream(stream: DriftStream) -> None:
    """The shapes of a DriftStream made by hand: keys (..., T, d_k), values (..., T, d_v), probes (..., n, d_k),
    targets (..., T, n, d_v), active (..., T, n), all on one device."""
    check_tensor("stream.keys", stream.keys, min_rank=2)
    check_tensor("stream.values", stream.values, min_rank=2)
    check_tensor("stream.probes", stream.probes, min_rank=2)
    check_tensor("stream.targets", stream.targets, min_rank=3)
    T, d_k = stream.keys.shape[-2:]
    n, d_v = stream.probes.shape[-2], stream.targets.shape[-1]
    want = {"stream.values": (T, d_v), "stream.probes": (n, d_k), "stream.targets": (T, n, d_v),
            "stream.active": (T, n)}
    for name, shape in want.items():
        x = getattr(stream, name.removeprefix("stream."))
        if tuple(x.shape[-len(shape):]) != shape:
            raise ValueError(f"{name}: expected trailing dims {shape} (T, n, d_k, d_v from keys, probes and "
                             f"targets), got shape {tuple(x.shape)}")
        if x.device != stream.keys.device:
            raise ValueError(f"{name}: expected device {stream.keys.device} (the device of stream.keys), "
                             f"got {x.device}")


def _check_track(stream: DriftStream, rules: Sequence[str],
                 lr: float | Sequence[float]) -> dict[str, object]:
    """The arguments of :func:`track`: the rule names as a tuple and a list of one checked learning rate per
    rule."""
    if not isinstance(stream, DriftStream):
        raise TypeError(f"stream: expected a DriftStream, got {type(stream).__name__}")
    if isinstance(rules, str) or not isinstance(rules, Sequence) or len(rules) == 0:
        raise TypeError(f"rules: expected a non-empty sequence of rule names, got {rules!r}")
    names = tuple(_check_rule_name(r, "rules")["name"] for r in rules)
    single = isinstance(lr, numbers.Real) or (isinstance(lr, torch.Tensor) and lr.numel() == 1)
    rates: list[Any]                                                        # numbers, checked below
    if single:
        rates = [lr] * len(names)
    elif isinstance(lr, (Sequence, torch.Tensor)) and not isinstance(lr, str):
        rates = list(lr)
    else:
        raise TypeError(f"lr: expected a number or one number per rule ({len(names)}), got {type(lr).__name__}")
    if len(rates) != len(names):
        raise ValueError(f"lr: expected one learning rate or {len(names)} (one per rule), got {len(rates)}")
    checked = [check_lr("lr" if single else f"lr[{i}]", r, rule)
               for i, (r, rule) in enumerate(zip(rates, names, strict=True))]
    _check_stream(stream)
    return {"rules": names, "lr": checked}


@checked_by(_check_track)
def track(stream: DriftStream, rules: Sequence[str] = ("hebbian", "delta", "oja_subspace"),
          lr: float | Sequence[float] = 0.5, *, progress: bool = False) -> Tracking:
    """Run several learning rules side by side on the same stream and measure how well each tracks it.

    Every rule writes each pair ``(k_t, v_t)`` into its own memory, ``S ← S + η ΔS`` with
    ``ΔS`` from :data:`pavlovlab.memory.RULES` (hebbian ``v kᵀ``, delta ``(v − S k) kᵀ``, oja_subspace
    ``v (k − Sᵀv)ᵀ``, oja_clamped ``v kᵀ − diag(v∘v) S``), applied by :func:`pavlovlab.memory.step` to
    each rule's row of a stacked memory S (R, ..., d_v, d_k), so that all seeds advance together.
    After each write the memory is read with every key of the stream and compared with the keys'
    current values.

    Args:
        stream: a :class:`DriftStream` (keys (..., T, d_k), values (..., T, d_v)).
        rules: names from ``"hebbian"``, ``"delta"``, ``"oja_subspace"``, ``"oja_clamped"`` (R of them).
        lr: one learning rate η for every rule, or one per rule.
        progress: show a progress bar over the time steps.

    Returns:
        a :class:`Tracking` with cosine, gain, error and norm of shape (R, ..., T).
    """
    checked = cast(list[float | torch.Tensor], lr)                      # one rate per rule (the check)
    updates = [_FORMS[r] for r in rules]                       # resolved once, sizes checked once (the stream's)
    keys, values, probes = stream.keys, stream.values, stream.probes
    eta = torch.tensor(checked, dtype=keys.dtype, device=keys.device)
    R, T = len(rules), keys.shape[-2]
    lead = keys.shape[:-2]
    d_k, d_v = keys.shape[-1], values.shape[-1]
    shape = (R,) + (1,) * len(lead) + (1, 1)
    eta = eta.view(shape)
    S = keys.new_zeros(R, *lead, d_v, d_k)
    targets, active = stream.targets, stream.active.to(keys.dtype)
    history: list[torch.Tensor] = []  # the memories kept since the last measurement
    cosine, gain, error, norm = [], [], [], []

    def measure(start: int) -> None:
        """The metrics of the memories kept since ``start``, in one batched pass (no tiny matmuls per step)."""
        H = torch.stack(history, dim=-3)                                  # (R, ..., c, d_v, d_k)
        stop = start + len(history)
        reads = probes[..., None, :, :] @ H.mT                            # (R, ..., c, n, d_v): S_t k_i
        now, on = targets[..., start:stop, :, :], active[..., start:stop, :]
        dot, rr, tt = (reads * now).sum(-1), reads.square().sum(-1), now.square().sum(-1)
        count = on.sum(-1).clamp(min=1)
        cos = dot / (rr * tt).sqrt().clamp(min=1e-12)
        cosine.append((cos * on).sum(-1) / count)
        gain.append((dot / tt.clamp(min=1e-30) * on).sum(-1) / count)
        error.append(((rr - 2 * dot + tt).clamp(min=0) * on).sum(-1) / count)   # ‖S k_i − v_i‖²
        norm.append(torch.linalg.matrix_norm(H))
        history.clear()

    steps = range(T)
    if progress:
        from tqdm.auto import tqdm
        steps = tqdm(steps, desc="tracking", leave=False)
    for t in steps:  # the recurrence: each write depends on the memory the last one left
        k_t, v_t = keys[..., t, :], values[..., t, :]
        S = torch.stack([_step(S[i], k_t, v_t, u, checked[i], 1.0) for i, u in enumerate(updates)])  # a few rules

        history.append(S)
        if len(history) == _CHUNK:
            measure(t + 1 - _CHUNK)
    if history:
        measure(T - len(history))
    cat = lambda xs: torch.cat(xs, dim=-1)  # noqa: E731
    warn_nonfinite("track", S, "a memory diverged: with unit keys the delta rule needs lr <= 2, Oja a small lr")
    return Tracking(tuple(rules), eta.flatten(), cat(cosine), cat(gain), cat(error), cat(norm), S)


def _check_drift_times(cosine: torch.Tensor, drift_times: torch.Tensor | Sequence[int],
                       threshold: float) -> dict[str, list[int]]:
    """A tracking curve (..., T), a threshold and increasing drift times in [0, T) (returned as ints)."""
    check_tensor("cosine", cosine, min_rank=1)
    check_real("threshold", threshold)
    T = cosine.shape[-1]
    d = torch.as_tensor(drift_times) if not isinstance(drift_times, torch.Tensor) else drift_times
    if d.is_floating_point() or d.dtype == torch.bool or d.dim() != 1:
        raise TypeError(f"drift_times: expected whole numbers (n_drifts,) such as stream.drift_times, got dtype "
                        f"{d.dtype} of shape {tuple(d.shape)}")
    times = [int(t) for t in d.tolist()]
    if any(t < 0 or t >= T for t in times):
        raise ValueError(f"drift_times: expected times in [0, T = {T}) (T: the last dim of cosine), got {times}")
    if any(b <= a for a, b in itertools.pairwise(times)):
        raise ValueError(f"drift_times: expected increasing times, got {times}")
    return {"drift_times": times}


@checked_by(_check_drift_times)
def recovery_steps(cosine: torch.Tensor, drift_times: torch.Tensor, *, threshold: float = 0.95) -> torch.Tensor:
    """Steps after each drift until the tracking cosine first reaches ``threshold``.

    cosine: (..., T); drift_times: (n_drifts,) increasing whole numbers in [0, T), a tensor or a list. Looks
    from each drift up to the next one (or the end); returns (..., n_drifts) as floats, ``inf`` where the
    threshold is never reached.
    """
    times = cast(list[int], drift_times)                                # whole numbers (the check)
    T = cosine.shape[-1]
    if not times:                                                   # no drift: nothing to recover from
        return cosine.new_zeros(*cosine.shape[:-1], 0)
    ends = [*times[1:], T]
    out = []
    for start, end in zip(times, ends, strict=True):  # a handful of drifts: one masked search each
        window = cosine[..., start:end] >= threshold
        first = window.float().argmax(dim=-1).to(cosine.dtype)
        out.append(torch.where(window.any(dim=-1), first, torch.full_like(first, math.inf)))
    return torch.stack(out, dim=-1)


def _check_key_reuse(n_keys: int, d_k: int, d_v: int, rewrites: int, batch_shape: Sequence[int],
                     generator: torch.Generator | None, device: torch.device | str | None,
                     dtype: object) -> dict[str, object]:
    """The arguments of :func:`key_reuse_task` (:func:`_check_common` for its n_keys · rewrites writes), and its
    draws."""
    check_int("rewrites", rewrites, low=1)
    checked = _check_common(n_keys, d_k, d_v, n_keys * rewrites, batch_shape, False, device, dtype)
    batch = cast(torch.Size, checked["batch_shape"])
    _check_draws(generator, ((*batch, n_keys), d_k, "orthogonal" if n_keys <= d_k else "sphere"),
                 ((*batch, rewrites, n_keys), d_v, "sphere"))
    return checked


@checked_by(_check_key_reuse)
def key_reuse_task(n_keys: int = 16, d_k: int = 32, d_v: int = 32, rewrites: int = 4, *,
                   batch_shape: Sequence[int] = (), generator: torch.Generator | None = None,
                   device: torch.device | str | None = None,
                   dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """A recall task where each key is written several times with a new value: recall the latest.

    The writes are ``n_keys · rewrites`` pairs: every key once per round, each round in a random
    order, with a fresh random unit value each time. Then every key is used once as a query, and the
    memory should answer with the value written last with that key.

    Returns ``(k, v, q, latest)``: the writes k (..., L, d_k), v (..., L, d_v) with
    L = n_keys·rewrites, the queries q (..., n_keys, d_k) (the keys in a random order) and ``latest``
    (..., n_keys, d_v), the right answer for each query. Keys are orthonormal when n_keys ≤ d_k.
    """
    keys = _stream_keys(n_keys, d_k, batch_shape, n_keys <= d_k, generator, dtype)
    table = _random_keys(*batch_shape, rewrites, n_keys, d=d_v, kind="sphere", generator=generator,
                         dtype=torch.float64).to(dtype)
    idx = _shuffled_order(n_keys, n_keys * (rewrites + 1), batch_shape, generator)     # the rounds, then the queries
    write_idx, query_idx = idx[..., : n_keys * rewrites], idx[..., n_keys * rewrites:]
    rnd = torch.arange(n_keys * rewrites) // n_keys
    v = torch.gather(table[..., rnd, :, :], -2, write_idx[..., None, None].expand(*write_idx.shape, 1, d_v))[..., 0, :]
    k = torch.gather(keys, -2, write_idx[..., None].expand(*write_idx.shape, d_k))
    q = torch.gather(keys, -2, query_idx[..., None].expand(*query_idx.shape, d_k))
    latest = torch.gather(table[..., -1, :, :], -2, query_idx[..., None].expand(*query_idx.shape, d_v))
    k, v, q, latest = (x.to(device=device, dtype=dtype) for x in (k, v, q, latest))
    return k, v, q, latest
