"""Attention in every form: softmax, causal linear attention (the conditioning circuit) and the delta rule.

Notation follows the paper (arXiv:2508.08289): keys are conditioned stimuli (CS), values are
unconditioned stimuli (US), queries are test stimuli. Shapes: ``q, k: (..., T, d_k)``,
``v: (..., T, d_v)``; any leading dims (batch, heads) broadcast. The memory (state) is the paper's
matrix ``S = Σ v kᵀ`` of shape ``(..., d_v, d_k)``, read as ``S q``.

Each algorithm comes in forms that compute the same numbers: ``"parallel"`` (one masked matrix product),
``"recurrent"`` (the explicit loop over time that updates ``S``: the circuit as written in the paper) and
``"chunk"`` (chunkwise: masked products inside chunks of ``chunk_size`` tokens plus a state carried from chunk
to chunk). The public functions here check their inputs once, then call a form: the recurrent and parallel
forms are the literal ones of :mod:`pavlovlab.attention_literal`; the chunk forms are the fast kernels below
(:func:`linear_chunk_kernel`, :func:`delta_chunk_kernel`), which check nothing, so that a caller whose inputs
are valid by construction (``models.Block``) calls them directly.

Edge cases, the same in every form: ``T = 0`` gives an empty ``(..., 0, d_v)`` output (and the initial
state back); a ``chunk_size`` larger than ``T`` is clamped to ``T``. Non-finite inputs raise; a result
that becomes non-finite from finite inputs warns once (``pavlovlab._checks``' non-finite policy).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import torch
import torch.nn.functional as F

from . import attention_literal as literal
from ._checks import (
    all_finite,
    broadcast_lead,
    check_choice,
    check_dim,
    check_finite,
    check_int,
    check_output,
    check_real,
    check_real_tensor,
    check_same_kind,
    check_tensor,
    warn_nonfinite,
)

Tensor = torch.Tensor
FeatureMap = str | Callable[[torch.Tensor], torch.Tensor]
EPS = 1e-6
"""Added to the normaliser ``φ(q)·z`` of normalised linear attention."""

FEATURE_MAPS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "identity": lambda x: x,
    "elu1": lambda x: F.elu(x) + 1.0,
    "relu": F.relu,
}
LINEAR_MODES = ("parallel", "recurrent", "chunk")
DELTA_MODES = ("recurrent", "chunk")
GATED_MODES = ("parallel", "recurrent")
POSITIVE_MAPS = ("elu1", "relu")
"""Feature maps with non-negative outputs: the only ones ``normalize=True`` accepts among the named maps."""
BETA_MAX = 2.0
"""The delta rule's bound: with unit keys, ``I − β k kᵀ`` is a contraction for 0 < β < 2 (a reflection at 2)."""
LOW_PRECISION = (torch.float16, torch.bfloat16)
SEGMENT_CHUNKS = 16
"""The chunk kernels walk through a long sequence in segments of this many chunks, carrying the state from
one to the next, so that a segment's working set stays in the CPU cache and the time grows linearly in T."""
SOLVE_BLOCK = 8
"""Block size (rows) of :func:`_unit_lower_solve`."""


# ------------------------------------------------------------------------------------------------ checks
def _check_qkv(q: object, k: object, v: object, *, same_length: bool = True) -> torch.Size:
    """Validate the kinds and shapes of q, k, v and return the broadcast leading shape. Their values are
    checked by :func:`_check_values` once the form has run (one reduction for inputs and output together)."""
    check_tensor("q", q, min_rank=2, finite=False)
    check_tensor("k", k, min_rank=2, finite=False)
    check_tensor("v", v, min_rank=2, finite=False)
    check_same_kind(q=q, k=k, v=v)
    check_dim("k", k.shape[-1], q.shape[-1], "key dimension d_k (last dim of q)")
    check_dim("v", v.shape[-2], k.shape[-2], "sequence length T (dim -2 of k)")
    if same_length:
        check_dim("q", q.shape[-2], k.shape[-2], "sequence length T (dim -2 of k, causal attention)")
    return broadcast_lead(q=q.shape[:-2], k=k.shape[:-2], v=v.shape[:-2])


