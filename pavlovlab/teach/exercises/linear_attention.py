"""The exercises of ``03_linear_attention``.

1. (implement) the recurrent form of causal linear attention (the conditioning circuit);
2. (implement) the inter-chunk term and the carried state of the chunkwise form;
3. (design the measurement) count the work of the parallel and chunkwise forms as the sequence grows,
   and fit the log–log slopes (the claim: quadratic against linear in T).

In the notebook ``from pavlovlab.teach.exercises import linear_attention as ex`` (then ``ex.start()``);
``ex.hint(n)`` gives the next hint tier, ``ex.solution(n)`` the reference solution.
Each checker prints one verdict and never raises. :func:`flop_sweep` is the package's version of
Exercise 3's measurement.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from pavlovlab._checks import check_choice, check_int
from pavlovlab.attention.forms import linear_attention, softmax_attention
from pavlovlab.teach.language import N_, _

from .book import Book
from .checking import Case, Turn, Verdict, check_function, check_measurement, pending

_DTYPE = torch.float64


BOOK = Book("03_linear_attention", __name__)
session, start, hint, solution, reveal, progress = (BOOK.session, BOOK.start, BOOK.hint, BOOK.solution,
                                                      BOOK.reveal, BOOK.progress)


def _randn(g: torch.Generator, *shape: int, dtype: torch.dtype = _DTYPE) -> torch.Tensor:
    return torch.randn(*shape, generator=g, dtype=dtype)


# --------------------------------------------------------------------------- Exercise 1: recurrent form
def recurrent_reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """The conditioning circuit ``S_t = S_{t-1} + v_t k_tᵀ, o_t = S_t q_t`` (S_0 = 0).

    q, k: (T, d_k), v: (T, d_v) -> o: (T, d_v); the package's ``linear_attention(mode="recurrent")``.
    """
    return linear_attention(q, k, v, mode="recurrent")


def _qkv_cases(g: torch.Generator) -> list[Case]:
    # (T, d_k, d_v, dtype): float32 and float64 inputs, T = 1, d_v ≠ d_k, odd sizes
    shapes = [(5, 4, 4, torch.float32), (1, 3, 2, torch.float64), (12, 6, 3, torch.float64),
              (33, 5, 7, torch.float32)]
    return [((_randn(g, T, dk, dtype=dt), _randn(g, T, dk, dtype=dt), _randn(g, T, dv, dtype=dt)), {})
            for T, dk, dv, dt in shapes]


@BOOK.exercise(1, N_("the recurrent form"), kind="implement", hints=[
        N_("The dog starts with an empty memory and lives through the sequence one step at a time. At each step "
           "two things happen, in a fixed order: the note of this step's bell and food goes on the wall, then "
           "the test stimulus of this step reads the wall. Does the test at step t see the note of step t?"),
        N_("Create the empty memory with the shape (d_v, d_k) and the dtype of the inputs (q.dtype), so that "
           "float32 and float64 inputs both work. In a loop over t: add the outer product of v[t] and k[t] "
           "(value first), then read the memory with q[t] and keep the read. Stack the reads into (T, d_v)."),
        N_("S = torch.zeros(d_v, d_k, dtype=q.dtype); for t: S = S + torch.outer(v[t], k[t]); "
           "reads.append(S @ q[t]); return torch.stack(reads)."),
    ])
def check_recurrent(fn: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor], *, turn: Turn,
                    seed: int = 0) -> bool:
    """Exercise 1: check ``fn(q, k, v) -> o`` against ``linear_attention(mode="recurrent")`` on float32 and
    float64 inputs (a correct answer in either precision passes: the tolerance follows the dtype)."""
    g = torch.Generator().manual_seed(seed)
    learner = fn

    def explained(q, k, v):  # a dtype clash between S and the inputs: say so in words
        try:
            return learner(q, k, v)
        except RuntimeError as e:
            if "dtype" in str(e) or "Double" in str(e) or "Float" in str(e):
                # Translators: {error} is PyTorch's own error message, in English.
                raise RuntimeError(_("{error}. Your memory and the inputs have different dtypes: create the "
                                     "memory with the dtype of the inputs (q.dtype)").format(error=e)) from None
            raise

    mistakes = [(lambda q, k, v: (q @ k.mT).tril(-1) @ v,
                 _("your first read is all zeros: at step 1 the memory should already hold the first note. Does "
                   "each test see the note written at its own step?")),
                (lambda q, k, v: (q * k).sum(-1, keepdim=True) * v,
                 _("each read sees only the note of its own step: does a new note replace the wall, or go on top "
                   "of the earlier ones?"))]
    return check_function(explained if callable(fn) else fn, recurrent_reference, _qkv_cases(g), turn=turn,
                          rtol=1e-8, atol=1e-5, mistakes=mistakes,
                          case_hints=[_("float32 inputs"), _("a single step, T = 1"), _("float64 inputs"),
                                      _("d_v larger than d_k")],
                          hint=_("your reads differ from the circuit's on the case named above: run that case by "
                                 "hand for the first two steps (write, then read) and compare with your rows."))


# --------------------------------------------------------------------------- Exercise 2: the chunk carry
def inter_chunk_reference(q_c: torch.Tensor, k_c: torch.Tensor, v_c: torch.Tensor,
                          S: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """What the state carried into a chunk contributes, and the state carried out of it.

    q_c, k_c: (C, d_k), v_c: (C, d_v), S: (d_v, d_k) (everything written before the chunk).
    Returns ``(Q_c Sᵀ, S + V_cᵀ K_c)``: the inter-chunk term (C, d_v) and the next state (d_v, d_k).
    Computed from the package: the chunk's output started from S minus its output started from 0.
    """
    with_past, S_next = linear_attention(q_c, k_c, v_c, mode="parallel", initial_state=S, return_state=True)
    alone = linear_attention(q_c, k_c, v_c, mode="parallel")
    return with_past - alone, S_next


def _chunk_cases(g: torch.Generator) -> list[Case]:
    shapes = [(4, 4, 4), (1, 3, 2), (8, 6, 3), (5, 7, 5)]  # (C, d_k, d_v)
    return [((_randn(g, C, dk), _randn(g, C, dk), _randn(g, C, dv), _randn(g, dv, dk)), {})
            for C, dk, dv in shapes]


_CARRY_MISTAKES = [
    (lambda q_c, k_c, v_c, S: (q_c @ S.T, v_c.T @ k_c),
     N_("your state after the chunk holds only the chunk's own notes: where did the memory carried in go?")),
    (lambda q_c, k_c, v_c, S: (q_c @ (S + v_c.T @ k_c).T, S + v_c.T @ k_c),
     N_("your queries read the memory after the chunk's own notes were added: the inter-chunk term is what was "
        "written before the chunk (the chunk's own notes are the small triangle).")),
    (lambda q_c, k_c, v_c, S: (q_c @ S, S + v_c.T @ k_c),
     N_("your inter-chunk term multiplies the queries by S as it is stored: a single read is S q_t, so with the "
        "queries as rows, what must S become?")),
]
"""Exercise 2's recognised mistakes; their messages are marked here and said (``_``) at check time."""


