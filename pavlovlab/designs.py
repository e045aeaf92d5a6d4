"""Conditioning designs written as token sequences: the trials of each design and its control.

If a linear-attention layer is a Hebbian learner and a DeltaNet layer a Rescorla–Wagner learner
(arXiv:2508.08289), the classic conditioning phenomena become *predictions* about what a trained
model does with its context. This module writes each design as token sequences for the
associative-recall models of :mod:`pavlovlab.models`; :mod:`pavlovlab.probes` measures the response to
the test cue, design against control, in trained models and in hand-built memories.

**Token sequences.** A conditioning trial is two positions, a *cue* then an *outcome*, exactly like a
key–value pair of :func:`pavlovlab.tasks.associative_recall`; the sequence ends with a *test query*
(the cue alone), where the model's next-token distribution is read. Per sequence, four distinct key
tokens play the cues A, B, C, X; two distinct value tokens play the outcome ``o`` (the US, "food") and
``n`` (the outcome that replaces the US on non-reinforced trials: "no food" has no token of its own in
the recall vocabulary, so it is a second outcome that never follows the food cue elsewhere). The
design's trials sit, in order, at random slots among filler pairs (other keys, other values), so that
every sequence has ``n_pairs`` pairs like the training contexts.

**Compounds** (AB) are one cue position whose input embedding is the *sum* of the cues' embeddings
(Rescorla–Wagner's additive stimulus ``x_A = x_B = 1``). Adjacent tokens "A B o" would not do: the
models' token shift lets the outcome's write see only the token just before it, so A would be
invisible to it by construction. Sequences are therefore given as *token weights* ``(N, T, V)``
(one-hot for single tokens, two ones for a compound) and fed through the model's embedding table.

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

from collections.abc import Sequence
from typing import Any, NamedTuple

import torch
import torch.nn.functional as F

from ._checks import check_choice, check_int, check_real
from .conditioning import rescorla_wagner

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

PREDICTIONS: dict[str, dict[str, str]] = {
    d: {"delta": "effect", "linear": "effect" if d == "acquisition" else "none",
        "softmax": "effect" if d == "acquisition" else "none"} for d in DESIGNS}
"""What the theory predicts per design and attention (``"effect"``: the RW phenomenon; ``"none"``).