def _check_values(where: str, cause: str | Callable[[], str], out: Tensor, **inputs: Tensor) -> None:
    """The non-finite policy for the inputs and the result at the cost of one reduction: if the sums of all of
    them are finite, every entry is. Otherwise a non-finite input raises naming it, and a non-finite result of
    finite inputs warns (``cause`` says why it can happen; a callable is asked only then)."""
    if all_finite(torch.stack([x.detach().sum() for x in (*inputs.values(), out)])):
        return
    for name, x in inputs.items():
        check_finite(name, x)
    warn_nonfinite(where, out, cause() if callable(cause) else cause)


def _check_state(name: str, state: object, shape: tuple[int, ...], like: torch.Tensor,
                 lead: torch.Size | None = None) -> torch.Tensor:
    """A state tensor of trailing ``shape``, like ``like``'s dtype and device, whose leading dims broadcast
    to ``lead`` (the batch/head dims of q, k, v) when given."""
    check_tensor(name, state, min_rank=len(shape))
    check_same_kind(q=like, **{name: state})
    if tuple(state.shape[state.dim() - len(shape):]) != shape:
        raise ValueError(f"{name}: expected trailing shape {shape}, got shape {tuple(state.shape)}")
    if lead is not None:
        extra = tuple(state.shape[:state.dim() - len(shape)])
        try:
            fits = torch.broadcast_shapes(extra, tuple(lead)) == tuple(lead)
        except RuntimeError:
            fits = False
        if not fits:
            raise ValueError(f"{name}: expected leading dims that broadcast to the batch/head dims {tuple(lead)} "
                             f"of q, k, v, got shape {tuple(state.shape)}")
    return state


def _feature_map(feature_map: FeatureMap) -> Callable[[torch.Tensor], torch.Tensor]:
    if callable(feature_map):
        return feature_map
    if not isinstance(feature_map, str):
        raise TypeError(f"feature_map: expected one of {list(FEATURE_MAPS)} or a callable, "
                        f"got {type(feature_map).__name__}")
    return FEATURE_MAPS[check_choice("feature_map", feature_map, FEATURE_MAPS)]


def _decay_tensor(decay: object, lead: torch.Size, like: torch.Tensor) -> torch.Tensor | None:
    """γ as a tensor of shape ``lead + (1, 1)`` (or None for no decay), checked to lie in [0, 1]."""
    if decay is None:
        return None
    if isinstance(decay, torch.Tensor):
        gamma = decay.to(dtype=like.dtype, device=like.device)
        check_real_tensor("decay", gamma, low=0.0, high=1.0)
        try:
            gamma = gamma.expand(lead)
        except RuntimeError:
            raise ValueError(f"decay: expected a float or a tensor that broadcasts to the leading dims "
                             f"{tuple(lead)}, got shape {tuple(decay.shape)}") from None
    else:
        gamma = torch.full(lead, check_real("decay", decay, low=0.0, high=1.0), dtype=like.dtype, device=like.device)
    return gamma[..., None, None]


