"""Conditioning designs written as token sequences: the trials of each design and its control.

If a linear-attention layer is a Hebbian learner and a DeltaNet layer a Rescorla–Wagner learner
(arXiv:2508.08289), the classic conditioning phenomena become *predictions* about what a trained
model does with its context. This module writes each design as token sequences for the
associative-recall models of :mod:`pavlovlab.models`; :mod:`pavlovlab.phenomena.probes` measures the response to
the test cue, design against control, in trained models and in hand-built memories.

**Token sequences.** A conditioning trial is two positions, a *cue* then an *outcome*, exactly like a
key–value pair of :func:`pavlovlab.models.tasks.associative_recall`; the sequence ends with a *test query*
(the cue alone), where the model's next-token distribution is read. Per sequence, four distinct key
tokens play the cues A, B, C, X; two distinct value tokens play the outcome ``o`` (the US, "food") and
``n`` (the outcome that replaces the US on non-reinforced trials: "no food" has no token of its own in
the recall vocabulary, so it is a second outcome that never follows the food cue elsewhere). The
design's trials sit, in order, at random slots among filler pairs (other keys, other values), so that
every sequence has ``n_pairs`` pairs like the training contexts.

**Compounds** (AB) are one cue position whose input embedding is the *sum* of the cues' embeddings.
Adjacent tokens "A B o" would not do: the models' token shift lets the outcome's write see only the
token just before it, so A would be invisible to it by construction. Sequences are therefore given as
*token weights* ``(N, T, V)`` (one-hot for single tokens, two ones for a compound) and fed through the
model's embedding table. The summed embedding then passes the block's LayerNorm, and linear and delta
blocks L2-normalise q and k: **a compound's key has unit norm**, close to ``(k_A + k_B)/‖k_A + k_B‖``
(``(k_A + k_B)/√2`` for orthogonal cue keys), not Rescorla–Wagner's additive ``x_A = x_B = 1``. The
hand-built memories and :func:`rw_effect` use this *unit* compound by default (``compound="unit"``,
each cue of a two-cue compound at intensity ``1/√2``); ``compound="sum"`` gives the additive one.

**Design and control.** Each design comes with a control sequence that uses the same tokens, the same
fillers at the same slots and the same number of pairings with ``o``; only the variable that the
theory says matters differs. The *effect* is signed so that it is positive when Rescorla–Wagner's
prediction holds (``design − control`` for acquisition, ``control − design`` for the others, whose
phenomena lower the response).

=====================  ===============================  ===============================  ====
design                 design trials                    control trials                   test
=====================  ===============================  ===============================  ====
acquisition            A→o ×m                           A→n ×m                           A
extinction             A→o ×m, A→n ×m                   A→n ×m, A→o ×m  (order swapped)  A
blocking               A→o ×m, AB→o ×m                  C→o ×m, AB→o ×m                  B
overshadowing          AB→o ×m                          A→o ×m                           A
conditioned inhibition (A→o, AX→n) ×m                   (A→o, BX→n) ×m                   X
overexpectation        A→o ×m, B→o ×m, AB→o ×m          A→o ×m, B→o ×m, AC→o ×m          A
=====================  ===============================  ===============================  ====
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import torch
import torch.nn.functional as F

from .._checks import check_choice, check_generator, check_int, check_real, checked_by, unchecked
from ..conditioning.learning import rescorla_wagner
from ..memory.associative import AssociativeMemory

# the algorithms of the doors this module calls, on the arguments it checked or built
_rescorla_wagner = unchecked(rescorla_wagner)
_read = unchecked(AssociativeMemory.read)

DESIGNS = ("acquisition", "extinction", "blocking", "overshadowing", "conditioned inhibition", "overexpectation")
"""The conditioning designs, in the order the notebook shows them."""

CUES = "ABCX"
"""The cue letters of the designs; each is a distinct key token in every sequence."""

# design -> (design trials, control trials, test cues, whether the design arm should respond MORE)
# a trial is (cues, outcome) with outcome "o" (the US) or "n" (no US); m copies of each block.
_SPECS: dict[str, tuple[Any, Any, str, bool]] = {
    "acquisition": (lambda m: [("A", "o")] * m, lambda m: [("A", "n")] * m, "A", True),
    "extinction": (lambda m: [("A", "o")] * m + [("A", "n")] * m,
                   lambda m: [("A", "n")] * m + [("A", "o")] * m, "A", False),
    "blocking": (lambda m: [("A", "o")] * m + [("AB", "o")] * m,
                 lambda m: [("C", "o")] * m + [("AB", "o")] * m, "B", False),
    "overshadowing": (lambda m: [("AB", "o")] * m, lambda m: [("A", "o")] * m, "A", False),
    "conditioned inhibition": (lambda m: [("A", "o"), ("AX", "n")] * m,
                               lambda m: [("A", "o"), ("BX", "n")] * m, "X", False),
    "overexpectation": (lambda m: [("A", "o")] * m + [("B", "o")] * m + [("AB", "o")] * m,
                        lambda m: [("A", "o")] * m + [("B", "o")] * m + [("AC", "o")] * m, "A", False),
}

_EFFECT, _SIZE, _NONE = "effect", "size only", "none"
PREDICTIONS: dict[str, dict[str, str]] = {
    "acquisition": {"delta": _EFFECT, "linear": _EFFECT, "softmax": _EFFECT},
    "extinction": {"delta": _EFFECT, "linear": _NONE, "softmax": _NONE},
    "blocking": {"delta": _SIZE, "linear": _NONE, "softmax": _NONE},
    "overshadowing": {"delta": _SIZE, "linear": _SIZE, "softmax": _EFFECT},
    "conditioned inhibition": {"delta": _EFFECT, "linear": _NONE, "softmax": _NONE},
    "overexpectation": {"delta": _SIZE, "linear": _NONE, "softmax": _NONE},
}
"""What each attention predicts for the model's response (the centred logit), derived for the encoding
the models use: unit compound keys and, in linear and delta blocks, a LayerNorm on each head's read-out.