@BOOK.exercise(2, N_("the inter-chunk term and the carried state"), kind="implement", hints=[
        N_("Everything written before the chunk is summarised in the carried memory S. What does each test "
           "stimulus of the chunk get from it, and what does the memory hold once the chunk's own notes are "
           "added?"),
        N_("Each query of the chunk reads S, exactly like a single read S q_t, but for all C queries at once "
           "(mind which side of the product the queries go, to get shape (C, d_v)). The new memory is S plus "
           "the sum of the chunk's C outer products, which is one matrix product of the chunk's values and "
           "keys."),
        N_("inter = q_c @ S.T; S_next = S + v_c.T @ k_c; return inter, S_next."),
    ])
def check_inter_chunk(fn: Callable[..., tuple[torch.Tensor, torch.Tensor]], *, turn: Turn, seed: int = 0) -> bool:
    """Exercise 2: check ``fn(q_c, k_c, v_c, S) -> (inter, S_next)`` against the package
    (see :func:`inter_chunk_reference`)."""
    g = torch.Generator().manual_seed(seed)
    return check_function(fn, inter_chunk_reference, _chunk_cases(g), turn=turn, rtol=1e-8, atol=1e-10,
                          case_hints=[_("a non-empty carried memory"), _("a chunk of one token"), "",
                                      "d_k ≠ d_v"],
                          mistakes=[(wrong, _(message)) for wrong, message in _CARRY_MISTAKES],
                          hint=_("return a pair (inter, S_next). After the chunk, what is left of what was "
                                 "carried in, and what has been added?"))


