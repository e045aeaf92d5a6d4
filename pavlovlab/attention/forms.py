"""Attention in every form: softmax, causal linear attention (the conditioning circuit) and the delta rule.

Notation follows the paper (arXiv:2508.08289): keys are conditioned stimuli (CS), values are
unconditioned stimuli (US), queries are test stimuli. Shapes: ``q, k: (..., T, d_k)``,
``v: (..., T, d_v)``; any leading dims (batch, heads) broadcast. The memory (state) is the paper's
matrix ``S = Σ v kᵀ`` of shape ``(..., d_v, d_k)``, read as ``S q``.

Each algorithm comes in forms that compute the same numbers: ``"parallel"`` (one masked matrix product),
``"recurrent"`` (the explicit loop over time that updates ``S``: the circuit as written in the paper) and
``"chunk"`` (chunkwise: masked products inside chunks of ``chunk_size`` tokens plus a state carried from chunk
to chunk). The public functions here check their inputs once, then call a form: the recurrent and parallel
forms are the literal ones of :mod:`pavlovlab.attention.literal`; the chunk forms are the fast kernels of
:mod:`pavlovlab.attention.kernels`, which check nothing, so that a caller whose inputs are valid by
construction (``models.Block``) calls them directly.

Edge cases, the same in every form: ``T = 0`` gives an empty ``(..., 0, d_v)`` output (and the initial
state back); a ``chunk_size`` larger than ``T`` is clamped to ``T``. Non-finite inputs raise; a result
that becomes non-finite from finite inputs warns once (``pavlovlab._checks``' non-finite policy).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, cast, overload

import torch
import torch.nn.functional as F

from .._checks import (
    broadcast_lead,
    check_choice,
    check_dim,
    check_fits,
    check_int,
    check_output,
    check_real,
    check_real_tensor,
    check_same_kind,
    check_tensor,
    checked_by,
)
from . import literal
from .kernels import delta_chunk_kernel, linear_chunk_kernel

Tensor = torch.Tensor
FeatureMap = str | Callable[[torch.Tensor], torch.Tensor]
EPS = 1e-6
"""Added to the normaliser ``φ(q)·z`` of normalised linear attention."""

FEATURE_MAPS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "identity": lambda x: x,
    "elu1": lambda x: F.elu(x) + 1.0,
    "relu": F.relu,
}
"""The feature maps φ that ``linear_attention(feature_map=...)`` names: identity (the Hebbian circuit as it is),
``elu(x) + 1`` and ``relu`` (positive maps, which the normaliser needs)."""
LINEAR_MODES = ("parallel", "recurrent", "chunk")
DELTA_MODES = ("recurrent", "chunk")
GATED_MODES = ("parallel", "recurrent")
POSITIVE_MAPS = ("elu1", "relu")
"""Feature maps with non-negative outputs: the only ones ``normalize=True`` accepts among the named maps."""
BETA_MAX = 2.0
"""The delta rule's bound: with unit keys, ``I − β k kᵀ`` is a contraction for 0 < β < 2 (a reflection at 2)."""
LOW_PRECISION = (torch.float16, torch.bfloat16)


# ------------------------------------------------------------------------------------------------ checks
def _check_qkv(q: object, k: object, v: object, *, same_length: bool = True) -> torch.Size:
    """Validate the kinds and shapes of q, k, v and return the broadcast leading shape. Their values are
    checked with the result once the form has run (``checked_by(..., finite=("q", "k", "v"))``: one reduction
    per tensor, one synchronisation)."""
    q = check_tensor("q", q, min_rank=2, finite=False)
    k = check_tensor("k", k, min_rank=2, finite=False)
    v = check_tensor("v", v, min_rank=2, finite=False)
    check_same_kind(q=q, k=k, v=v)
    check_dim("k", k.shape[-1], q.shape[-1], "key dimension d_k (last dim of q)")
    check_dim("v", v.shape[-2], k.shape[-2], "sequence length T (dim -2 of k)")
    if same_length:
        check_dim("q", q.shape[-2], k.shape[-2], "sequence length T (dim -2 of k, causal attention)")
    return broadcast_lead(q=q.shape[:-2], k=k.shape[:-2], v=v.shape[:-2])