# ------------------------------------------------------------------------------------------ public forms
def softmax_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, causal: bool = True,
                      scale: float | None = None) -> torch.Tensor:
    """Softmax attention ``o_t = Σ_s softmax_s(scale · q_t·k_s) v_s`` (``s ≤ t`` when causal).

    q: (..., T_q, d_k), k: (..., T, d_k), v: (..., T, d_v) -> (..., T_q, d_v). ``scale`` defaults to
    ``1/√d_k``. Causal attention needs ``T_q = T``. Cost O(T² d): every query scores every key.
    """
    if all(isinstance(x, torch.Tensor) and x.dim() >= 2 for x in (q, k)) and k.shape[-2] == 0 < q.shape[-2]:
        raise ValueError(f"k: expected at least one key for {q.shape[-2]} queries (a softmax over zero keys is "
                         f"undefined), got shape {tuple(k.shape)}")
    _check_qkv(q, k, v, same_length=causal)
    scale = None if scale is None else check_real("scale", scale, low=0.0, low_open=True)
    if scale is None and q.shape[-1] == 0:
        raise ValueError("q: expected a key dimension d_k >= 1 for the default scale 1/√d_k, got shape "
                         f"{tuple(q.shape)} (pass scale to attend with d_k = 0)")
    o = literal.softmax_parallel(q, k, v, causal, scale)
    _check_values("softmax_attention", "very large q or k overflow the scores", o, q=q, k=k, v=v)
    return o


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
    lead = _check_qkv(q, k, v)
    mode = check_choice("mode", mode, LINEAR_MODES)
    chunk_size = check_int("chunk_size", chunk_size, low=1)
    if not isinstance(normalize, bool):
        raise TypeError(f"normalize: expected True or False, got {type(normalize).__name__}")
    if normalize and isinstance(feature_map, str) and feature_map not in POSITIVE_MAPS and feature_map in FEATURE_MAPS:
        raise ValueError("feature_map: normalize=True needs a non-negative feature map "
                         f"({' or '.join(map(repr, POSITIVE_MAPS))}); "
                         f"with {feature_map!r} the normaliser φ(q)·z crosses 0 and the output explodes")
    phi = _feature_map(feature_map)
    fq = check_output("feature_map", phi(q), q.shape, q)
    fk = check_output("feature_map", phi(k), k.shape, k)
    if normalize and callable(feature_map) and (bool((fq < 0).any()) or bool((fk < 0).any())):
        raise ValueError("feature_map: normalize=True needs a non-negative feature map; the callable returned "
                         "negative values, so the normaliser φ(q)·z can cross 0")
    d_k, d_v = q.shape[-1], v.shape[-1]
    gamma = _decay_tensor(decay, lead, q)
    S0 = z0 = None
    if initial_state is not None:
        if normalize:
            if not (isinstance(initial_state, tuple) and len(initial_state) == 2):
                raise TypeError("initial_state: expected the pair (S_0, z_0) when normalize=True, "
                                f"got {type(initial_state).__name__}")
            S0 = _check_state("initial_state[0]", initial_state[0], (d_v, d_k), q, lead)
            z0 = _check_state("initial_state[1]", initial_state[1], (d_k,), q, lead)
        else:
            S0 = _check_state("initial_state", initial_state, (d_v, d_k), q, lead)
    fq, fk, w = (x.expand(*lead, *x.shape[-2:]) for x in (fq, fk, v))
    S0 = q.new_zeros(*lead, d_v, d_k) if S0 is None else S0.expand(*lead, d_v, d_k)
    if normalize:
        z0 = q.new_zeros(*lead, d_k) if z0 is None else z0.expand(*lead, d_k)
        w = torch.cat([w, torch.ones_like(w[..., :1])], dim=-1)  # z rides along as an extra value row
        S0 = torch.cat([S0, z0[..., None, :]], dim=-2)
    if mode == "chunk":
        o, S = linear_chunk_kernel(fq, fk, w, gamma, S0, chunk_size)
    else:
        o, S = (literal.linear_parallel if mode == "parallel" else literal.linear_recurrent)(fq, fk, w, gamma, S0)
    def cause() -> str:
        if not (all_finite(fq) and all_finite(fk)):
            return "the feature map returned NaN/inf values for finite q, k"
        return "very large q, k or v overflow the dtype"

    _check_values("linear_attention", cause, o, q=q, k=k, v=v)
    if normalize:
        o = o[..., :d_v] / (o[..., d_v:] + EPS)
        S, z = S[..., :d_v, :], S[..., d_v, :]
        return (o, S, z) if return_state else o
    return (o, S) if return_state else o