# ------------------------------------------------------------------ Exercise 3: measure the cost
def _loglog_slope(x: Sequence[float], y: Sequence[float]) -> float:
    lx = torch.tensor([math.log(float(a)) for a in x], dtype=torch.float64)
    ly = torch.tensor([math.log(float(b)) for b in y], dtype=torch.float64)
    lx, ly = lx - lx.mean(), ly - ly.mean()
    return float((lx * ly).sum() / (lx * lx).sum())


TASK = dict(d=32, chunk_size=64)
"""The task's setting: one sequence of shape (1, T, 32) for queries, keys and values, chunks of 64 tokens."""


def _cumulative(counts: dict[str, list[float]], truth: dict[str, list[int]]) -> bool:
    """Whether the counts are one counter that kept adding up every call (parallel, then chunk, at each
    length in turn): the running sum of the true counts, in that order."""
    order = [c for pair in zip(truth["parallel"], truth["chunk"], strict=True) for c in pair]
    running = list(itertools.accumulate(order))
    got = [c for pair in zip(counts["parallel"], counts["chunk"], strict=True) for c in pair]
    return all(math.isclose(a, b, rel_tol=1e-9) for a, b in zip(got, running, strict=True))


def _common_factor(counts: dict[str, list[float]], truth: dict[str, list[int]]) -> float | None:
    """The one factor (a batch of several sequences or heads) by which every count exceeds the code's count of
    one sequence, or None when the counts are not the code's at all."""
    ratios = [c / t for m in ("parallel", "chunk") for c, t in zip(counts[m], truth[m], strict=True)]
    factor = ratios[0]
    if factor < 1 or abs(factor - round(factor)) > 1e-9:
        return None
    return factor if all(math.isclose(r, factor, rel_tol=1e-9) for r in ratios) else None