def _check_state(name: str, state: object, shape: tuple[int, ...], like: torch.Tensor,
                 lead: torch.Size) -> torch.Tensor:
    """A state tensor of trailing ``shape``, like ``like``'s dtype and device, whose leading dims broadcast
    to ``lead`` (the batch/head dims of q, k, v); returned expanded to ``lead + shape``."""
    state = check_tensor(name, state, min_rank=len(shape))
    check_same_kind(q=like, **{name: state})
    if tuple(state.shape[state.dim() - len(shape):]) != shape:
        raise ValueError(f"{name}: expected trailing shape {shape}, got shape {tuple(state.shape)}")
    extra = tuple(state.shape[:state.dim() - len(shape)])
    try:
        fits = torch.broadcast_shapes(extra, tuple(lead)) == tuple(lead)
    except RuntimeError:
        fits = False
    if not fits:
        raise ValueError(f"{name}: expected leading dims that broadcast to the batch/head dims {tuple(lead)} "
                         f"of q, k, v, got shape {tuple(state.shape)}")
    return state.expand(*lead, *shape)


def _check_quadratic(mode: str, lead: torch.Size, T: int, chunk_size: int, like: torch.Tensor) -> None:
    """Refuse up front the score matrices a form cannot hold: T × T per batch/head in ``"parallel"`` mode, a
    C × C block per chunk (C = min(chunk_size, T)) in ``"chunk"`` mode; the recurrent form has none."""
    if mode == "parallel":
        check_fits("mode", (*lead, T, T), like.dtype, like.device, "the parallel form's scores, batch × T × T",
                   "mode='chunk' needs memory linear in T")
    elif mode == "chunk" and T:
        C = min(chunk_size, T)
        check_fits("chunk_size", (*lead, -(-T // C), C, C), like.dtype, like.device,
                   "the chunks' scores, batch × chunks × chunk_size²", "choose a smaller chunk_size (e.g. 64)")


def _check_softmax(q: Tensor, k: Tensor, v: Tensor, causal: object, scale: object) -> dict[str, float | None]:
    """softmax_attention's arguments; the scale as a float (None: 1/√d_k). Their values are checked with the
    result."""
    if all(isinstance(x, torch.Tensor) and x.dim() >= 2 for x in (q, k)) and k.shape[-2] == 0 < q.shape[-2]:
        raise ValueError(f"k: expected at least one key for {q.shape[-2]} queries (a softmax over zero keys is "
                         f"undefined), got shape {tuple(k.shape)}")
    if not isinstance(causal, bool):
        raise TypeError(f"causal: expected True or False, got {type(causal).__name__} {causal!r}")
    lead = _check_qkv(q, k, v, same_length=causal)
    check_fits("k", (*lead, q.shape[-2], k.shape[-2]), q.dtype, q.device, "the scores, batch × T_q × T",
               "softmax attention is quadratic in T: attend over shorter sequences or linear_attention(mode='chunk')")
    checked = None if scale is None else check_real("scale", scale, low=0.0, low_open=True)
    if checked is None and q.shape[-1] == 0:
        raise ValueError("q: expected a key dimension d_k >= 1 for the default scale 1/√d_k, got shape "
                         f"{tuple(q.shape)} (pass scale to attend with d_k = 0)")
    return {"scale": checked}


def _check_feature_map(feature_map: object, normalize: object) -> None:
    """The feature map by name or as a callable, checked against ``normalize`` (a callable's values are checked
    where the form applies it, :func:`_check_mapped`)."""
    if not isinstance(normalize, bool):
        raise TypeError(f"normalize: expected True or False, got {type(normalize).__name__}")
    if normalize and isinstance(feature_map, str) and feature_map not in POSITIVE_MAPS and feature_map in FEATURE_MAPS:
        raise ValueError("feature_map: normalize=True needs a non-negative feature map "
                         f"({' or '.join(map(repr, POSITIVE_MAPS))}); "
                         f"with {feature_map!r} the normaliser φ(q)·z crosses 0 and the output explodes")
    if not callable(feature_map) and not isinstance(feature_map, str):
        raise TypeError(f"feature_map: expected one of {list(FEATURE_MAPS)} or a callable, "
                        f"got {type(feature_map).__name__}")
    if isinstance(feature_map, str):
        check_choice("feature_map", feature_map, FEATURE_MAPS)


def _check_mapped(feature_map: FeatureMap, normalize: bool, q: Tensor, k: Tensor) -> tuple[Tensor, Tensor]:
    """``(φ(q), φ(k))``; a callable's values are checked as they come: a tensor of its input's shape, dtype and
    device, and non-negative when normalising."""
    if not callable(feature_map):
        phi = FEATURE_MAPS[feature_map]
        return phi(q), phi(k)
    fq = check_output("feature_map", feature_map(q), q.shape, q)
    fk = check_output("feature_map", feature_map(k), k.shape, k)
    if normalize and (bool((fq < 0).any()) or bool((fk < 0).any())):
        raise ValueError("feature_map: normalize=True needs a non-negative feature map; the callable returned "
                         "negative values, so the normaliser φ(q)·z can cross 0")
    return fq, fk


def _check_decay(decay: object, lead: torch.Size, like: torch.Tensor) -> None:
    """γ: None (no decay), a float or a tensor that broadcasts to the leading dims ``lead``, in [0, 1] in the
    dtype of ``like``."""
    if isinstance(decay, torch.Tensor):
        check_real_tensor("decay", decay.to(dtype=like.dtype, device=like.device), low=0.0, high=1.0)
        try:
            decay.expand(lead)
        except RuntimeError:
            raise ValueError(f"decay: expected a float or a tensor that broadcasts to the leading dims "
                             f"{tuple(lead)}, got shape {tuple(decay.shape)}") from None
    elif decay is not None:
        check_real("decay", decay, low=0.0, high=1.0)


def _decay(decay: float | Tensor | None, lead: torch.Size, like: torch.Tensor) -> Tensor | None:
    """γ as a tensor of shape ``lead + (1, 1)`` in the dtype and on the device of ``like`` (None: no decay)."""
    if decay is None:
        return None
    if isinstance(decay, torch.Tensor):
        gamma = decay.to(dtype=like.dtype, device=like.device).expand(lead)
    else:
        gamma = torch.full(lead, float(decay), dtype=like.dtype, device=like.device)
    return gamma[..., None, None]


def _check_linear(q: Tensor, k: Tensor, v: Tensor, feature_map: object, normalize: object, decay: object,
                  mode: object, chunk_size: object, initial_state: object) -> dict[str, int]:
    """linear_attention's arguments (the chunk size returned as an int). Their values are checked with the
    result."""
    lead = _check_qkv(q, k, v)
    mode = check_choice("mode", mode, LINEAR_MODES)
    chunk_size = check_int("chunk_size", chunk_size, low=1)
    _check_feature_map(feature_map, normalize)
    d_k, d_v = q.shape[-1], v.shape[-1]
    _check_decay(decay, lead, q)
    if initial_state is not None and normalize:
        if not (isinstance(initial_state, tuple) and len(initial_state) == 2):
            raise TypeError("initial_state: expected the pair (S_0, z_0) when normalize=True, "
                            f"got {type(initial_state).__name__}")
        _check_state("initial_state[0]", initial_state[0], (d_v, d_k), q, lead)
        _check_state("initial_state[1]", initial_state[1], (d_k,), q, lead)
    elif initial_state is not None:
        _check_state("initial_state", initial_state, (d_v, d_k), q, lead)
    _check_quadratic(mode, lead, q.shape[-2], chunk_size, q)
    return {"chunk_size": chunk_size}


def _linear_cause(given: Mapping[str, Any]) -> str:
    """Why linear_attention's result became NaN/inf from finite q, k, v."""
    fm = given["feature_map"]
    phi = fm if callable(fm) else FEATURE_MAPS[fm]
    if not all(bool(torch.isfinite(phi(given[x])).all()) for x in ("q", "k")):
        return "the feature map returned NaN/inf values for finite q, k"
    return "very large q, k or v overflow the dtype"


def _check_gated(q: Tensor, k: Tensor, v: Tensor, g: object, mode: object,
                 initial_state: object) -> dict[str, object]:
    """scalar_gated_linear_attention's arguments: q, k, v and g expanded to their common leading dims, S_0
    (zeros when None) likewise. Their values are checked with the result."""
    lead = _check_qkv(q, k, v)
    g = check_tensor("g", g, min_rank=1)
    check_same_kind(q=q, g=g)
    T = k.shape[-2]
    check_dim("g", g.shape[-1], T, "sequence length T (last dim of g)")
    check_real_tensor("g", g, high=1.0)
    if bool((g <= 0).any()):
        raise ValueError(f"g: expected gates in (0, 1], got a minimum of {g.min().item():.4g}")
    mode = check_choice("mode", mode, GATED_MODES)
    lead = broadcast_lead(qkv=lead, g=g.shape[:-1])
    _check_quadratic(mode, lead, T, T, q)
    d_k, d_v = q.shape[-1], v.shape[-1]
    q, k, v = (x.expand(*lead, *x.shape[-2:]) for x in (q, k, v))
    S0 = q.new_zeros(*lead, d_v, d_k) if initial_state is None else \
        _check_state("initial_state", initial_state, (d_v, d_k), q, lead)
    return {"q": q, "k": k, "v": v, "g": g.expand(*lead, T), "initial_state": S0}


def _check_delta(q: Tensor, k: Tensor, v: Tensor, beta: object, mode: object, chunk_size: object,
                 initial_state: object) -> dict[str, object]:
    """delta_rule_attention's arguments: β as a tensor (..., T), the chunk size as an int and S_0 (zeros when None)
    expanded to the common leading dims of q, k, v and β; the chunks' scores checked to fit (an empty memory has
    none). Their values are checked with the result."""
    lead = _check_qkv(q, k, v)
    mode = check_choice("mode", mode, DELTA_MODES)
    chunk_size = check_int("chunk_size", chunk_size, low=1)
    T = q.shape[-2]
    if isinstance(beta, torch.Tensor):
        check_tensor("beta", beta, min_rank=1)
        check_same_kind(q=q, beta=beta)
        check_dim("beta", beta.shape[-1], T, "sequence length T (last dim of beta)")
        check_real_tensor("beta", beta, low=0.0, high=BETA_MAX)
        lead = broadcast_lead(qkv=lead, beta=beta.shape[:-1])
    else:
        beta = torch.full((T,), check_real("beta", beta, low=0.0, high=BETA_MAX), dtype=q.dtype, device=q.device)
    d_k, d_v = q.shape[-1], v.shape[-1]
    S0 = q.new_zeros(*lead, d_v, d_k) if initial_state is None else \
        _check_state("initial_state", initial_state, (d_v, d_k), q, lead)
    if d_k and d_v:
        _check_quadratic(mode, lead, T, chunk_size, q.float() if q.dtype in LOW_PRECISION else q)
    return {"beta": beta, "chunk_size": chunk_size, "initial_state": S0}


# ------------------------------------------------------------------------------------------ public forms
@checked_by(_check_softmax, nonfinite="very large q or k overflow the scores", finite=("q", "k", "v"))
def softmax_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, causal: bool = True,
                      scale: float | None = None) -> torch.Tensor:
    """Softmax attention ``o_t = Σ_s softmax_s(scale · q_t·k_s) v_s`` (``s ≤ t`` when causal).

    q: (..., T_q, d_k), k: (..., T, d_k), v: (..., T, d_v) -> (..., T_q, d_v). ``scale`` defaults to
    ``1/√d_k``. Causal attention needs ``T_q = T``. Cost O(T² d): every query scores every key.
    """
    return literal.softmax_parallel(q, k, v, causal, scale)


# The overloads say what a call returns: the output alone, or with ``return_state=True`` the output and state.
@overload
def linear_attention(q: Tensor, k: Tensor, v: Tensor, *, feature_map: FeatureMap = ..., normalize: bool = ...,
                     decay: float | Tensor | None = ..., mode: str = ..., chunk_size: int = ...,
                     initial_state: Tensor | tuple[Tensor, Tensor] | None = ...,
                     return_state: Literal[False] = ...) -> Tensor: ...
@overload
def linear_attention(q: Tensor, k: Tensor, v: Tensor, *, feature_map: FeatureMap = ..., normalize: bool = ...,
                     decay: float | Tensor | None = ..., mode: str = ..., chunk_size: int = ...,
                     initial_state: Tensor | tuple[Tensor, Tensor] | None = ...,
                     return_state: Literal[True]) -> tuple[Tensor, ...]: ...
@overload
def linear_attention(q: Tensor, k: Tensor, v: Tensor, *, feature_map: FeatureMap = ..., normalize: bool = ...,
                     decay: float | Tensor | None = ..., mode: str = ..., chunk_size: int = ...,
                     initial_state: Tensor | tuple[Tensor, Tensor] | None = ...,
                     return_state: bool) -> Tensor | tuple[Tensor, ...]: ...
@checked_by(_check_linear, nonfinite=_linear_cause, finite=("q", "k", "v"))
def linear_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, feature_map: FeatureMap = "identity",
                     normalize: bool = False, decay: float | torch.Tensor | None = None, mode: str = "chunk",
                     chunk_size: int = 64,
                     initial_state: torch.Tensor | tuple[torch.Tensor, torch.Tensor] | None = None,
                     return_state: bool = False) -> torch.Tensor | tuple[torch.Tensor, ...]:
    """Causal linear attention: the Pavlovian conditioning circuit.

    With φ the feature map and γ the decay (None: γ = 1)::

        S_t = γ S_{t-1} + v_t φ(k_t)ᵀ          (write: the CS–US association, Hebb's rule)
        o_t = S_t φ(q_t)                       (read: the test stimulus probes the memory)

    so that ``o_t = Σ_{s≤t} γ^{t-s} (φ(q_t)·φ(k_s)) v_s``: softmax attention with the exponential
    replaced by a dot product. With ``normalize=True`` the output is divided by ``φ(q_t)·z_t + EPS``
    with ``z_t = γ z_{t-1} + φ(k_t)``; that needs a non-negative feature map (``"elu1"``, ``"relu"``
    or a callable whose values are ≥ 0): with ``"identity"`` the normaliser crosses 0 and the output
    explodes, so that combination raises.

    Args:
        q, k: (..., T, d_k); v: (..., T, d_v); leading dims broadcast.
        feature_map: ``"identity"``, ``"elu1"`` (elu(x)+1), ``"relu"`` or a callable applied to q and k.
        decay: γ in [0, 1], a float or a tensor broadcasting to the leading dims (one γ per head).
        mode: ``"parallel"`` (masked ``(φ(Q)φ(K)ᵀ ⊙ D) V`` with ``D_ts = γ^(t−s)``), ``"recurrent"``
            (a loop over t updating S) or ``"chunk"`` (chunkwise, ``chunk_size`` tokens per chunk).
        initial_state: S_0 of shape (..., d_v, d_k), or the pair (S_0, z_0) with z_0: (..., d_k) when
            normalising; a state returned earlier resumes the sequence.
        return_state: also return the final state.

    Returns:
        o: (..., T, d_v); with ``return_state``: ``(o, S_T)``, or ``(o, S_T, z_T)`` when normalising.

    >>> o = linear_attention(q, k, v, mode="parallel")  # same numbers as mode="recurrent"
    """
    lead = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    d_k, d_v = q.shape[-1], v.shape[-1]
    fq, fk = _check_mapped(feature_map, normalize, q, k)
    fq, fk, w = (x.expand(*lead, *x.shape[-2:]) for x in (fq, fk, v))
    if normalize:  # z rides along as an extra value row
        S0, z0 = initial_state if isinstance(initial_state, tuple) else (q.new_zeros(d_v, d_k), q.new_zeros(d_k))
        S0 = torch.cat([S0.expand(*lead, d_v, d_k), z0.expand(*lead, d_k)[..., None, :]], dim=-2)
        w = torch.cat([w, torch.ones_like(w[..., :1])], dim=-1)
    else:
        S0 = q.new_zeros(*lead, d_v, d_k) if initial_state is None else cast(Tensor, initial_state).expand(*lead, d_v,
                                                                                                          d_k)
    gamma = _decay(decay, lead, q)
    if mode == "chunk":
        o, S = linear_chunk_kernel(fq, fk, w, gamma, S0, chunk_size)
    else:
        o, S = (literal.linear_parallel if mode == "parallel" else literal.linear_recurrent)(fq, fk, w, gamma, S0)
    if normalize:
        d_v = v.shape[-1]
        o = o[..., :d_v] / (o[..., d_v:] + EPS)
        S, z = S[..., :d_v, :], S[..., d_v, :]
        return (o, S, z) if return_state else o
    return (o, S) if return_state else o