def scalar_gated_linear_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor, *,
                                  mode: str = "parallel", initial_state: torch.Tensor | None = None,
                                  return_state: bool = False) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """Linear attention with a data-dependent *scalar* decay (one forget gate per token and head)::

        S_t = g_t S_{t-1} + v_t k_tᵀ,      o_t = S_t q_t,      g_t in (0, 1]

    so ``o_t = Σ_{s≤t} (Π_{r=s+1..t} g_r) (q_t·k_s) v_s``. The constant ``decay=γ`` of
    :func:`linear_attention` is this form's constant-gate case g_t = γ (tests/test_attention.py checks it);
    a gate near 0 at a token wipes the memory there.

    One scalar per token scales the whole memory (the gate of Mamba-2 and of RetNet-style gated retention;
    :func:`pavlovlab.attention_literal.gated_recurrent` compares it with finer gates).

    Args:
        q, k: (..., T, d_k); v: (..., T, d_v); g: (..., T); leading dims broadcast.
        mode: ``"parallel"`` (cumulative log-gates b_t = Σ_{r≤t} ln g_r give the mask
            ``D_ts = exp(b_t − b_s)`` for s ≤ t, then ``(QKᵀ ⊙ D) V``) or ``"recurrent"`` (a loop over t).
        initial_state: S_0 of shape (..., d_v, d_k).
    Returns:
        o: (..., T, d_v); with ``return_state``: ``(o, S_T)``.
    """
    lead = _check_qkv(q, k, v)
    check_tensor("g", g, min_rank=1)
    check_same_kind(q=q, g=g)
    T = k.shape[-2]
    check_dim("g", g.shape[-1], T, "sequence length T (last dim of g)")
    check_real_tensor("g", g, high=1.0)
    if bool((g <= 0).any()):
        raise ValueError(f"g: expected gates in (0, 1], got a minimum of {g.min().item():.4g}")
    mode = check_choice("mode", mode, GATED_MODES)
    lead = broadcast_lead(qkv=lead, g=g.shape[:-1])
    d_k, d_v = q.shape[-1], v.shape[-1]
    q, k, v = (x.expand(*lead, *x.shape[-2:]) for x in (q, k, v))
    S0 = q.new_zeros(*lead, d_v, d_k) if initial_state is None else \
        _check_state("initial_state", initial_state, (d_v, d_k), q, lead).expand(*lead, d_v, d_k)
    if T == 0:  # an empty sequence: an empty output, the state unchanged (as in every attention form)
        o, S = v.new_zeros(*lead, 0, d_v), S0.clone()
    else:
        form = literal.gated_parallel if mode == "parallel" else literal.gated_recurrent
        o, S = form(q, k, v, g.expand(*lead, T), S0)
    _check_values("scalar_gated_linear_attention", "very large q, k or v overflow the dtype", o, q=q, k=k, v=v)
    return (o, S) if return_state else o


def delta_rule_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, beta: float | torch.Tensor, *,
                         mode: str = "chunk", chunk_size: int = 64, initial_state: torch.Tensor | None = None,
                         return_state: bool = False) -> torch.Tensor | tuple[torch.Tensor, ...]:
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
    lead = _check_qkv(q, k, v)
    mode = check_choice("mode", mode, DELTA_MODES)
    chunk_size = check_int("chunk_size", chunk_size, low=1)
    T, d_k, d_v = q.shape[-2], q.shape[-1], v.shape[-1]
    if isinstance(beta, torch.Tensor):
        check_tensor("beta", beta, min_rank=1)
        check_same_kind(q=q, beta=beta)
        check_dim("beta", beta.shape[-1], T, "sequence length T (last dim of beta)")
        check_real_tensor("beta", beta, low=0.0, high=BETA_MAX)
        lead = broadcast_lead(qkv=lead, beta=beta.shape[:-1])
    else:
        beta = torch.full((T,), check_real("beta", beta, low=0.0, high=BETA_MAX), dtype=q.dtype, device=q.device)
    S0 = q.new_zeros(*lead, d_v, d_k) if initial_state is None else \
        _check_state("initial_state", initial_state, (d_v, d_k), q, lead).expand(*lead, d_v, d_k)
    x = [t.expand(*lead, *t.shape[-2:]) for t in (q, k, v)] + [beta.expand(*lead, T), S0]
    if d_k == 0 or d_v == 0:       # an empty memory: every read-out S_t q_t is a sum over nothing
        for name, t in (("q", q), ("k", k), ("v", v)):
            check_finite(name, t)
        o = q.new_zeros(*lead, T, d_v)
        return (o, S0.clone()) if return_state else o
    if q.dtype in LOW_PRECISION:  # compute in float32, return in the caller's dtype
        x = [t.float() for t in x]
    o, S = (delta_chunk_kernel(*x, chunk_size) if mode == "chunk" else literal.delta_recurrent(*x))
    _check_values("delta_rule_attention", "the state diverged: are the keys L2-normalised? each step scales the "
                  "stored k-component by 1 − β‖k‖², which must stay within [−1, 1]", o, q=q, k=k, v=v)
    o, S = o.to(q.dtype), S.to(q.dtype)
    return (o, S) if return_state else o


