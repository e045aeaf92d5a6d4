"""Retrieval of every stored item after every write: the read-outs of three memories as weighted sums.

Pairs are written in order; after ``n`` writes item ``j`` is read with its own key. For the memories of
:data:`MEMORIES` every such read-out is ``r_j(n) = c_j(n) Σ_{i≤n} A[j, i] w_i`` (:func:`readout_weights`),
so the curves that the capacity criteria of :mod:`pavlovlab.capacity` need come from prefix sums, for
all n at once: the worst item's cosine (:func:`min_cosine_curve`), argmax decoding over a fixed codebook
(:func:`decoding_curve`), the worst error under adversarial values (:func:`adversarial_error_curve`),
and the first failure along a curve (:func:`first_failure`).
"""

from __future__ import annotations

import math

import torch

from .._checks import (
    all_finite,
    check_choice,
    check_dim,
    check_fits,
    check_int,
    check_real,
    check_same_kind,
    check_tensor,
    checked_by,
    unchecked,
    warn_nonfinite,
)

MEMORIES = ("hebbian", "delta", "softmax")
"""Memories compared by :func:`readout_weights`: the Hebbian sum (linear attention), the delta rule
(DeltaNet, one pass) and softmax attention (inverse temperature ``beta``, all past pairs kept)."""


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
    rule, beta = _check_readout(keys, values, rule, beta)
    A, W = _readout_weights(keys, values, rule, beta)
    warn_nonfinite("readout_weights", W if all_finite(A) else A, "very large keys or values overflow the dtype")
    return A, W


def _check_readout(keys: torch.Tensor, values: torch.Tensor, rule: str, beta: float) -> tuple[str, float]:
    """The arguments of :func:`readout_weights`; returns the rule and β as checked."""
    check_tensor("keys", keys, min_rank=2)
    check_tensor("values", values, min_rank=2)
    if keys.shape[-2] != values.shape[-2]:
        raise ValueError(f"values: expected as many values as keys ({keys.shape[-2]}) along dim -2, "
                         f"got shape {tuple(values.shape)}")
    rule = check_choice("rule", rule, MEMORIES)
    beta = check_real("beta", beta, low=0.0, low_open=True)
    check_fits("keys", (*keys.shape[:-2], keys.shape[-2], keys.shape[-2]), keys.dtype, keys.device,
               "the read-out weights, batch × N × N", "write fewer pairs")
    return rule, beta