@overload
def scalar_gated_linear_attention(q: Tensor, k: Tensor, v: Tensor, g: Tensor, *, mode: str = ...,
                                  initial_state: Tensor | None = ...,
                                  return_state: Literal[False] = ...) -> Tensor: ...
@overload
def scalar_gated_linear_attention(q: Tensor, k: Tensor, v: Tensor, g: Tensor, *, mode: str = ...,
                                  initial_state: Tensor | None = ...,
                                  return_state: Literal[True]) -> tuple[Tensor, Tensor]: ...
@overload
def scalar_gated_linear_attention(q: Tensor, k: Tensor, v: Tensor, g: Tensor, *, mode: str = ...,
                                  initial_state: Tensor | None = ...,
                                  return_state: bool) -> Tensor | tuple[Tensor, Tensor]: ...
@checked_by(_check_gated, nonfinite="very large q, k or v overflow the dtype", finite=("q", "k", "v"))
def scalar_gated_linear_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor, *,
                                  mode: str = "parallel", initial_state: torch.Tensor | None = None,
                                  return_state: bool = False) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """Linear attention with a data-dependent *scalar* decay (one forget gate per token and head)::

        S_t = g_t S_{t-1} + v_t k_tᵀ,      o_t = S_t q_t,      g_t in (0, 1]

    so ``o_t = Σ_{s≤t} (Π_{r=s+1..t} g_r) (q_t·k_s) v_s``. The constant ``decay=γ`` of
    :func:`linear_attention` is this form's constant-gate case g_t = γ (tests/attention/test_forms.py checks it);
    a gate near 0 at a token wipes the memory there.

    One scalar per token scales the whole memory (the gate of Mamba-2 and of RetNet-style gated retention;
    :func:`pavlovlab.attention.literal.gated_recurrent` compares it with finer gates).

    Args:
        q, k: (..., T, d_k); v: (..., T, d_v); g: (..., T); leading dims broadcast.
        mode: ``"parallel"`` (cumulative log-gates b_t = Σ_{r≤t} ln g_r give the mask
            ``D_ts = exp(b_t − b_s)`` for s ≤ t, then ``(QKᵀ ⊙ D) V``) or ``"recurrent"`` (a loop over t).
        initial_state: S_0 of shape (..., d_v, d_k).
    Returns:
        o: (..., T, d_v); with ``return_state``: ``(o, S_T)``.
    """
    S0 = cast(Tensor, initial_state)                 # (*lead, d_v, d_k), like q, k, v, g: broadcast by the check
    if k.shape[-2] == 0:  # an empty sequence: an empty output, the state unchanged (as in every attention form)
        o, S = v.new_zeros(*v.shape[:-2], 0, v.shape[-1]), S0.clone()
    else:
        o, S = (literal.gated_parallel if mode == "parallel" else literal.gated_recurrent)(q, k, v, g, S0)
    return (o, S) if return_state else o