# ------------------------------------------------------------------------------------------- fast kernels
def _segments(seqs: tuple[Tensor, ...], C: int) -> Iterator[tuple[Tensor, ...]]:
    """The sequences (time in dim -2) cut into segments of ``SEGMENT_CHUNKS`` chunks, each made contiguous once
    (a slice of time is not: its heads are T rows apart), so that the batched products inside see one batch
    axis and do not copy their operands again. Split, not sliced: under autograd a split's backward is one
    concatenation, where each slice's backward would fill a zero tensor of the whole length (O(T²) in all)."""
    for piece in zip(*(x.split(C * SEGMENT_CHUNKS, dim=-2) for x in seqs), strict=True):
        yield tuple(x.contiguous() for x in piece)


def _chunks(x: Tensor, C: int) -> Tensor:
    """(..., T, d) -> (..., n, C, d) with n = ⌈T/C⌉, zero-padded at the end only when C does not divide T
    (a view, no copy, otherwise). Zero keys (and β = 0) write nothing, so the padding is exact."""
    pad = -x.shape[-2] % C
    if pad:
        x = F.pad(x, (0, 0, 0, pad))
    return x.unflatten(-2, (-1, C))


def _powers(gamma: Tensor, exponents: Tensor | int) -> Tensor:
    """γ^e for γ of shape (..., 1, 1) and integer exponents (m, n) -> (..., m, n); 0^0 = 1."""
    return torch.pow(gamma, exponents.to(gamma.dtype) if isinstance(exponents, Tensor) else float(exponents))