def _readout_weights(keys: torch.Tensor, values: torch.Tensor, rule: str,
                     beta: float) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`readout_weights` on checked arguments."""
    G = keys @ keys.mT
    if rule == "hebbian":
        A, W = G, values
    elif rule == "softmax":
        A, W = (beta * (G - G.amax(-1, keepdim=True))).exp(), values
    else:
        N = G.shape[-1]
        L = torch.eye(N, dtype=G.dtype, device=G.device) / beta + G.tril(-1)
        K_lead = torch.broadcast_shapes(L.shape[:-2], values.shape[:-2])
        W = torch.linalg.solve_triangular(L.expand(*K_lead, N, N), values.expand(*K_lead, *values.shape[-2:]),
                                          upper=False)
        A = G
    return A, W


def _check_curve_inputs(weights: object, written: object, **others: object) -> None:
    """weights (..., N, N) from :func:`readout_weights`, written (..., N, d_v) and the targets (..., N, d_v)
    or the codebook (M, d_v) of the same kind."""
    weights = check_tensor("weights", weights, min_rank=2)
    written = check_tensor("written", written, min_rank=2)
    N = weights.shape[-1]
    if weights.shape[-2] != N or written.shape[-2] != N:
        raise ValueError(f"weights, written: expected (..., N, N) and (..., N, d_v), got {tuple(weights.shape)} and "
                         f"{tuple(written.shape)}")
    for name, x in others.items():
        x = check_tensor(name, x, min_rank=2)
        check_same_kind(written=written, **{name: x})
        check_dim(name, x.shape[-1], written.shape[-1], "d_v (last dim of written)")
    check_same_kind(weights=weights, written=written)


def _check_targets(weights: torch.Tensor, written: torch.Tensor, targets: torch.Tensor) -> None:
    """The arguments of :func:`min_cosine_curve`."""
    _check_curve_inputs(weights, written, targets=targets)


@checked_by(_check_targets)
def min_cosine_curve(weights: torch.Tensor, written: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """The worst stored item's cosine after every number of writes: ``min_{j≤n} cos(r_j(n), v_j)``, n = 1..N.

    ``r_j(n) = Σ_{i≤n} A[j, i] w_i`` (see :func:`readout_weights`). Without forming the (N, N, d_v)
    read-outs: with ``H = W Wᵀ`` and ``X = W Vᵀ``, the numerator ``r_j(n)·v_j = Σ_{i≤n} A_ji X_ij`` and
    ``‖r_j(n)‖² = Σ_{m≤n} (2 A_jm P_jm + A_jm² H_mm)`` with ``P = A (H ∘ [i<m])`` are prefix sums.

    weights: (..., N, N); written: (..., N, d_v); targets: (..., N, d_v). Returns (..., N) (entry n−1
    for n writes).
    """
    return _min_cosine_curve(weights, written, targets)


def _min_cosine_curve(A: torch.Tensor, W: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
    """:func:`min_cosine_curve` of weights A, written W and targets V, checked."""
    N = A.shape[-1]
    H = W @ W.mT                                                          # (..., N, N)
    num = (A * (W @ V.mT).mT).cumsum(-1)                                  # num[j, n] = Σ_{i≤n} A_ji w_i·v_j
    P = A @ (H * _tri(N, A.device, strict=True))                          # P[j, m] = Σ_{i<m} A_ji H_im
    sq = (2 * A * P + A.square() * torch.diagonal(H, dim1=-2, dim2=-1)[..., None, :]).cumsum(-1)
    norm_v = V.norm(dim=-1)[..., :, None]
    cos = num / (sq.clamp_min(torch.finfo(sq.dtype).tiny).sqrt() * norm_v)
    cos = cos.masked_fill(~_tri(N, A.device, strict=False), math.inf)      # item j not yet written at n < j
    return cos.amin(-2)


def _check_decoding(weights: torch.Tensor, written: torch.Tensor, labels: torch.Tensor, codebook: torch.Tensor,
                    block: int) -> None:
    """The arguments of :func:`decoding_curve`."""
    _check_curve_inputs(weights, written, codebook=codebook)
    if not isinstance(labels, torch.Tensor) or labels.dtype != torch.long or labels.shape[-1:] != weights.shape[-1:]:
        got = getattr(labels, "dtype", type(labels).__name__)
        raise TypeError(f"labels: expected a long tensor (..., N = {weights.shape[-1]}), got {got} of shape "
                        f"{tuple(getattr(labels, 'shape', ()))}")
    check_int("block", block, low=1)


@checked_by(_check_decoding)
def decoding_curve(weights: torch.Tensor, written: torch.Tensor, labels: torch.Tensor, codebook: torch.Tensor,
                   *, block: int = 32) -> torch.Tensor:
    """Whether every stored item is decoded correctly after n writes, n = 1..N (argmax over a fixed codebook).

    Item j is stored as the codeword ``codebook[labels[j]]``; its read-out ``r_j(n) = Σ_{i≤n} A[j, i] w_i``
    is decoded as ``argmax_m codebook[m]·r_j(n)``; correct when that is ``labels[j]`` and no other codeword
    ties it. The codebook (M, d_v) does not grow with n, so the question stays the same as the memory fills.
    Processed in blocks of ``block`` writes; stops early once every trial has failed.

    weights: (..., N, N); written: (..., N, d_v); labels: (..., N) long in [0, M). Returns (..., N) bool.
    """
    return _decoding_curve(weights, written, labels, codebook, block)


def _decoding_curve(A: torch.Tensor, written: torch.Tensor, labels: torch.Tensor, codebook: torch.Tensor,
                    block: int = 32) -> torch.Tensor:
    """:func:`decoding_curve` of weights A on checked arguments."""
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


def _check_keys(keys: torch.Tensor) -> None:
    """Keys (..., N, d_k), finite floating point."""
    check_tensor("keys", keys, min_rank=2)


@checked_by(_check_keys)
def adversarial_error_curve(keys: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The worst item's recall error along its own value when an adversary picks the values, n = 1..N (Hebbian).

    After ``n`` writes the read-out of item ``j`` is ``S_n k_j = G_jj v_j + Σ_{i≠j, i≤n} G_ij v_i``
    (``G = K Kᵀ``). For unit values its component along the true value is

        v_j · S_n k_j = G_jj + Σ_{i≠j} G_ij (v_i·v_j)  ≥  G_jj − Σ_{i≠j, i≤n} |G_ij|,

    with equality for the **sign-flip** adversary ``v_i = −sign(G_ij) v_j``, which turns every crosstalk
    term against the signal: the read-out becomes ``(G_jj − Σ_{i≠j}|G_ij|) v_j``. So the adversary defeats
    sign decoding of item j (the read-out's cosine with ``v_j`` is ≤ 0; equivalently the nearer of ``±v_j``
    is the wrong one) exactly when ``Σ_{i≠j, i≤n} |G_ij| ≥ G_jj`` (``≥ 1`` for unit keys): criterion (c)
    is a function of the keys' Gram matrix alone.

    For every n this picks the row ``j*`` with the smallest ``G_jj − Σ_{i≠j}|G_ij|``, builds the sign-flip
    values (scalars ±1: any unit vector ``u`` times them gives the same numbers), stores the first n pairs
    with Hebb's rule ``S_n = Σ_{i≤n} v_i k_iᵀ``, reads ``S_n k_{j*}`` with the key itself, and returns the
    measured error along the value ``e = 1 − v_{j*}·S_n k_{j*}`` (``= Σ_{i≠j*}|G_ij*|`` for unit keys).

    keys: (..., N, d_k). Returns ``(error, worst_item)``, both (..., N), entry n−1 after n writes:
    ``error`` is 0 for a perfect recall and ≥ 1 when the read-out points away from (or is orthogonal to)
    its value, i.e. retrieval fails; ``worst_item`` is ``j*``.
    """
    G = keys @ keys.mT                                                     # (..., N, N), symmetric
    N = G.shape[-1]
    diag = torch.diagonal(G, dim1=-2, dim2=-1)                             # (..., N): the signals G_jj
    off = G.abs() * ~torch.eye(N, dtype=torch.bool, device=G.device)
    margin = diag[..., :, None] - off.cumsum(-1)                           # (..., N_j, N_n): G_jj − Σ_{i≤n, i≠j}|G_ij|
    margin = margin.masked_fill(~_tri(N, G.device, strict=False), math.inf)   # item j not yet written at n < j
    worst = margin.argmin(-2)                                              # (..., N_n): j*(n)
    col = G.gather(-1, worst[..., None, :].expand(*G.shape[:-1], N))       # (..., N_i, N_n): G[i, j*(n)]
    v = torch.where(col >= 0, -1.0, 1.0).to(G.dtype)                       # v_i = −sign(G_ij*) v_j*, with v_j* = 1
    v = torch.where(torch.arange(N, device=G.device)[:, None] == worst[..., None, :], 1.0, v)
    v = v * _tri(N, G.device, strict=False)                                # after n writes only i ≤ n are stored
    S = v.mT @ keys                                                        # (..., N_n, d_k): S_n = Σ_{i≤n} v_i k_iᵀ
    query = keys.gather(-2, worst[..., :, None].expand(*worst.shape, keys.shape[-1]))   # (..., N_n, d_k): k_j*
    read = (S * query).sum(-1)                                             # S_n k_{j*}, one number per n
    return 1 - read, worst


_adversarial_error_curve = unchecked(adversarial_error_curve)


def _check_ok(ok: torch.Tensor) -> None:
    """A boolean tensor, one entry per number of writes."""
    if not isinstance(ok, torch.Tensor) or ok.dtype != torch.bool:
        raise TypeError(f"ok: expected a boolean tensor, got {getattr(ok, 'dtype', type(ok).__name__)}")


@checked_by(_check_ok)
def first_failure(ok: torch.Tensor) -> torch.Tensor:
    """Capacity per trial: the largest n such that the criterion holds after every n' ≤ n writes.

    ok: (..., N) bool, entry n−1 for n writes. Returns (...,) long: the number of leading True entries
    (N when it never fails: a censored trial, see :class:`pavlovlab.capacity.RetrievalCapacity`).
    """
    return (~ok).to(torch.uint8).cumsum(-1).eq(0).sum(-1)


_first_failure = unchecked(first_failure)


__all__ = ["MEMORIES", "adversarial_error_curve", "decoding_curve", "first_failure", "min_cosine_curve",
           "readout_weights"]
