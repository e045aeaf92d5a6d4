"""The associative memory: a matrix ``S`` of CS→US associations, written by a learning rule, read by ``S q``.

This is the conditioning circuit of the paper written out step by step. Each pair is a key
``k`` (the conditioned stimulus, CS: the bell) and a value ``v`` (the unconditioned stimulus, US:
the food); a query ``q`` (the test stimulus) reads the memory back as ``S q``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

import torch

from .._checks import (
    check_choice,
    check_device,
    check_dim,
    check_fits,
    check_float_dtype,
    check_int,
    check_output,
    check_real,
    check_real_tensor,
    check_shape,
    check_tensor,
    checked_by,
    unchecked,
    warn_nonfinite,
)

Rule = Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


def _check_pair(S: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
    """The sizes a rule needs: k (..., d_k) and v (..., d_v) against S (..., d_v, d_k)."""
    check_dim("k", k.shape[-1], S.shape[-1], "key dimension d_k (last dim of S)")
    check_dim("v", v.shape[-1], S.shape[-2], "value dimension d_v (dim -2 of S)")


BOUNDED_RULES = ("delta", "oja_subspace", "oja_clamped")
"""The rules whose memory stays bounded only for ``lr <= 2`` (unit keys for the delta rule, unit values for
the Oja forms): the bound is checked on ``lr``; beyond unit vectors a divergence warns (NonFiniteWarning)."""


def check_lr(name: str, lr: float | torch.Tensor, rule: str) -> float | torch.Tensor:
    """A learning rate η >= 0 for ``rule`` (a number, or a tensor of rates), with η <= 2 for
    :data:`BOUNDED_RULES`; returns it (a number as a float)."""
    high = 2.0 if rule in BOUNDED_RULES else None
    if isinstance(lr, torch.Tensor) and (lr.numel() != 1 or lr.requires_grad):
        check_real_tensor(name, lr, low=0.0)
        worst = float(lr.detach().max()) if lr.numel() else 0.0
    else:
        lr = check_real(name, lr, low=0.0)
        worst = lr
    if high is not None and worst > high:
        raise ValueError(f"{name}: expected a number <= 2 for the {rule} rule (beyond it each write overshoots: "
                         f"the factor 1 − lr·‖k‖² leaves [−1, 1] for unit keys), got {worst:g}")
    return lr


@checked_by(_check_pair)
def hebbian_update(S: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Hebb's rule, "fire together, wire together": ``ΔS = v kᵀ``. S: (..., d_v, d_k), k: (..., d_k), v: (..., d_v)."""
    return v[..., :, None] * k[..., None, :]