def linear_chunk_kernel(fq: Tensor, fk: Tensor, v: Tensor, gamma: Tensor | None, S0: Tensor,
                        chunk_size: int = 64) -> tuple[Tensor, Tensor]:
    """The chunk form of :func:`linear_attention` (``literal.linear_chunkwise`` computes the same numbers), on
    inputs it does not check: fq, fk (..., T, d_k) (feature maps applied), v (..., T, d_v), γ (..., 1, 1) or None,
    S0 (..., d_v, d_k), all with the same leading dims. Returns ``(o, S_T)``.

    Per segment of ``SEGMENT_CHUNKS`` chunks of C tokens (n chunks, the last zero-padded): the chunks' own
    masked products ``tril(Q Kᵀ) V`` and writes ``Δ_c = V_cᵀ K_c`` in batched products; the state before each
    chunk, ``S_c = S_0 + Σ_{j<c} Δ_j``, as a running sum (no matrix product, so that the operation count stays
    ``2T(C(d_k + d_v) + 2 d_k d_v)``); then every chunk reads its start state, ``Q_c S_cᵀ``. With decay, the
    powers of γ weight the same terms and the start states are one product over the chunk axis,
    ``S_c = γ^(Cc) S_0 + Σ_{j<c} γ^(C(c−1−j)) Δ_j``."""
    T, d_v = fq.shape[-2], v.shape[-1]
    if T == 0:
        return v.new_zeros(*v.shape[:-2], 0, d_v), S0.clone()
    C, S, outputs = min(chunk_size, T), S0, []
    for q_seg, k_seg, v_seg in _segments((fq, fk, v), C):
        n, part = -(-q_seg.shape[-2] // C), q_seg.shape[-2] % C     # chunks; tokens in a partial last chunk
        qc, kc, vc = _chunks(q_seg, C), _chunks(k_seg, C), _chunks(v_seg, C)  # (..., n, C, d)
        scores = (qc @ kc.mT).tril_()                                # (..., n, C, C): s ≤ t inside a chunk
        if gamma is None:
            deltas = vc.mT @ kc                                      # Δ_c: (..., n, d_v, d_k)
            starts = [S]
            for c in range(n - 1):                                   # S_{c+1} = S_c + Δ_c
                starts.append(starts[-1] + deltas[..., c, :, :])
            starts = torch.stack(starts, dim=-3)                     # (..., n, d_v, d_k)
            o = (qc @ starts.mT).add_(scores @ vc)                   # carried state + masked intra-chunk block
            S = starts[..., -1, :, :] + deltas[..., -1, :, :]        # padded keys are zero: exact
        else:
            g = gamma[..., None, :, :]                               # (..., 1, 1, 1) against the chunk axis
            i, c = torch.arange(C, device=fq.device), torch.arange(n, device=fq.device)
            lag = (i[:, None] - i[None, :]).clamp(min=0)             # (C, C): t − s (scores are 0 above)
            intra = (scores * _powers(g, lag)) @ vc                  # γ^(t−s) inside a chunk
            deltas = (vc * _powers(g, (C - 1 - i)[:, None])).mT @ kc  # (..., n, d_v, d_k), decayed to chunk end
            gap = (c[:, None] - 1 - c[None, :]).clamp(min=0)         # (n, n): chunks between j and c
            M = torch.where(c[:, None] > c[None, :], _powers(gamma, C * gap), 0.0)  # (..., n, n), j < c
            starts = (M @ deltas.flatten(-2)).unflatten(-1, deltas.shape[-2:])  # (..., n, d_v, d_k)
            starts = starts + _powers(g, C * c[:, None, None]) * S[..., None, :, :]  # + γ^(Cc) S_0
            o = intra.add_(_powers(g, (i + 1)[:, None]) * (qc @ starts.mT))
            if part:  # a partial last chunk: decay its start state and its real writes by their true lags
                j = torch.arange(part, device=fq.device)
                S = _powers(gamma, part) * starts[..., -1, :, :] \
                    + (v_seg[..., -part:, :] * _powers(gamma, (part - 1 - j)[:, None])).mT @ k_seg[..., -part:, :]
            else:
                S = _powers(gamma, C) * starts[..., -1, :, :] + deltas[..., -1, :, :]
        o = o.flatten(-3, -2)                                        # (..., n·C, d_v)
        outputs.append(o[..., :q_seg.shape[-2], :] if part else o)
    return (outputs[0] if len(outputs) == 1 else torch.cat(outputs, dim=-2)), S


def _unit_lower_solve(A: Tensor, R: Tensor) -> Tensor:
    """``A⁻¹ R`` for a batch of unit lower-triangular systems: A (..., C, C) with ones on the diagonal and zeros
    above it, R (..., C, r) -> (..., C, r).

    Without autograd: block forward substitution over blocks of ``b = SOLVE_BLOCK`` rows (A padded with the
    identity): the diagonal blocks D_i inverted all at once, row by row, then block row i of the solution
    ``E_i = D_i⁻¹ (R_i − A_i,<i E_<i)``, written in place (``torch.linalg.solve_triangular`` solves a CPU batch
    one small system at a time). Under autograd, which cannot differentiate through in-place writes,
    ``solve_triangular``, whose backward is one more solve (benchmarks/attention.py has the timings)."""
    if torch.is_grad_enabled() and (A.requires_grad or R.requires_grad):
        return torch.linalg.solve_triangular(A, R, upper=False, unitriangular=True)
    *lead, C, _ = A.shape
    b = min(SOLVE_BLOCK, C)
    m = -(-C // b)
    P = m * b
    if P != C:  # pad with the identity (and R with zero rows): the top-left block of the solution is A⁻¹ R
        eye_rows = torch.eye(P, dtype=A.dtype, device=A.device)[C:].expand(*lead, -1, -1)
        A, R = torch.cat([F.pad(A, (0, P - C)), eye_rows], dim=-2), F.pad(R, (0, 0, 0, P - C))
    D = A.unflatten(-2, (m, b)).unflatten(-1, (m, b)).diagonal(dim1=-4, dim2=-2).movedim(-1, -3)  # (..., m, b, b)
    Dinv = torch.eye(b, dtype=A.dtype, device=A.device).expand(D.shape).clone()  # (..., m, b, b)
    for j in range(1, b):                                                # row j from rows < j, every block at once
        Dinv[..., j:j + 1, :j] = -(D[..., j:j + 1, :j] @ Dinv[..., :j, :j])
    E = torch.empty_like(R)                                              # (..., P, r)
    for i in range(m):                                                   # block row i from the rows above it
        rows = slice(i * b, (i + 1) * b)
        rhs = R[..., rows, :] if i == 0 else R[..., rows, :] - A[..., rows, :i * b] @ E[..., :i * b, :]
        E[..., rows, :] = Dinv[..., i, :, :] @ rhs
    return E[..., :C, :] if P != C else E


def delta_chunk_kernel(q: Tensor, k: Tensor, v: Tensor, beta: Tensor, S0: Tensor,
                       chunk_size: int = 64) -> tuple[Tensor, Tensor]:
    """The chunk form of :func:`delta_rule_attention` (``literal.delta_chunkwise`` computes the same numbers), on
    inputs it does not check: q, k (..., T, d_k), v (..., T, d_v), β (..., T), S0 (..., d_v, d_k), all with the
    same leading dims and one dtype. Returns ``(o, S_T)``.

    Inside a chunk with start state S_0 the errors e_t = β_t (v_t − S_{t−1} k_t) satisfy
    (I + diag(β) tril(K Kᵀ, −1)) E = diag(β) (V − K S_0ᵀ), so E = U − W S_0ᵀ with U, W from one
    unit-triangular system (the UT transform, solved by :func:`_unit_lower_solve`) for all chunks at once.
    Then, with A = tril(Q Kᵀ)::

        O     = Q S_0ᵀ + A E = (Q − A W) S_0ᵀ + A U
        S_end = S_0 + Eᵀ K   = S_0 (I − Wᵀ K) + Uᵀ K

    Everything but the last line's short recurrence over chunks (one fused ``baddbmm`` per chunk) is one batched
    product for all the chunks of a segment."""
    T, d_k, d_v = q.shape[-2], q.shape[-1], v.shape[-1]
    if T == 0:
        return v.new_zeros(*v.shape[:-2], 0, d_v), S0.clone()
    C, S, outputs = min(chunk_size, T), S0, []
    *lead, _, _ = q.shape
    for qs, ks, vs, bs in _segments((q, k, v, beta[..., None]), C):
        qc, kc, vc, bc = _chunks(qs, C), _chunks(ks, C), _chunks(vs, C), _chunks(bs, C)  # (..., n, C, ·)
        n = qc.shape[-3]
        system = (kc @ kc.mT).tril_(-1).mul_(bc)                     # diag(β) tril(K Kᵀ, −1): (..., n, C, C)
        system.diagonal(dim1=-2, dim2=-1).fill_(1.0)                 # + I (unit diagonal)
        UW = _unit_lower_solve(system, torch.cat([vc, kc], dim=-1).mul_(bc))  # [U, W]: (..., n, C, d_v + d_k)
        AUW = (qc @ kc.mT).tril_() @ UW                              # [A U, A W]: (..., n, C, d_v + d_k)
        HG = UW.mT @ kc                                              # [Uᵀ K; Wᵀ K]: (..., n, d_v + d_k, d_k)
        P = HG[..., d_v:, :].neg_()                                  # −Wᵀ K, then + I: (..., n, d_k, d_k)
        P.diagonal(dim1=-2, dim2=-1).add_(1.0)
        H, P = HG[..., :d_v, :].reshape(-1, n, d_v, d_k), P.reshape(-1, n, d_k, d_k)  # batch flattened
        starts = [S.reshape(-1, d_v, d_k)]
        for c in range(n):                                           # S_{c+1} = Uᵀ K + S_c (I − Wᵀ K)
            starts.append(torch.baddbmm(H[:, c], starts[-1], P[:, c]))
        S = starts.pop().reshape(*lead, d_v, d_k)
        carried = torch.stack(starts, dim=1).reshape(*lead, n, d_v, d_k)  # the state before each chunk
        o = ((qc - AUW[..., d_v:]) @ carried.mT).add_(AUW[..., :d_v]).flatten(-3, -2)  # (..., n·C, d_v)
        outputs.append(o[..., :qs.shape[-2], :])
    return (outputs[0] if len(outputs) == 1 else torch.cat(outputs, dim=-2)), S