Delta (Rescorla–Wagner) attention shows every phenomenon; linear (Hebbian) attention only
acquisition: its state is an order-blind sum of writes, with the same number of ``o`` pairings in
design and control. Softmax attention is no conditioning learner at all; as a normalised kernel
smoother without a prediction error it is predicted to behave like the Hebbian sum.
"""


def trials(design: str, m: int = 2) -> dict[str, Any]:
    """The trial lists of a design: ``{"design": [(cues, outcome), ...], "control": [...], "test": cues,
    "design_higher": bool}`` with ``m`` repetitions of each block (see the module's table)."""
    d = check_choice("design", design, DESIGNS)
    m = check_int("m", m, low=1)
    make_d, make_c, test, higher = _SPECS[d]
    return {"design": make_d(m), "control": make_c(m), "test": test, "design_higher": higher}


class ProbeBatch(NamedTuple):
    """N paired sequences of one design.

    design, control: (N, T, V) token weights (one-hot rows, two ones at a compound cue), T = 2P + 1
    with P pairs, the test query last; outcome, nothing: (N,) the token ids of ``o`` and ``n``;
    cues: (N, 4) the key token ids that play A, B, C, X;
    n_keys: how many of the V token ids are keys (the rest are values); design_higher: the sign of the
    predicted effect (see :func:`pavlovlab.probes.effects`).
    """

    design: torch.Tensor
    control: torch.Tensor
    outcome: torch.Tensor
    nothing: torch.Tensor
    cues: torch.Tensor
    n_keys: int
    design_higher: bool


def make_probes(design: str, n: int, *, m: int = 2, n_pairs: int = 8, n_keys: int = 16, n_values: int = 16,
                generator: torch.Generator | None = None, dtype: torch.dtype = torch.float32,
                device: torch.device | str | None = None) -> ProbeBatch:
    """Draw ``n`` paired design/control sequences (vectorised; numbers drawn on the CPU ``generator``).

    Per sequence: cues A, B, C, X and the fillers' keys are distinct key tokens; ``o``, ``n`` distinct
    value tokens, fillers' values drawn from the other values. The P = max(``n_pairs``, trials) slots
    hold the design's trials in order at random slots and fillers elsewhere; design and control share
    every random choice. Returns a :class:`ProbeBatch` with weights (n, 2P + 1, n_keys + n_values).
    """
    spec = trials(design, m)
    N = check_int("n", n, low=1)
    check_int("n_pairs", n_pairs, low=1)
    n_trials = len(spec["design"])
    P = max(n_pairs, n_trials)
    n_fill = P - n_trials
    if check_int("n_keys", n_keys, low=1) < len(CUES) + n_fill:
        raise ValueError(f"n_keys: expected at least {len(CUES) + n_fill} (4 cues + {n_fill} fillers), got {n_keys}")
    if check_int("n_values", n_values, low=1) < 3:
        raise ValueError(f"n_values: expected at least 3 (o, n and a filler value), got {n_values}")
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(f"generator: expected a torch.Generator or None, got {type(generator).__name__}")
    V = n_keys + n_values
    keys = torch.rand(N, n_keys, generator=generator).argsort(-1)[:, :len(CUES) + n_fill]     # (N, 4 + F)
    vperm = torch.rand(N, n_values, generator=generator).argsort(-1)                           # (N, n_values)
    fill_vals = vperm.gather(1, 2 + torch.randint(n_values - 2, (N, max(n_fill, 1)), generator=generator))
    slots = torch.rand(N, P, generator=generator).argsort(-1)
    trial_slots = slots[:, :n_trials].sort(-1).values                                            # in order
    fill_slots = slots[:, n_trials:]
    eye_k = torch.eye(n_keys)

    def weights(trial_list: Sequence[tuple[str, str]]) -> torch.Tensor:
        cue_w = torch.zeros(N, P, n_keys)
        out_id = torch.zeros(N, P, dtype=torch.long)
        for i, (cues, outcome) in enumerate(trial_list):           # a few trials: the structure, not the data
            w = eye_k[keys[:, [CUES.index(c) for c in cues]]].sum(1)    # (N, n_keys): the cues' one-hots
            cue_w.scatter_(1, trial_slots[:, i, None, None].expand(N, 1, n_keys), w[:, None, :])
            o = vperm[:, 0] if outcome == "o" else vperm[:, 1]
            out_id.scatter_(1, trial_slots[:, i, None], o[:, None])
        if n_fill:
            cue_w.scatter_(1, fill_slots[..., None].expand(N, n_fill, n_keys), eye_k[keys[:, len(CUES):]])
            out_id.scatter_(1, fill_slots, fill_vals[:, :n_fill])
        x = torch.zeros(N, 2 * P + 1, V)
        x[:, 0:2 * P:2, :n_keys] = cue_w
        x[:, 1:2 * P:2, n_keys:] = F.one_hot(out_id, n_values).float()
        x[:, -1, :n_keys] = sum(eye_k[keys[:, CUES.index(c)]] for c in spec["test"])
        return x.to(device=device, dtype=dtype)

    return ProbeBatch(weights(spec["design"]), weights(spec["control"]), (n_keys + vperm[:, 0]).to(device),
                      (n_keys + vperm[:, 1]).to(device), keys[:, :len(CUES)].to(device), n_keys,
                      spec["design_higher"])


def rw_effect(design: str, *, m: int = 2, lr: float = 0.5) -> float:
    """Rescorla–Wagner's prediction of a design's effect (signed as :func:`pavlovlab.probes.effects`).

    Runs :func:`pavlovlab.conditioning.rescorla_wagner` on the trial lists with one CS per cue letter
    (a compound is both CSs present, x = 1 each), λ = 1 on ``o`` trials and 0 on ``n`` trials, α = ``lr``;
    the response is the summed strength of the test cues. It is what the delta memory gives with
    orthonormal keys (the fillers then do not interfere).
    """
    spec = trials(design, m)
    lr = check_real("lr", lr, low=0.0, low_open=True)
    out = []
    for arm in ("design", "control"):
        cs = torch.tensor([[float(c in cues) for c in CUES] for cues, _ in spec[arm]], dtype=torch.float64)
        us = torch.tensor([1.0 if o == "o" else 0.0 for _, o in spec[arm]], dtype=torch.float64)
        V = rescorla_wagner(cs, us, alpha=lr)[-1]
        out.append(float(sum(V[CUES.index(c)] for c in spec["test"])))
    diff = out[0] - out[1]
    return diff if spec["design_higher"] else -diff


def describe(batch: ProbeBatch, i: int = 0, arm: str = "design") -> str:
    """Sequence ``i`` of a batch as text: cues by letter (fillers as ``k<id>``), outcomes ``o``, ``n``
    (fillers' values as ``v<id>``), a compound as ``A+B``, the test query as ``A ?``."""
    x = {"design": batch.design, "control": batch.control}[check_choice("arm", arm, ("design", "control"))][i]
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


__all__ = ["CUES", "DESIGNS", "PREDICTIONS", "ProbeBatch", "describe", "make_probes", "rw_effect", "trials"]