@overload
def delta_rule_attention(q: Tensor, k: Tensor, v: Tensor, beta: float | Tensor, *, mode: str = ...,
                         chunk_size: int = ..., initial_state: Tensor | None = ...,
                         return_state: Literal[False] = ...) -> Tensor: ...
@overload
def delta_rule_attention(q: Tensor, k: Tensor, v: Tensor, beta: float | Tensor, *, mode: str = ...,
                         chunk_size: int = ..., initial_state: Tensor | None = ...,
                         return_state: Literal[True]) -> tuple[Tensor, Tensor]: ...
@overload
def delta_rule_attention(q: Tensor, k: Tensor, v: Tensor, beta: float | Tensor, *, mode: str = ...,
                         chunk_size: int = ..., initial_state: Tensor | None = ...,
                         return_state: bool) -> Tensor | tuple[Tensor, Tensor]: ...
@checked_by(_check_delta, nonfinite="the state diverged: are the keys L2-normalised? each step scales the stored "
            "k-component by 1 − β‖k‖², which must stay within [−1, 1]", finite=("q", "k", "v"))
def delta_rule_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, beta: float | torch.Tensor, *,
                         mode: str = "chunk", chunk_size: int = 64, initial_state: torch.Tensor | None = None,
                         return_state: bool = False) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """Delta-rule attention (DeltaNet): the Rescorla–Wagner learner as a sequence layer.

    ::

        S_t = S_{t-1} + β_t (v_t − S_{t-1} k_t) k_tᵀ     (write only the prediction error)
        o_t = S_t q_t

    Unlike the Hebbian sum of linear attention, the write erases what the memory already predicts
    for ``k_t``. Keys are used as given: with L2-normalised keys and ``0 ≤ β ≤ 2`` every step is a
    contraction (a reflection at β = 2) and the state stays bounded, so β > 2 raises. Unnormalised keys
    can still diverge (the step's factor is ``1 − β‖k‖²``): a non-finite result then warns once
    (:class:`pavlovlab._checks.NonFiniteWarning`).

    float16 and bfloat16 inputs are computed in float32 and the result (output and state) cast back (the
    recurrence loses too much in bfloat16's 8 mantissa bits).

    Args:
        q, k: (..., T, d_k); v: (..., T, d_v); leading dims broadcast.
        beta: learning rate 0 ≤ β ≤ 2, a float or a tensor of shape (..., T) (one β per token).
        mode: ``"recurrent"`` (a loop over t) or ``"chunk"`` (the WY/UT-transform chunkwise algorithm
            of Yang et al. 2024: inside a chunk, the errors solve one triangular system).
        initial_state: S_0 of shape (..., d_v, d_k).

    Returns:
        o: (..., T, d_v); with ``return_state``: ``(o, S_T)``.
    """
    S0 = cast(Tensor, initial_state)                 # (*lead, d_v, d_k): broadcast by the check
    lead, (T, d_k), d_v = S0.shape[:-2], q.shape[-2:], v.shape[-1]
    if d_k == 0 or d_v == 0:       # an empty memory: every read-out S_t q_t is a sum over nothing
        return (q.new_zeros(*lead, T, d_v), S0.clone()) if return_state else q.new_zeros(*lead, T, d_v)
    x = [t.expand(*lead, *t.shape[-2:]) for t in (q, k, v)] + [cast(Tensor, beta).expand(*lead, T), S0]
    if q.dtype in LOW_PRECISION:  # compute in float32, return in the caller's dtype
        x = [t.float() for t in x]
    qx, kx, vx, bx, Sx = x
    o, S = (delta_chunk_kernel(qx, kx, vx, bx, Sx, chunk_size) if mode == "chunk"
            else literal.delta_recurrent(qx, kx, vx, bx, Sx))
    o, S = o.to(q.dtype), S.to(q.dtype)
    return (o, S) if return_state else o


__all__ = ["BETA_MAX", "FEATURE_MAPS", "delta_rule_attention", "linear_attention", "scalar_gated_linear_attention",
           "softmax_attention"]