@checked_by(_check_pair)
def delta_update(S: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """The delta rule (Rescorla–Wagner, Widrow–Hoff): write the prediction error, ``ΔS = (v − S k) kᵀ``."""
    error = v - (S @ k[..., :, None])[..., 0]
    return error[..., :, None] * k[..., None, :]


@checked_by(_check_pair)
def oja_subspace_update(S: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """The supervised form of Oja's subspace rule (Oja 1989): ``ΔS = v (k − Sᵀ v)ᵀ``.

    Oja's subspace rule for a layer ``y = S x`` is ``ΔS = y (x − Sᵀ y)ᵀ``: Hebb's ``y xᵀ`` minus a
    homeostatic term ``y yᵀ S`` that keeps the rows of S from growing. Here the output y is clamped
    to the teacher value v and the input x is the key k. Written for ``Sᵀ`` it is the delta rule run
    backwards, ``ΔSᵀ = (k − Sᵀ v) vᵀ``: Sᵀ learns to reconstruct the key from the value, and the
    memory is read forwards, ``S q``. Fixed points (derived in notebook 06):

    - one pair (k, v) written again and again: ``Sᵀ v = k`` and, starting from S = 0,
      ``S = v kᵀ / ‖v‖²``, so ``S k = v ‖k‖² / ‖v‖²`` (exact direction, gain 1/‖v‖² for a unit key);
    - orthonormal keys K (d_k, n) with values V (d_v, n) of full column rank, presented equally often:
      ``S = V (VᵀV)⁻¹ Kᵀ``, so ``vᵢ · S kᵢ = 1`` and ``‖S‖_F² = tr (VᵀV)⁻¹`` (bounded by the smallest
      singular value of V, not by the size of the stream).

    Stable while ``lr · ‖v‖² < 2`` (the delta rule's condition with the roles of k and v swapped).
    S: (..., d_v, d_k), k: (..., d_k), v: (..., d_v) -> ΔS (..., d_v, d_k).
    """
    Stv = (v[..., :, None] * S).sum(-2)                       # Sᵀ v: (..., d_k)
    return v[..., :, None] * (k - Stv)[..., None, :]


@checked_by(_check_pair)
def oja_clamped_update(S: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Oja's single-unit rule applied to each output unit with its output clamped to the teacher:
    ``ΔS = v kᵀ − diag(v∘v) S`` (the rule this course used before; kept as a counter-example).

    Its fixed point distorts recall: for one pair written again and again ``S k = 1/v`` elementwise
    (v = (1, 0.5, −0.25, 0.05) gives S k = (1, 2, −4, 20)); for orthonormal keys presented equally
    often ``S kᵢ = vᵢ / Σⱼ vⱼ∘vⱼ`` elementwise, so every output unit is rescaled by its own energy
    and the norm bound grows as 1/min |v_a|. S: (..., d_v, d_k), k: (..., d_k), v: (..., d_v).
    """
    return v[..., :, None] * k[..., None, :] - (v * v)[..., :, None] * S


RULES: dict[str, Rule] = {"hebbian": hebbian_update, "delta": delta_update, "oja_subspace": oja_subspace_update,
                          "oja_clamped": oja_clamped_update}
"""The memory's learning rules by name, ``ΔS(S, k, v)`` (distinct from ``conditioning.SIMULATORS``, which run
whole conditioning experiments on CS strengths)."""


_FORMS: dict[str, Rule] = {name: unchecked(rule) for name, rule in RULES.items()}
"""The rules of :data:`RULES` without the size check, for the recurrences whose sizes are checked once at their
door (a write's k and v against S)."""


def _check_rule_name(name: object, argument: str = "rule") -> dict[str, str]:
    """A rule's name, checked against :data:`RULES` (ValueError naming ``argument`` for an unknown one)."""
    return {"name": check_choice(argument, name, RULES)}


@checked_by(_check_rule_name)
def resolve_rule(name: object, argument: str = "rule") -> str:
    """The rule name, checked against :data:`RULES`; ValueError naming ``argument`` for an unknown one."""
    return cast(str, name)                                              # a name of RULES (the check)


def _check_step(S: torch.Tensor, k: torch.Tensor, v: torch.Tensor, rule: str | Rule, lr: float | torch.Tensor,
                decay: float | torch.Tensor) -> dict[str, Rule]:
    """The arguments of :func:`step`; the rule made the update to apply (see :func:`_check_rule`)."""
    if not isinstance(rule, str) and not callable(rule):
        raise TypeError(f"rule: expected a name of memory.RULES or a callable (S, k, v) -> ΔS, got "
                        f"{type(rule).__name__} {rule!r} (lr and decay are keyword arguments: step(S, k, v, rule, "
                        "lr=…))")
    for name, x, high in (("lr", lr, None), ("decay", decay, 1.0)):
        if isinstance(x, torch.Tensor):
            check_real_tensor(name, x, low=0.0, high=high)
        else:
            check_real(name, x, low=0.0, high=high)
    update = _check_rule(rule)
    if update in _FORMS.values():
        _check_pair(S, k, v)
    return {"rule": update}


@checked_by(_check_step, nonfinite="a custom rule returned NaN/inf, or very large S, k, v or lr overflow the dtype")
def step(S: torch.Tensor, k: torch.Tensor, v: torch.Tensor, rule: str | Rule, *,
         lr: float | torch.Tensor = 1.0, decay: float | torch.Tensor = 1.0) -> torch.Tensor:
    """One write of the conditioning circuit, ``S ← γ S + η ΔS(S, k, v)``: the update every recurrent user of
    the memory rules shares (:meth:`AssociativeMemory.run`, :func:`pavlovlab.forgetting.drift.track`).

    Args:
        S: (..., d_v, d_k) the memory; k: (..., d_k); v: (..., d_v).
        rule: a name of :data:`RULES` or a callable ``(S, k, v) -> ΔS`` (the output of a callable that
            is not one of :data:`RULES` is checked against S's shape, dtype and device).
        lr: η >= 0, a float or a tensor broadcasting against S (finite: checked).
        decay: γ in [0, 1], likewise (1 keeps everything).
    Returns:
        the new S, same shape.
    """
    return _step(S, k, v, cast(Rule, rule), lr, decay)  # rule: made the update to apply by the check


def _check_rule(rule: str | Rule) -> Rule:
    """The update ΔS(S, k, v) a rule stands for: a named rule (or one of :data:`RULES`) as its bare form, whose
    caller checks the sizes; any other callable wrapped so that what it returns is checked against S's shape,
    dtype and device at every write (a user's function can return anything)."""
    if isinstance(rule, str):
        return _FORMS[_check_rule_name(rule)["name"]]
    for name, public in RULES.items():
        if rule is public:
            return _FORMS[name]

    def check_rule_output(S: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return check_output("rule", rule(S, k, v), S.shape, S)

    return check_rule_output


def _step(S: torch.Tensor, k: torch.Tensor, v: torch.Tensor, update: Rule, lr: float | torch.Tensor,
          decay: float | torch.Tensor) -> torch.Tensor:
    """:func:`step` on checked arguments (a recurrence checks its rates once, not at every write)."""
    dS = update(S, k, v)
    return S + lr * dS if isinstance(decay, (int, float)) and decay == 1 else decay * S + lr * dS


def _check_memory(d_key: int, d_value: int, rule: str | Rule, lr: float, decay: float, batch_shape: Sequence[int],
                  device: torch.device | str | None, dtype: torch.dtype
                  ) -> dict[str, object]:
    """The arguments of :class:`AssociativeMemory`, with the memory checked to fit in the device's memory: the
    sizes as ints, the rule's name checked, the batch shape as a ``torch.Size``."""
    d_key = check_int("d_key", d_key, low=1)
    d_value = check_int("d_value", d_value, low=1)
    rule_name = getattr(rule, "__name__", "custom") if callable(rule) else _check_rule_name(rule)["name"]
    checked_lr = check_lr("lr", lr, rule_name)
    decay = check_real("decay", decay, low=0.0, high=1.0)
    dtype = check_float_dtype("dtype", dtype, allow_none=False)
    batch = torch.Size(check_shape("batch_shape", batch_shape))
    checked_device = check_device("device", device)
    check_fits("S", (*batch, d_value, d_key), dtype, checked_device, "batch × d_value × d_key")
    return {"d_key": d_key, "d_value": d_value, "rule": rule if callable(rule) else rule_name, "lr": checked_lr,
            "decay": decay, "batch_shape": batch, "device": checked_device, "dtype": dtype}


def _check_query(self: AssociativeMemory, q: torch.Tensor) -> None:
    """The query of :meth:`AssociativeMemory.read`: one key (*batch, d_key) or n of them (*batch, n, d_key), of
    the memory's dtype and device."""
    self._check_item("q", q, self.d_key, "key dimension d_key")


def _check_run(self: AssociativeMemory, k: torch.Tensor, v: torch.Tensor, q: torch.Tensor | None,
               lr: float | torch.Tensor | None) -> dict[str, object]:
    """The arguments of :meth:`AssociativeMemory.run`: k and v as sequences (*batch, T, d) and ``lr`` as the rate
    of the call (the memory's when None)."""
    return self._check_run(k, v, q, lr)


class AssociativeMemory:
    """A batch of associative memories ``S: (*batch_shape, d_value, d_key)``.

    Each write applies ``S ← decay·S + lr·ΔS(S, k, v)`` with the rule's ``ΔS``:

    - ``"hebbian"``: ``v kᵀ`` (linear attention's write);
    - ``"delta"``: ``(v − S k) kᵀ`` (Rescorla–Wagner; DeltaNet when ``lr = β``);
    - ``"oja_subspace"``: ``v (k − Sᵀv)ᵀ`` (Oja's subspace rule with the output clamped to v: bounded norm,
      recall ``S k = v/‖v‖²`` for one pair);
    - ``"oja_clamped"``: ``v kᵀ − diag(v∘v) S`` (Oja's single-unit rule per output unit: bounded but
      distorted, ``S k = 1/v`` for one pair);
    - or any callable ``(S, k, v) -> ΔS``.

    ``lr`` must be <= 2 for the delta and Oja rules (the bound on unit keys/values, :data:`BOUNDED_RULES`); a
    memory of ``batch × d_value × d_key`` entries that cannot fit in the device's memory is refused before
    anything is allocated. A read is ``S q``. Example::

        mem = AssociativeMemory(8, 4)
        mem.write(k, v)          # k: (8,), v: (4,)  or a sequence k: (T, 8), v: (T, 4)
        mem.read(k)              # ≈ v when the keys are orthonormal
    """

    @checked_by(_check_memory)
    def __init__(self, d_key: int, d_value: int, *, rule: str | Rule = "hebbian", lr: float = 1.0,
                 decay: float = 1.0, batch_shape: Sequence[int] = (), device: torch.device | str | None = None,
                 dtype: torch.dtype = torch.float32) -> None:
        self.d_key, self.d_value, self.lr, self.decay, self.batch_shape = d_key, d_value, lr, decay, batch_shape
        self.rule_name = getattr(rule, "__name__", "custom") if callable(rule) else rule
        self.rule = rule if callable(rule) else RULES[rule]
        self._update = _check_rule(self.rule)
        self.S = torch.zeros(*self.batch_shape, d_value, d_key, device=device, dtype=dtype)

    def __repr__(self) -> str:
        return (f"AssociativeMemory(d_key={self.d_key}, d_value={self.d_value}, rule={self.rule_name!r}, "
                f"lr={self.lr}, decay={self.decay}, batch_shape={tuple(self.batch_shape)})")

    def reset(self) -> None:
        """Forget everything: ``S ← 0``."""
        self.S.zero_()

    def _check_item(self, name: str, x: object, d: int, what: str) -> bool:
        """Check a key/value/query tensor; return True for a sequence (..., T, d), False for one (..., d)."""
        x = check_tensor(name, x, min_rank=1)
        if x.dtype != self.S.dtype or x.device != self.S.device:
            raise TypeError(f"{name}: expected dtype {self.S.dtype} on {self.S.device} (the memory's), "
                            f"got {x.dtype} on {x.device}")
        check_dim(name, x.shape[-1], d, what)
        B = len(self.batch_shape)
        if x.dim() not in (B + 1, B + 2):
            raise ValueError(f"{name}: expected shape {(*self.batch_shape, d)} (one item) or "
                             f"{(*self.batch_shape, 'T', d)} (a sequence), got {tuple(x.shape)}")
        return x.dim() == B + 2

    def _check_rate(self, lr: float | torch.Tensor | None, T: int) -> torch.Tensor | float:
        """The learning rate of one call: the memory's, a float, or a tensor broadcasting to (*batch_shape, T)."""
        if lr is None:
            return self.lr
        if isinstance(lr, torch.Tensor) and lr.numel() != 1:
            want = (*self.batch_shape, T)
            fits = lr.dim() <= len(want) and all(a in (1, b) for a, b in zip(lr.shape[::-1], want[::-1], strict=False))
            if not fits:
                raise ValueError(f"lr: expected a tensor broadcasting to (*batch_shape, T) = {want}, got shape "
                                 f"{tuple(lr.shape)}")
            check_lr("lr", lr, self.rule_name)
            return lr.to(self.S).expand(*want)
        return check_lr("lr", lr, self.rule_name)

    def write(self, k: torch.Tensor, v: torch.Tensor, *, lr: float | torch.Tensor | None = None) -> None:
        """Store one pair (k: (*batch, d_key), v: (*batch, d_value)) or a sequence of pairs
        ((*batch, T, d_key), (*batch, T, d_value)), written in order. ``lr`` overrides the memory's
        learning rate for this call: a float, or a tensor (*batch, T) with one rate per pair."""
        self.run(k, v, None, lr=lr)

    @checked_by(_check_query)
    def read(self, q: torch.Tensor) -> torch.Tensor:
        """Recall ``S q``: q (*batch, d_key) -> (*batch, d_value), or (*batch, n, d_key) -> (*batch, n, d_value).
        A read-out that is NaN/inf for a finite q warns once (NonFiniteWarning)."""
        many = q.dim() == len(self.batch_shape) + 2
        out = q @ self.S.mT if many else (self.S @ q[..., :, None])[..., 0]
        return warn_nonfinite(f"AssociativeMemory.read(rule={self.rule_name!r})", out, "the memory or the read-out "
                              "S q overflows the dtype: very large or unnormalised keys and values, or a diverged "
                              "memory")

    @checked_by(_check_run)
    def run(self, k: torch.Tensor, v: torch.Tensor, q: torch.Tensor | None, *,
            lr: float | torch.Tensor | None = None) -> torch.Tensor | None:
        """The conditioning circuit over a sequence: for each t, write (k_t, v_t) then read ``S_t q_t``.

        k: (*batch, T, d_key), v: (*batch, T, d_value), q: (*batch, T, d_key) or None.
        Returns the reads (*batch, T, d_value), or None when ``q`` is None.
        """
        T = k.shape[-2]
        reads = []
        for t in range(T):  # the recurrence itself: each write depends on the state left by the last
            r = lr[..., t, None, None] if isinstance(lr, torch.Tensor) else cast(float, lr)  # set by the check
            self.S = _step(self.S, k[..., t, :], v[..., t, :], self._update, r, self.decay)
            if q is not None:
                reads.append((self.S @ q[..., t, :, None])[..., 0])
        warn_nonfinite(f"AssociativeMemory(rule={self.rule_name!r})", self.S, "the memory diverged: unnormalised keys "
                       "or a large lr make the delta rule's factor 1 − lr·‖k‖² leave [−1, 1]")
        if q is None:
            return None
        return torch.stack(reads, dim=-2) if reads else self.S.new_zeros(*self.S.shape[:-2], 0, self.d_value)

    def _check_run(self, k: torch.Tensor, v: torch.Tensor, q: torch.Tensor | None,
                   lr: float | torch.Tensor | None) -> dict[str, object]:
        """The arguments of :meth:`run`; returns k and v as sequences (*batch, T, d) and the rate of the call."""
        seq = self._check_item("k", k, self.d_key, "key dimension d_key")
        if self._check_item("v", v, self.d_value, "value dimension d_value") != seq:
            raise ValueError(f"v: expected the same layout as k {tuple(k.shape)}, got {tuple(v.shape)}")
        if not seq:
            k, v = k[..., None, :], v[..., None, :]
        T = k.shape[-2]
        check_dim("v", v.shape[-2], T, "sequence length T (dim -2 of k)")
        if q is not None and not (self._check_item("q", q, self.d_key, "key dimension d_key") and q.shape[-2] == T):
            raise ValueError(f"q: expected shape {(*self.batch_shape, T, self.d_key)}, got {tuple(q.shape)}")
        return {"k": k, "v": v, "lr": self._check_rate(lr, T)}


__all__ = ["RULES", "AssociativeMemory", "delta_update", "hebbian_update", "oja_clamped_update", "oja_subspace_update",
           "resolve_rule", "step"]