def _judge_cost(result: Any) -> Verdict:
    Ts, flops = result
    if isinstance(Ts, (str, bytes)) or not isinstance(Ts, (list, tuple, range, torch.Tensor)):
        # Translators: {given} is the name of a Python type (str, int, dict, ...).
        return Verdict(False, _("Ts should be a list of sequence lengths, got {given}").format(
            given=type(Ts).__name__))
    try:
        Ts = [float(t) for t in Ts]
    except (TypeError, ValueError):
        return Verdict(False, _("Ts should hold whole numbers of tokens (sequence lengths)"))
    if any(not (math.isfinite(t) and t >= 1 and t == round(t)) for t in Ts):
        return Verdict(False, _("every sequence length in Ts should be a whole number of tokens, 1 or more"))
    if not isinstance(flops, dict) or not {"parallel", "chunk"} <= set(flops):
        return Verdict(False, _("flops should be a dict with the counts of the 'parallel' and 'chunk' forms"))
    try:
        counts = {m: [float(c) for c in flops[m]] for m in ("parallel", "chunk")}
    except (TypeError, ValueError):
        return Verdict(False, _("flops['parallel'] and flops['chunk'] should be lists of numbers (one count per "
                                "length)"))
    if any(len(c) != len(Ts) for c in counts.values()):
        return Verdict(False, _("each form needs one count per sequence length in Ts"))
    if any(not (math.isfinite(c) and c > 0) for cs in counts.values() for c in cs):
        return Verdict(False, _("every count should be a positive number of operations"))
    if len(set(Ts)) < 4 or max(Ts) < 8 * min(Ts):
        return Verdict(False, _("a slope needs at least 4 lengths spanning a factor of 8 or more"))
    truth = flop_sweep([int(t) for t in Ts], forms=("parallel", "chunk"), d_k=TASK["d"], d_v=TASK["d"],
                       chunk_size=TASK["chunk_size"])
    # Translators: {parallel} and {chunk} are Python lists of operation counts, one per sequence length.
    numbers = _("the code's counts for one (1, T, 32) sequence: parallel {parallel}, chunk {chunk}").format(
        parallel=truth["parallel"], chunk=truth["chunk"])
    if _cumulative(counts, truth):
        return Verdict(False, _("your counts only ever grow, each the one before it plus the next call's: does "
                                "one counter keep adding up every call?"), numbers,
                       hint=_("each count should be one call's work: open a fresh ex.FlopCounter() block around "
                              "each single call."))
    factor = _common_factor(counts, truth)
    if factor is None:
        return Verdict(False, _("your counts are not what the package's code does at your lengths (with (1, T, "
                                "32) inputs and chunks of 64): were they counted on the calls themselves, or "
                                "computed?"),
                       numbers,
                       hint=_("a formula is not a measurement: the code's parallel form does more than T²·d "
                              "multiply-adds, and its chunkwise form pads the last chunk. Count each call inside "
                              "its own ex.FlopCounter() block and keep that counter's flops."))
    slopes = {m: _loglog_slope(Ts, c) for m, c in counts.items()}
    seen = _("your log–log slopes: parallel {parallel:.2f}, chunk {chunk:.2f}").format(
        parallel=slopes["parallel"], chunk=slopes["chunk"])
    if not 0.85 <= slopes["chunk"] <= 1.15:
        return Verdict(False, _("you counted the code, but over your lengths the chunkwise count does not grow in "
                                "proportion to T: the claim is about long sequences"), seen,
                       hint=_("the chunkwise form cuts the sequence into chunks of 64 tokens and pads the last "
                              "one: what does it cost when the whole sequence fits in one chunk? Take lengths of "
                              "many chunks."))
    if not 1.85 <= slopes["parallel"] <= 2.15:
        return Verdict(False, _("you counted the code, but over your lengths the parallel count does not grow "
                                "like T²: are the sequences long enough for the T × T score matrix to dominate?"),
                       seen,
                       hint=_("at short lengths the parallel form's work on the values, which grows like T, still "
                              "weighs; take lengths up to a few thousand tokens."))
    ratio = counts["parallel"][-1] / counts["chunk"][-1]
    said = _("Log–log slopes of the counted operations: parallel {parallel:.2f}, chunkwise {chunk:.2f}; at T = {T} "
             "the chunkwise form does {ratio:.0f}× less work.").format(
        parallel=slopes["parallel"], chunk=slopes["chunk"], T=int(Ts[-1]), ratio=ratio)
    if factor > 1:
        # Translators: {slopes} is the sentence "Log–log slopes of the counted operations: ...", translated.
        return Verdict(True, _("your counts are the code's ({sequences:.0f} sequences per call). {slopes}").format(
            sequences=factor, slopes=said))
    # Translators: {slopes} is the sentence "Log–log slopes of the counted operations: ...", translated.
    return Verdict(True, _("your counts are the code's. {slopes}").format(slopes=said))


@BOOK.exercise(3, N_("measure the cost of the parallel and chunkwise forms"), kind="design", hints=[
        N_("The claim is about how the work grows with the sequence length T: a power law T^p shows as a "
           "straight line of slope p on log–log axes. Which lengths show the long-sequence behaviour of the "
           "chunkwise form, given that it cuts the sequence into chunks of 64 tokens?"),
        N_("Take at least four lengths doubling from a few chunks to a few thousand tokens (e.g. 128 … 2048). "
           "For each, draw random q, k, v of shape (1, T, 32), and count the floating-point operations of "
           "pl.linear_attention with mode='parallel' and with mode='chunk' (chunk_size=64) inside a "
           "`with ex.FlopCounter() as counter:` block; keep counter.flops."),
        N_("for T_ in Ts: for mode in flops: with ex.FlopCounter() as counter: "
           "pl.linear_attention(q_, k_, v_, mode=mode, chunk_size=64); flops[mode].append(counter.flops)"),
    ])