With orthonormal cue keys and one-hot outcomes (:func:`predicted_effect`):

- ``"effect"``: the design changes the *direction* of the head's read-out ``S q`` (another outcome
  enters it): the phenomenon survives the per-head normalisation.
- ``"size only"``: the design changes only the read-out's *size* (the strength of ``o``): the
  normalisation hides it when keys do not interfere; with crosstalk a weaker signal has a smaller
  cosine with ``o``, so a positive effect of unpredicted size remains. The size itself is measured
  before the normalisation (:func:`readout_norm`).
- ``"none"``: neither size nor direction changes: the Hebbian sum is order-blind and blind to what was
  predicted (extinction, blocking, conditioned inhibition, overexpectation give exactly 0); softmax
  attention is order-blind and has no prediction error.

Overshadowing is "size only" for *both* rules: the test query A meets the unit compound key at cosine
``1/√2``, so every rule that reads ``S q`` reads A at ``1/√2`` of its strength after AB→o trials
(Hebbian: +0.29 of acquisition). For softmax the lower match moves attention to the fillers, which
changes the read-out's direction: an effect by similarity, without a prediction error.
"""

SEPARATING: dict[str, str] = {"extinction": "response", "blocking": "norm", "conditioned inhibition": "response",
                              "overexpectation": "norm"}
"""The designs whose prediction differs between DeltaNet and linear attention, with the read-out where the
difference is derived: the response for the designs that change the read-out's direction, the read-out's
norm before the per-head LayerNorm for those that change only its size (see :data:`PREDICTIONS`)."""


def _check_trials(design: str, m: int) -> dict[str, int]:
    """A design of :data:`DESIGNS` and its number of repetitions m >= 1 (as an int)."""
    check_choice("design", design, DESIGNS)
    return {"m": check_int("m", m, low=1)}


@checked_by(_check_trials)
def trials(design: str, m: int = 2) -> dict[str, Any]:
    """The trial lists of a design: ``{"design": [(cues, outcome), ...], "control": [...], "test": cues,
    "design_higher": bool}`` with ``m`` repetitions of each block (see the module's table)."""
    make_d, make_c, test, higher = _SPECS[design]
    return {"design": make_d(m), "control": make_c(m), "test": test, "design_higher": higher}


_trials = unchecked(trials)


class ProbeBatch(NamedTuple):
    """N paired sequences of one design.

    design, control: (N, T, V) token weights (one-hot rows, two ones at a compound cue), T = 2P + 1
    with P pairs, the test query last; outcome, nothing: (N,) the token ids of ``o`` and ``n``;
    cues: (N, 4) the key token ids that play A, B, C, X;
    n_keys: how many of the V token ids are keys (the rest are values); design_higher: the sign of the
    predicted effect (see :func:`pavlovlab.phenomena.probes.effects`).
    """

    design: torch.Tensor
    control: torch.Tensor
    outcome: torch.Tensor
    nothing: torch.Tensor
    cues: torch.Tensor
    n_keys: int
    design_higher: bool


def _check_probes(design: str, n: int, m: int, n_pairs: int, n_keys: int, n_values: int,
                  generator: torch.Generator | None) -> dict[str, int]:
    """The design and sizes of :func:`make_probes`: enough key tokens for the cues and the fillers, and 3 value
    tokens at least; n and m as ints."""
    m = _check_trials(design, m)["m"]
    n_trials = len(_trials(design, m)["design"])
    n = check_int("n", n, low=1)
    check_int("n_pairs", n_pairs, low=1)
    n_fill = max(n_pairs, n_trials) - n_trials
    if check_int("n_keys", n_keys, low=1) < len(CUES) + n_fill:
        raise ValueError(f"n_keys: expected at least {len(CUES) + n_fill} (4 cues + {n_fill} fillers), got {n_keys}")
    if check_int("n_values", n_values, low=1) < 3:
        raise ValueError(f"n_values: expected at least 3 (o, n and a filler value), got {n_values}")
    check_generator("generator", generator)
    return {"n": n, "m": m}


@checked_by(_check_probes)
def make_probes(design: str, n: int, *, m: int = 2, n_pairs: int = 8, n_keys: int = 16, n_values: int = 16,
                generator: torch.Generator | None = None, dtype: torch.dtype = torch.float32,
                device: torch.device | str | None = None) -> ProbeBatch:
    """Draw ``n`` paired design/control sequences (vectorised; numbers drawn on the CPU ``generator``).

    Per sequence: cues A, B, C, X and the fillers' keys are distinct key tokens; ``o``, ``n`` distinct
    value tokens, fillers' values drawn from the other values. The P = max(``n_pairs``, trials) slots
    hold the design's trials in order at random slots and fillers elsewhere; design and control share
    every random choice. Returns a :class:`ProbeBatch` with weights (n, 2P + 1, n_keys + n_values).
    """
    spec = _trials(design, m)
    n_trials = len(spec["design"])
    P = max(n_pairs, n_trials)
    n_fill = P - n_trials
    V = n_keys + n_values
    keys = torch.rand(n, n_keys, generator=generator).argsort(-1)[:, :len(CUES) + n_fill]     # (n, 4 + F)
    vperm = torch.rand(n, n_values, generator=generator).argsort(-1)                           # (n, n_values)
    fill_vals = vperm.gather(1, 2 + torch.randint(n_values - 2, (n, max(n_fill, 1)), generator=generator))
    slots = torch.rand(n, P, generator=generator).argsort(-1)
    trial_slots = slots[:, :n_trials].sort(-1).values                                            # in order
    fill_slots = slots[:, n_trials:]
    eye_k = torch.eye(n_keys)

    def weights(trial_list: Sequence[tuple[str, str]]) -> torch.Tensor:
        cue_w = torch.zeros(n, P, n_keys)
        out_id = torch.zeros(n, P, dtype=torch.long)
        for i, (cues, outcome) in enumerate(trial_list):           # a few trials: the structure, not the data
            w = eye_k[keys[:, [CUES.index(c) for c in cues]]].sum(1)    # (n, n_keys): the cues' one-hots
            cue_w.scatter_(1, trial_slots[:, i, None, None].expand(n, 1, n_keys), w[:, None, :])
            o = vperm[:, 0] if outcome == "o" else vperm[:, 1]
            out_id.scatter_(1, trial_slots[:, i, None], o[:, None])
        if n_fill:
            cue_w.scatter_(1, fill_slots[..., None].expand(n, n_fill, n_keys), eye_k[keys[:, len(CUES):]])
            out_id.scatter_(1, fill_slots, fill_vals[:, :n_fill])
        x = torch.zeros(n, 2 * P + 1, V)
        x[:, 0:2 * P:2, :n_keys] = cue_w
        x[:, 1:2 * P:2, n_keys:] = F.one_hot(out_id, n_values).float()
        x[:, -1, :n_keys] = sum(eye_k[keys[:, CUES.index(c)]] for c in spec["test"])
        return x.to(device=device, dtype=dtype)

    return ProbeBatch(weights(spec["design"]), weights(spec["control"]), (n_keys + vperm[:, 0]).to(device),
                      (n_keys + vperm[:, 1]).to(device), keys[:, :len(CUES)].to(device), n_keys,
                      spec["design_higher"])


_make_probes = unchecked(make_probes)


COMPOUNDS = ("unit", "sum")
"""How a compound cue's key is formed: ``"unit"``, the normalised sum of its cues' keys (the models'
encoding); ``"sum"``, the plain sum (Rescorla–Wagner's additive compound, each cue at intensity 1)."""


def _check_rw(design: str, m: int, lr: float, compound: str) -> dict[str, object]:
    """The design, m and α of :func:`rw_effect` (m as an int, α as a float) within Rescorla–Wagner's bound
    α·Σ x_i² <= 2 on every trial of the design (a unit compound has Σ x_i² = 1, a summed one c)."""
    m = _check_trials(design, m)["m"]
    lr = check_real("lr", lr, low=0.0, low_open=True)
    unit = check_choice("compound", compound, COMPOUNDS) == "unit"
    spec = _trials(design, m)
    together = 1 if unit else max(len(cues) for arm in ("design", "control") for cues, _ in spec[arm])
    if lr * together > 2:
        raise ValueError(f"lr: expected a number <= {2 / together:g} for {design!r}, whose trials present up to "
                         f"{together} cues together (Rescorla–Wagner needs α·(cues present) <= 2), got {lr:g}")
    return {"m": m, "lr": lr}


@checked_by(_check_rw)
def rw_effect(design: str, *, m: int = 2, lr: float = 0.5, compound: str = "unit") -> float:
    """Rescorla–Wagner's prediction of a design's effect (signed as :func:`pavlovlab.phenomena.probes.effects`).

    Runs :func:`pavlovlab.conditioning.rescorla_wagner` on the trial lists with one CS per cue letter,
    λ = 1 on ``o`` trials and 0 on ``n`` trials, α = ``lr``; a compound of c cues presents each at
    intensity ``x = 1/√c`` (``compound="unit"``: a unit-norm compound, as the models encode it) or
    ``x = 1`` (``"sum"``: the textbook's additive compound). The response is the test cues' summed
    strength. It is what the delta memory gives with orthonormal keys (the fillers then do not interfere).
    At m = 2, α = 0.5: blocking 0.281 (sum: 0.375), conditioned inhibition 0.266 (0.438),
    overexpectation 0.281 (0.375), overshadowing 0.220 (0.250).
    """
    spec = _trials(design, m)
    unit = compound == "unit"
    alpha, V0 = torch.tensor([lr], dtype=torch.float64), torch.zeros(len(CUES), dtype=torch.float64)  # as checked
    out = []
    for arm in ("design", "control"):
        cs = torch.tensor([[float(c in cues) / (math.sqrt(len(cues)) if unit else 1.0) for c in CUES]
                           for cues, _ in spec[arm]], dtype=torch.float64)
        us = torch.tensor([1.0 if o == "o" else 0.0 for _, o in spec[arm]], dtype=torch.float64)
        V = _rescorla_wagner(cs, us, alpha=alpha, beta=1.0, V0=V0)[-1]
        out.append(float(sum(V[CUES.index(c)] for c in spec["test"])))
    diff = out[0] - out[1]
    return diff if spec["design_higher"] else -diff


READOUTS = ("strength", "direction", "norm")
"""What is read from a memory's output ``r = S q``: its component on ``o`` (``"strength"``), its cosine with
``o`` (``"direction"``: what a normalisation of the read-out keeps) or its norm ``‖r‖`` (``"norm"``: what the
normalisation discards)."""


def _check_memory_probe(design: str, m: int, rule: str, lr: float, compound: str, readout: str
                        ) -> dict[str, object]:
    """The design, m (as an int), rule, rate (as a float), compound and read-out of :func:`predicted_effect`."""
    m = _check_trials(design, m)["m"]
    check_choice("rule", rule, ("hebbian", "delta"))
    lr = check_real("lr", lr, low=0.0, low_open=True)
    check_choice("compound", compound, COMPOUNDS)
    check_choice("readout", readout, READOUTS)
    return {"m": m, "lr": lr}


@checked_by(_check_memory_probe)
def predicted_effect(design: str, *, rule: str = "delta", m: int = 2, lr: float = 0.5, compound: str = "unit",
                     readout: str = "strength") -> float:
    """A design's effect on a memory with orthonormal cue keys and one-hot outcomes (no fillers, no crosstalk).

    The cues A, B, C, X are the standard basis of R⁴, a compound the (unit-normalised, with
    ``compound="unit"``) sum of its cues; ``o`` and ``n`` the basis of R². The trials are written in order
    with ``rule`` (``"hebbian"``: ``S += lr v kᵀ``, ``"delta"``: ``S += lr (v − S k) kᵀ``) and the test
    cue reads ``r = S q``. Returns, for ``readout`` ``"strength"`` and ``"direction"``, the signed effect
    of :func:`pavlovlab.phenomena.probes.effects` on ``r_o`` or ``r_o/‖r‖`` (0 where r = 0); for ``"norm"``, the ratio
    ``‖r_design‖ / ‖r_control‖`` (nan where the control reads nothing).
    For the Hebbian rule with unit compounds every strength effect is 0 except overshadowing,
    ``m·lr·(1 − 1/√2)``; for the delta rule the strengths are :func:`rw_effect`'s.
    """
    spec = _trials(design, m)
    unit = compound == "unit"
    reads = []
    for arm in ("design", "control"):
        k = torch.tensor([[float(c in cues) / (math.sqrt(len(cues)) if unit else 1.0) for c in CUES]
                          for cues, _ in spec[arm]], dtype=torch.float64)               # (trials, 4)
        v = torch.tensor([[1.0, 0.0] if o == "o" else [0.0, 1.0] for _, o in spec[arm]], dtype=torch.float64)
        mem = AssociativeMemory(len(CUES), 2, rule=rule, lr=lr, dtype=torch.float64)
        mem.write(k, v)
        q = torch.tensor([float(c in spec["test"]) for c in CUES], dtype=torch.float64)
        reads.append(_read(mem, q))
    if readout == "norm":
        den = float(reads[1].norm())
        return float(reads[0].norm()) / den if den > 0 else math.nan

    def respond(r: torch.Tensor) -> float:
        if readout == "strength":
            return float(r[0])
        norm = float(r.norm())
        return float(r[0]) / norm if norm > 0 else 0.0

    diff = respond(reads[0]) - respond(reads[1])
    return diff if spec["design_higher"] else -diff


def _check_sequence(batch: ProbeBatch, i: int, arm: str) -> dict[str, object]:
    """A :class:`ProbeBatch`, one of its sequences ``i`` (as an int) and one of its arms."""
    if not isinstance(batch, ProbeBatch):
        raise TypeError(f"batch: expected a ProbeBatch from make_probes, got {type(batch).__name__}")
    i = check_int("i", i, low=0, high=batch.design.shape[0] - 1)
    check_choice("arm", arm, ("design", "control"))
    return {"i": i}


@checked_by(_check_sequence)
def describe(batch: ProbeBatch, i: int = 0, arm: str = "design") -> str:
    """Sequence ``i`` of a batch as text: cues by letter (fillers as ``k<id>``), outcomes ``o``, ``n``
    (fillers' values as ``v<id>``), a compound as ``A+B``, the test query as ``A ?``."""
    x = (batch.design if arm == "design" else batch.control)[i]
    K = batch.n_keys
    letters = {int(j): c for j, c in zip(batch.cues[i].tolist(), CUES, strict=True)}
    o, n = int(batch.outcome[i]), int(batch.nothing[i])

    def cue(row: torch.Tensor) -> str:
        names = [letters.get(j, f"k{j}") for j in row[:K].nonzero()[:, 0].tolist()]
        return "+".join(sorted(names, key=lambda c: (c not in letters.values(), c)))

    def out(j: int) -> str:
        return "o" if j == o else "n" if j == n else f"v{j - K}"

    words = [f"{cue(x[t])}→{out(int(x[t + 1].argmax()))}" for t in range(0, x.shape[0] - 1, 2)]
    return "  ".join([*words, cue(x[-1]) + " ?"])


__all__ = ["COMPOUNDS", "CUES", "DESIGNS", "PREDICTIONS", "READOUTS", "SEPARATING", "ProbeBatch", "describe",
           "make_probes", "predicted_effect", "rw_effect", "trials"]