def check_cost_scaling(Ts: Any, flops: Any, *, turn: Turn) -> bool:
    """Exercise 3: judge the learner's operation counts.

    ``Ts`` the sequence lengths, ``flops`` a dict ``{"parallel": [...], "chunk": [...]}`` of counted
    floating-point operations. The counts must be the code's at the learner's own lengths (:func:`flop_sweep`
    at :data:`TASK`, up to one whole factor for a batch of sequences): the closed-form costs of the notebook are
    off there (the parallel form's code also does work that grows like T, the chunkwise form pads its last
    chunk), so a formula returned as a count is caught. Then the log–log slope (least squares over all the
    learner's lengths) must lie in [1.85, 2.15] for the parallel form and in [0.85, 1.15] for the chunkwise
    form: the two costs the theory predicts (T² and T), measured on the package's actual code.
    """
    return check_measurement(lambda: pending(Ts, flops), _judge_cost, turn=turn,
                             expects=_("Ts, a list of sequence lengths, and flops, a dict {'parallel': [...], "
                                       "'chunk': [...]} with one count per length"),
                             hint=_("count one call of each form per length, each inside its own "
                                    "ex.FlopCounter() block."))


_MATMULS = {"mm": (0, 1), "addmm": (1, 2), "bmm": (0, 1), "baddbmm": (1, 2)}


class FlopCounter(TorchDispatchMode):
    """Count the floating-point operations of the matrix products run inside a ``with`` block.

    Every ``mm``/``addmm`` of an (m, k) by a (k, n) matrix adds ``2 m k n`` (one multiply and one add per
    term), every ``bmm``/``baddbmm`` ``2 b m k n``; elementwise work is not counted. The same rule as
    ``torch.utils.flop_counter.FlopCounterMode`` (which the tests compare it with), without loading the
    compiler stack that the latter imports (several seconds on first use). Works on any device, including
    ``meta`` (shapes only, nothing computed).

    >>> with FlopCounter() as counter:                        # doctest: +SKIP
    ...     torch.randn(2, 3) @ torch.randn(3, 4)
    >>> counter.flops                                         # doctest: +SKIP
    48
    """

    def __init__(self) -> None:
        super().__init__()
        self.flops = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        where = _MATMULS.get(func.overloadpacket.__name__)
        if where is not None:
            a, b = args[where[0]], args[where[1]]
            self.flops += 2 * math.prod(a.shape) * b.shape[-1]
        return func(*args, **(kwargs or {}))


def count_flops(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> int:
    """The floating-point operations of the matrix products that ``fn(*args, **kwargs)`` runs
    (see :class:`FlopCounter`: 2 per multiply-add; elementwise work is not counted)."""
    with FlopCounter() as counter:
        fn(*args, **kwargs)
    return int(counter.flops)


def flop_sweep(Ts: Sequence[int], *, forms: Sequence[str] = ("softmax", "parallel", "chunk"), d_k: int = 32,
               d_v: int = 32, chunk_size: int = 64, dtype: torch.dtype = torch.float32) -> dict[str, list[int]]:
    """The package's version of Exercise 3: counted operations of each attention form for each length T.

    Ts: sequence lengths; forms: ``"softmax"`` (:func:`pavlovlab.softmax_attention`) or a ``mode`` of
    :func:`pavlovlab.linear_attention` (``"parallel"``, ``"chunk"``, ``"recurrent"``). One sequence of shape
    (1, T, d) per call, on PyTorch's ``meta`` device: shapes only, nothing is computed, so the count is instant
    and depends on the code alone. Returns ``{form: [count per T]}``.
    """
    sizes = [check_int(f"Ts[{i}]", t, low=1) for i, t in enumerate(Ts)]
    out: dict[str, list[int]] = {}
    for form in forms:
        check_choice("forms", form, ("softmax", "parallel", "chunk", "recurrent"))
        out[form] = []
        for T in sizes:
            q = torch.empty(1, T, d_k, dtype=dtype, device="meta")
            v = torch.empty(1, T, d_v, dtype=dtype, device="meta")
            if form == "softmax":
                out[form].append(count_flops(softmax_attention, q, q, v))
            else:
                out[form].append(count_flops(linear_attention, q, q, v, mode=form, chunk_size=chunk_size))
    return out


def loglog_slope(x: Sequence[float], y: Sequence[float]) -> float:
    """The least-squares slope of log y against log x (a power law ``y ∝ x^p`` gives p)."""
    return _loglog_slope(x, y)


__all__ = ["BOOK", "TASK", "FlopCounter", "check_cost_scaling", "check_inter_chunk", "check_recurrent", "count_flops",
           "flop_sweep",
           "inter_chunk_reference", "loglog_slope", "recurrent_reference", "session"]
