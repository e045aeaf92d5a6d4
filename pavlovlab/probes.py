"""Conditioning designs as in-context probes of trained models, and the memory inside a trained head.

If a linear-attention layer is a Hebbian learner and a DeltaNet layer a Rescorla–Wagner learner
(arXiv:2508.08289), the classic conditioning phenomena become *predictions* about what a trained
model does with its context. This module writes each design as token sequences for the
associative-recall models of :mod:`pavlovlab.models`, measures the model's response to the test cue,
design against control, and checks the same probe on hand-built memories first.

**Token sequences.** A conditioning trial is two positions, a *cue* then an *outcome*, exactly like a
key–value pair of :func:`pavlovlab.tasks.associative_recall`; the sequence ends with a *test query*
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

Responses: for a trained model, the *centred logit* of ``o`` at the test query, ``z_o − mean_j z_j``
(nats of odds; :func:`model_response`), or the norm of the attention read-out before the per-head
LayerNorm (:func:`readout_norm`); for a hand-built :class:`~pavlovlab.memory.AssociativeMemory`
(random unit keys per cue token, one-hot outcomes), the read-out's component on ``o``, i.e. the
associative strength ``V`` (or its cosine with ``o``, or its norm).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import torch
import torch.nn.functional as F

from ._checks import check_choice, check_int, check_real, check_tensor
from .memory import AssociativeMemory
from .models import TinyTransformer, train_recall
from .tasks import associative_recall, vocab_size

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
    predicted effect (see :func:`effects`).
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
            w = sum(eye_k[keys[:, CUES.index(c)]] for c in cues)
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


# ---------------------------------------------------------------------------------------------- responses

def model_logits(model: TinyTransformer, weights: torch.Tensor) -> torch.Tensor:
    """Run a :class:`~pavlovlab.models.TinyTransformer` on token weights instead of token ids.

    weights: (N, T, V), rows one-hot (the model's ordinary input) or sums of one-hots (compound cues).
    The input embedding is ``weights @ E`` (E the model's embedding table), then the model's blocks,
    final LayerNorm and read-out, as in ``model.forward``. Returns logits (N, T, V).
    """
    check_tensor("weights", weights, rank=3)
    E = model.embed.weight
    if weights.shape[-1] != E.shape[0]:
        raise ValueError(f"weights: expected last dim = vocab_size {E.shape[0]}, got {weights.shape[-1]}")
    x = weights.to(E) @ E
    for block in model.blocks:
        x = block(x)
    return model.readout(model.ln_f(x))


@torch.no_grad()
def model_response(model: TinyTransformer, weights: torch.Tensor, outcome: torch.Tensor) -> torch.Tensor:
    """The model's response to the test query, (N,): the *centred logit* of ``outcome`` at the last
    position, ``z_o − mean_j z_j`` (nats of odds). Unlike ``log p(o)``, which saturates at 0 once the
    model is sure, it keeps growing with the evidence, like an associative strength."""
    was = model.training
    model.eval()
    z = model_logits(model, weights)[:, -1]
    model.train(was)
    z = z - z.mean(-1, keepdim=True)
    return z.gather(-1, outcome[:, None].to(z.device))[:, 0]


@torch.no_grad()
def readout_norm(model: TinyTransformer, weights: torch.Tensor, layer: int = 0) -> torch.Tensor:
    """The size of a block's attention read-out at the test query, before each head's LayerNorm, (N,).

    In linear and delta blocks every head's read-out ``o_h = S_h q_h`` (d_head) passes a LayerNorm that
    keeps its direction and discards its size; this returns ``‖(o_1, …, o_H)‖`` at the last position
    (the norm over all heads' read-outs together), computed by the model's own forward pass on
    ``weights`` (N, T, V) (see :func:`model_logits`). Softmax blocks have no such normalisation.
    """
    check_int("layer", layer, low=0)
    if layer >= len(model.blocks):
        raise ValueError(f"layer: expected < n_layers = {len(model.blocks)}, got {layer}")
    norm_layer = model.blocks[layer].out_norm
    if norm_layer is None:
        raise ValueError(f"model: expected linear or delta attention (a per-head LayerNorm), got "
                         f"{model.config['attention']!r}")
    seen: list[torch.Tensor] = []
    hook = norm_layer.register_forward_pre_hook(lambda _m, args: seen.append(args[0][:, :, -1]))
    was = model.training
    model.eval()
    try:
        model_logits(model, weights)
    finally:
        hook.remove()
        model.train(was)
    return seen[0].flatten(1).norm(dim=-1)                       # (N, H, d_head) -> (N,)


def memory_response(weights: torch.Tensor, outcome: torch.Tensor, n_keys: int, *, rule: str = "delta",
                    lr: float = 0.5, d_key: int = 64, normalize: bool = False, compound: str = "unit",
                    generator: torch.Generator | None = None) -> torch.Tensor:
    """The same probe on a hand-built circuit: an :class:`~pavlovlab.memory.AssociativeMemory`.

    Each key token gets a random unit key in ``d_key`` dims (drawn on ``generator``), a compound the sum
    of its cues' keys, normalised to unit norm with ``compound="unit"`` (as in the trained models, whose
    q and k are L2-normalised) or left as the sum with ``compound="sum"`` (Rescorla–Wagner's additive
    compound); each value token a one-hot value (d_v = number of value tokens). Every (cue,
    outcome) pair of the sequence is written in order with the memory's ``rule`` (``"hebbian"``:
    ``S += lr v kᵀ``; ``"delta"``: ``S += lr (v − S k) kᵀ``), then the test cue reads ``S q``.
    Returns the read-out's component on ``outcome`` (the associative strength), shape (N,); with
    ``normalize=True``, that component divided by the read-out's norm (its cosine with ``o``): what is
    left when, as in the trained models, each head's read-out passes a normalisation (LayerNorm)
    that keeps its direction and discards its size.
    """
    check_tensor("weights", weights, rank=3)
    check_int("n_keys", n_keys, low=1)
    # the memory runs in float64 on the CPU (a few hundred small sequences); the result comes back on
    # ``weights``' device and dtype
    check_choice("rule", rule, ("hebbian", "delta"))
    check_real("lr", lr, low=0.0, low_open=True)
    check_int("d_key", d_key, low=1)
    check_choice("compound", compound, COMPOUNDS)
    N, T, V = weights.shape
    K = F.normalize(torch.randn(n_keys, d_key, generator=generator, dtype=torch.float64), dim=-1)
    w = weights.double().cpu()
    k = w[:, 0:T - 1:2, :n_keys] @ K                          # (N, P, d_key): cue keys, compounds summed
    v = w[:, 1:T - 1:2, n_keys:]                               # (N, P, n_values): one-hot outcomes
    q = w[:, -1, :n_keys] @ K                                  # (N, d_key)
    if compound == "unit":
        k, q = F.normalize(k, dim=-1), F.normalize(q, dim=-1)
    mem = AssociativeMemory(d_key, V - n_keys, rule=rule, lr=lr, batch_shape=(N,), dtype=torch.float64)
    mem.write(k, v)
    read = mem.read(q)                                         # (N, n_values)
    if normalize:
        read = read / read.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    return read.gather(-1, (outcome.cpu() - n_keys)[:, None])[:, 0].to(device=weights.device, dtype=weights.dtype)


COMPOUNDS = ("unit", "sum")
"""How a compound cue's key is formed: ``"unit"``, the normalised sum of its cues' keys (the models'
encoding); ``"sum"``, the plain sum (Rescorla–Wagner's additive compound, each cue at intensity 1)."""


def effects(batch: ProbeBatch, respond) -> torch.Tensor:
    """Paired effects (N,): ``respond(design) − respond(control)``, sign-flipped when the design arm is
    predicted to respond less, so that a positive effect is Rescorla–Wagner's phenomenon.
    ``respond(weights) -> (N,)`` is e.g. ``lambda w: model_response(model, w, batch.outcome)``."""
    diff = respond(batch.design) - respond(batch.control)
    return diff if batch.design_higher else -diff


def rw_effect(design: str, *, m: int = 2, lr: float = 0.5, compound: str = "unit") -> float:
    """Rescorla–Wagner's prediction of a design's effect (the same sign convention as :func:`effects`).

    Runs :func:`pavlovlab.conditioning.rescorla_wagner` on the trial lists with one CS per cue letter,
    λ = 1 on ``o`` trials and 0 on ``n`` trials, α = ``lr``; a compound of c cues presents each at
    intensity ``x = 1/√c`` (``compound="unit"``: a unit-norm compound, as the models encode it) or
    ``x = 1`` (``"sum"``: the textbook's additive compound). The response is the test cues' summed
    strength. It is what the delta memory gives with orthonormal keys (the fillers then do not interfere).
    At m = 2, α = 0.5: blocking 0.281 (sum: 0.375), conditioned inhibition 0.266 (0.438),
    overexpectation 0.281 (0.375), overshadowing 0.220 (0.250).
    """
    from .conditioning import rescorla_wagner

    spec = trials(design, m)
    lr = check_real("lr", lr, low=0.0, low_open=True)
    unit = check_choice("compound", compound, COMPOUNDS) == "unit"
    out = []
    for arm in ("design", "control"):
        cs = torch.tensor([[float(c in cues) / (math.sqrt(len(cues)) if unit else 1.0) for c in CUES]
                           for cues, _ in spec[arm]], dtype=torch.float64)
        us = torch.tensor([1.0 if o == "o" else 0.0 for _, o in spec[arm]], dtype=torch.float64)
        V = rescorla_wagner(cs, us, alpha=lr)[-1]
        out.append(float(sum(V[CUES.index(c)] for c in spec["test"])))
    diff = out[0] - out[1]
    return diff if spec["design_higher"] else -diff


READOUTS = ("strength", "direction", "norm")
"""What is read from a memory's output ``r = S q``: its component on ``o`` (``"strength"``), its cosine with
``o`` (``"direction"``: what a normalisation of the read-out keeps) or its norm ``‖r‖`` (``"norm"``: what the
normalisation discards)."""


def predicted_effect(design: str, *, rule: str = "delta", m: int = 2, lr: float = 0.5, compound: str = "unit",
                     readout: str = "strength") -> float:
    """A design's effect on a memory with orthonormal cue keys and one-hot outcomes (no fillers, no crosstalk).

    The cues A, B, C, X are the standard basis of R⁴, a compound the (unit-normalised, with
    ``compound="unit"``) sum of its cues; ``o`` and ``n`` the basis of R². The trials are written in order
    with ``rule`` (``"hebbian"``: ``S += lr v kᵀ``, ``"delta"``: ``S += lr (v − S k) kᵀ``) and the test
    cue reads ``r = S q``. Returns, for ``readout`` ``"strength"`` and ``"direction"``, the signed effect
    of :func:`effects` on ``r_o`` or ``r_o/‖r‖`` (0 where r = 0); for ``"norm"``, the ratio
    ``‖r_design‖ / ‖r_control‖`` (nan where the control reads nothing).
    For the Hebbian rule with unit compounds every strength effect is 0 except overshadowing,
    ``m·lr·(1 − 1/√2)``; for the delta rule the strengths are :func:`rw_effect`'s.
    """
    spec = trials(design, m)
    rule = check_choice("rule", rule, ("hebbian", "delta"))
    lr = check_real("lr", lr, low=0.0, low_open=True)
    unit = check_choice("compound", compound, COMPOUNDS) == "unit"
    readout = check_choice("readout", readout, READOUTS)
    reads = []
    for arm in ("design", "control"):
        k = torch.tensor([[float(c in cues) / (math.sqrt(len(cues)) if unit else 1.0) for c in CUES]
                          for cues, _ in spec[arm]], dtype=torch.float64)               # (trials, 4)
        v = torch.tensor([[1.0, 0.0] if o == "o" else [0.0, 1.0] for _, o in spec[arm]], dtype=torch.float64)
        mem = AssociativeMemory(len(CUES), 2, rule=rule, lr=lr, dtype=torch.float64)
        mem.write(k, v)
        q = torch.tensor([float(c in spec["test"]) for c in CUES], dtype=torch.float64)
        reads.append(mem.read(q))
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


# ---------------------------------------------------------------------------------------------- statistics

_T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
         2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
         2.045, 2.042]


def t_quantile(df: int) -> float:
    """Student's t 97.5 % quantile for ``df`` degrees of freedom (table to 30, then the normal 1.96)."""
    df = check_int("df", df, low=1)
    return _T975[df - 1] if df <= 30 else 1.96


@dataclass(frozen=True)
class Effect:
    """An effect with its 95 % confidence interval: mean, lo, hi, and the per-seed means behind it."""

    mean: float
    lo: float
    hi: float
    seed_means: tuple[float, ...]
    n_sequences: int

    def observed(self, margin: float) -> str:
        """Classify the interval against 0 and a margin of negligible size.

        ``"effect"``: CI above 0 and mean above ``margin``; ``"reversed"``: the mirror image;
        ``"small"``: CI excludes 0 but |mean| ≤ margin (real, too small to matter); ``"none"``: CI
        inside ±margin and around 0; otherwise ``"inconclusive"`` (the interval is too wide to tell).
        """
        if self.lo > 0 and self.mean > margin:
            return "effect"
        if self.hi < 0 and self.mean < -margin:
            return "reversed"
        if (self.lo > 0 or self.hi < 0) and abs(self.mean) <= margin and -margin <= self.lo and self.hi <= margin:
            return "small"
        return "none" if -margin <= self.lo and self.hi <= margin else "inconclusive"


_AGREES = {"effect": {"effect"}, "none": {"none", "small"}, "size only": {"effect", "small", "none"}}


def summarize(x: torch.Tensor) -> Effect:
    """Effect and 95 % CI from effects x (seeds, N): the training seed is the unit of replication.

    With S ≥ 2 seeds: mean of the seed means ± t_{S−1} · sd(seed means)/√S. With one seed: the
    sequence-level interval, mean ± t_{N−1} · sd/√N.
    """
    check_tensor("x", x, rank=2)
    x = x.double()
    S, N = x.shape
    means = x.mean(-1)
    if S >= 2:
        half = t_quantile(S - 1) * means.std() / math.sqrt(S)
    else:
        half = t_quantile(max(N - 1, 1)) * x[0].std() / math.sqrt(N)
    m = means.mean().item()
    return Effect(m, m - half.item(), m + half.item(), tuple(means.tolist()), N)


# ---------------------------------------------------------------------------------------------- experiments

def circuit_effects(design: str, *, rule: str, n: int = 400, m: int = 2, lr: float = 0.5, d_key: int = 64,
                    n_pairs: int = 8, normalize: bool = False, compound: str = "unit", seed: int = 0) -> torch.Tensor:
    """Effects (N,) of ``design`` on the hand-built memory with ``rule`` (see :func:`memory_response`;
    ``normalize=True`` probes the read-out's direction only; ``compound`` as there)."""
    g = torch.Generator().manual_seed(check_int("seed", seed, low=0))
    batch = make_probes(design, n, m=m, n_pairs=n_pairs, generator=g, dtype=torch.float64)
    gk = torch.Generator().manual_seed(seed + 1)
    state = gk.get_state()

    def respond(w: torch.Tensor) -> torch.Tensor:
        gk.set_state(state)                                        # the same keys for design and control
        return memory_response(w, batch.outcome, batch.n_keys, rule=rule, lr=lr, d_key=d_key,
                               normalize=normalize, compound=compound, generator=gk)

    return effects(batch, respond)


def train_models(attentions: Sequence[str] = ("linear", "delta", "softmax"), seeds: Sequence[int] = (0, 1, 2), *,
                 n_pairs: int = 8, n_keys: int = 16, n_values: int = 16, steps: int = 300,
                 target_accuracy: float | None = 0.99, model_kwargs: Mapping[str, Any] | None = None,
                 progress: bool = True, **train_kwargs: Any) -> dict[str, list[dict[str, Any]]]:
    """Train one :class:`TinyTransformer` per (attention, seed) on associative recall.

    Returns ``{attention: [{"model", "history"} per seed]}``; model keywords default to
    ``d_model=32, n_heads=2, d_head=16`` (one layer, MLP) and are overridden by ``model_kwargs``.
    """
    from tqdm.auto import tqdm

    kw = dict(d_model=32, n_layers=1, n_heads=2, d_head=16)
    kw.update(model_kwargs or {})
    task = dict(n_pairs=n_pairs, n_keys=n_keys, n_values=n_values)
    out: dict[str, list[dict[str, Any]]] = {a: [] for a in attentions}
    for a, s in tqdm([(a, s) for a in attentions for s in seeds], disable=not progress, desc="models"):
        model = TinyTransformer(vocab_size(n_keys, n_values), attention=a, seed=s, **kw)
        hist = train_recall(model, task_kwargs=task, steps=steps, target_accuracy=target_accuracy, seed=s,
                            progress=False, **train_kwargs)
        out[a].append({"model": model.eval(), "history": hist})
    return out


def model_effects(runs: Mapping[str, Sequence[Mapping[str, Any]]], designs: Sequence[str] = DESIGNS, *,
                  n: int = 500, m: int = 2, n_pairs: int = 8, seed: int = 123,
                  measure: str = "response") -> dict[str, dict[str, torch.Tensor]]:
    """Effects of each design on each trained model: ``{attention: {design: (seeds, n)}}``.

    Every model sees the same ``n`` sequences per design (drawn from ``seed``); vocabulary sizes are
    read from the model's config (the recall task's ``n_keys = n_values = vocab/2``).
    ``measure="response"``: the signed effects of :func:`effects` on :func:`model_response`;
    ``measure="norm"``: ``log(‖o_design‖ / ‖o_control‖)`` per sequence, the log-ratio of the read-out
    norms before the per-head LayerNorm (:func:`readout_norm`; linear and delta models only).
    """
    measure = check_choice("measure", measure, ("response", "norm"))
    out: dict[str, dict[str, torch.Tensor]] = {}
    for a, rs in runs.items():
        out[a] = {}
        for d in designs:
            per_seed = []
            for r in rs:
                model = r["model"]
                V = model.config["vocab_size"]
                g = torch.Generator().manual_seed(seed + DESIGNS.index(d))
                device = next(model.parameters()).device
                batch = make_probes(d, n, m=m, n_pairs=n_pairs, n_keys=V // 2, n_values=V - V // 2, generator=g,
                                    device=device)
                if measure == "norm":
                    ratio = readout_norm(model, batch.design) / readout_norm(model, batch.control)
                    per_seed.append(ratio.log().cpu())
                else:
                    respond = functools.partial(model_response, model, outcome=batch.outcome)
                    per_seed.append(effects(batch, respond).cpu())
            out[a][d] = torch.stack(per_seed)
    return out


def relative_effects(results: Mapping[str, torch.Tensor], design: str) -> Effect:
    """A design's effect in units of the same model's acquisition effect, with its 95 % interval.

    ``results[design]`` and ``results["acquisition"]`` are effects (seeds, N) on the same models. Per
    seed ``r_s = mean(effect_s) / mean(acquisition_s)``; with S ≥ 2 seeds the interval is the
    t-interval of the r_s (so the scale's own uncertainty is in it), with one seed the sequence-level
    interval of ``effect / mean(acquisition)``.
    """
    x, acq = results[design].double(), results["acquisition"].double()
    if x.shape[0] != acq.shape[0]:
        raise ValueError(f"results: expected as many seeds for {design!r} as for acquisition, got "
                         f"{x.shape[0]} and {acq.shape[0]}")
    if x.shape[0] >= 2:
        return summarize((x.mean(-1) / acq.mean(-1))[:, None])
    return summarize(x / acq.mean())


def verdicts(results: Mapping[str, Mapping[str, torch.Tensor]], predictions: Mapping[str, Mapping[str, str]]
             = PREDICTIONS, *, margin_fraction: float = 0.1) -> list[dict[str, Any]]:
    """A row per (attention, design): the effect, the prediction, what was observed, and whether they agree.

    ``results[attention][design]`` are effects (seeds, N). An effect is judged in units of the model's own
    acquisition effect (:func:`relative_effects`, interval across seeds): ``margin_fraction`` of
    acquisition counts as negligible (see :meth:`Effect.observed`); acquisition itself is judged against 0.
    ``holds``: True when the observation agrees with the prediction (``"effect"``: an effect above the
    margin; ``"none"``: none or small; ``"size only"``: anything but reversed, the size being unpredicted),
    False when it contradicts it, None when inconclusive. Each row also carries ``margin``, the margin in
    nats, with ``margin_lo``/``margin_hi`` from acquisition's interval.
    """
    check_real("margin_fraction", margin_fraction, low=0.0)
    rows = []
    for a, per in results.items():
        acq = summarize(per["acquisition"]) if "acquisition" in per else None
        for d, x in per.items():
            e = summarize(x)
            rel = e if d == "acquisition" or acq is None else relative_effects(per, d)
            obs = e.observed(0.0) if d == "acquisition" else rel.observed(margin_fraction)
            pred = predictions[d][a]
            holds = None if obs == "inconclusive" else (obs in _AGREES[pred])
            rows.append(dict(attention=a, design=d, predicted=pred, observed=obs, holds=holds, effect=e,
                             relative=rel, margin=margin_fraction * acq.mean if acq else 0.0,
                             margin_lo=margin_fraction * acq.lo if acq else 0.0,
                             margin_hi=margin_fraction * acq.hi if acq else 0.0))
    return rows


def verdict_sentence(row: Mapping[str, Any], digits: int = 1) -> str:
    """One rounded line per verdict row, identical on every run of a seeded experiment."""
    e, r = row["effect"], row["relative"]
    word = {True: "agrees", False: "DISAGREES", None: "inconclusive"}[row["holds"]]
    rel = "" if row["design"] == "acquisition" else f" = {100 * r.mean:+.0f} % [{100 * r.lo:+.0f}, {100 * r.hi:+.0f}]"
    return (f"{row['attention']:>7} | {row['design']:<22} | predicted {row['predicted']:<9} | observed "
            f"{row['observed']:<12} | {e.mean:+.{digits}f} [{e.lo:+.{digits}f}, {e.hi:+.{digits}f}]{rel} | {word}")


def size_loss(log_ratios: torch.Tensor) -> Effect:
    """The fraction of the read-out's size a design removes, ``1 − ‖o_design‖/‖o_control‖``, with its 95 %
    interval, from log-ratios (seeds, N) (``model_effects(..., measure="norm")``): per seed the geometric
    mean ratio ``exp(mean log-ratio)``; the t-interval across seeds (sequence-level with one seed)."""
    check_tensor("log_ratios", log_ratios, rank=2)
    e = summarize(log_ratios)
    return Effect(1 - math.exp(e.mean), 1 - math.exp(e.hi), 1 - math.exp(e.lo),
                  tuple(1 - math.exp(v) for v in e.seed_means), e.n_sequences)


def separation_verdicts(responses: Mapping[str, Mapping[str, torch.Tensor]],
                        norms: Mapping[str, Mapping[str, torch.Tensor]], *, threshold: float = 0.1,
                        designs: Mapping[str, str] = SEPARATING) -> list[dict[str, Any]]:
    """The verdict on each prediction that separates DeltaNet from linear attention.

    For each design of ``designs`` (design -> ``"response"`` or ``"norm"``) the measured quantity is, per
    model, the effect in units of acquisition (:func:`relative_effects` on ``responses``) or the fraction of
    the read-out's size removed (:func:`size_loss` on ``norms``), each with its 95 % interval across seeds.
    The rule, fixed before measuring: the prediction (DeltaNet shows the phenomenon, linear attention does
    not) **holds** if DeltaNet's interval lies above ``threshold`` and linear attention's inside
    (−threshold, threshold); it **fails** if DeltaNet's interval lies below ``threshold`` or linear
    attention's above it; otherwise it is **inconclusive** (``holds`` None).
    """
    tau = check_real("threshold", threshold, low=0.0, low_open=True)
    rows = []
    for d, where in designs.items():
        check_choice("designs", where, ("response", "norm"))
        q = {a: relative_effects(responses[a], d) if where == "response" else size_loss(norms[a][d])
             for a in ("delta", "linear")}
        dl, li = q["delta"], q["linear"]
        if dl.lo > tau and -tau < li.lo and li.hi < tau:
            holds: bool | None = True
        elif dl.hi < tau or li.lo > tau:
            holds = False
        else:
            holds = None
        rows.append(dict(design=d, readout=where, delta=dl, linear=li, holds=holds, threshold=tau))
    return rows


# ---------------------------------------------------------------------------------------------- head memory

@torch.no_grad()
def head_states(model: TinyTransformer, tokens: torch.Tensor, layer: int = 0) -> dict[str, torch.Tensor]:
    """Queries, keys, values and final state of each head of a linear-attention block.

    tokens: (N, T) long. Recomputes the block's projections as its forward does (LayerNorm, token
    shift ``[x_t, x_{t−1}]``, unit-normalised q and k). Returns ``q, k, v`` (N, H, T, d_head) and
    ``S`` (N, H, d_head, d_head) = ``Σ_t v_t k_tᵀ``, the Hebbian memory after the whole sequence.
    """
    if not isinstance(tokens, torch.Tensor) or tokens.dtype != torch.long or tokens.dim() != 2:
        raise TypeError(f"tokens: expected a (N, T) long tensor, got {getattr(tokens, 'dtype', type(tokens).__name__)}")
    if model.config["attention"] != "linear" or model.config["feature_map"] != "identity":
        raise ValueError("model: expected a linear-attention TinyTransformer with the identity feature map")
    check_int("layer", layer, low=0)
    if layer >= len(model.blocks):
        raise ValueError(f"layer: expected < n_layers = {len(model.blocks)}, got {layer}")
    x = model.embed(tokens)
    for b in model.blocks[:layer]:
        x = b(x)
    blk = model.blocks[layer]
    N, T, _ = x.shape
    h = blk.ln1(x)
    h2 = torch.cat([h, F.pad(h, (0, 0, 1, 0))[:, :-1]], dim=-1)
    q, k, v = blk.qkv(h2).view(N, T, 3, blk.n_heads, blk.d_head).permute(2, 0, 3, 1, 4)
    q, k = F.normalize(q, dim=-1), F.normalize(k, dim=-1)
    return {"q": q, "k": k, "v": v, "S": v.mT @ k}


def crosstalk(keys: torch.Tensor) -> torch.Tensor:
    """Mean crosstalk per stored item: ``(1/n) Σ_j Σ_{i≠j} (k_i·k_j)²`` for unit keys (..., n, d_k) -> (...).

    For n independent random unit keys in d_k dims each overlap has E[(k_i·k_j)²] = 1/d_k, so the
    expected value is ``(n − 1)/d_k`` (notebook 04).
    """
    check_tensor("keys", keys, min_rank=2)
    G = keys @ keys.mT
    n = keys.shape[-2]
    off = G.pow(2).sum((-2, -1)) - G.diagonal(dim1=-2, dim2=-1).pow(2).sum(-1)
    return off / n


@torch.no_grad()
def trained_head_crosstalk(model: TinyTransformer, *, n_pairs: int = 8, n: int = 256,
                           seed: int = 7) -> dict[str, torch.Tensor]:
    """The memory inside each head of a trained linear model, on ``n`` held-out recall sequences.

    The keys that matter are those written at the value positions (they bind each value to its key).
    Returns ``crosstalk`` (N, H) of those P keys, ``random`` (N, H): the same for P random unit keys in
    d_head dims (an independent draw), ``theory`` = (P − 1)/d_head, ``eigvals`` (N, H, P) the spectra of
    the keys' Gram matrices (ascending) and ``eigvals_random`` for the random keys, and ``S_norm`` (N, H)
    = ‖S_T‖_F.
    """
    V = model.config["vocab_size"]
    g = torch.Generator().manual_seed(check_int("seed", seed, low=0))
    P = check_int("n_pairs", n_pairs, low=1)
    batch = associative_recall(check_int("n", n, low=1), n_pairs=P, n_keys=V // 2, n_values=V - V // 2, n_queries=1,
                               generator=g, device=next(model.parameters()).device)
    st = head_states(model, batch.tokens)
    k = st["k"][:, :, 1:2 * P:2].double().cpu()                        # (N, H, P, d): keys at value positions
    d = k.shape[-1]
    r = F.normalize(torch.randn(k.shape, generator=g, dtype=torch.float64), dim=-1)
    return {"crosstalk": crosstalk(k), "random": crosstalk(r), "theory": torch.tensor((P - 1) / d),
            "eigvals": torch.linalg.eigvalsh(k @ k.mT), "eigvals_random": torch.linalg.eigvalsh(r @ r.mT),
            "S_norm": st["S"].double().cpu().flatten(-2).norm(dim=-1)}


@torch.no_grad()
def recall_against_load(model: TinyTransformer, ns: Sequence[int], *, n: int = 256, seed: int = 11,
                        progress: bool = False) -> dict[str, torch.Tensor]:
    """A trained linear model's recall and its heads' memories as the number of stored pairs grows.

    For each n_pairs in ``ns`` (at most the model's n_keys), on ``n`` held-out recall sequences (seed
    ``seed``): ``accuracy`` (len(ns),), the model's recall (argmax = the right value); per head (len(ns), H):
    ``crosstalk``, the mean crosstalk of the keys written at the value positions (as
    :func:`trained_head_crosstalk`); ``fidelity``, the mean cosine between the head's read-out ``S q`` at
    the query and the value ``v_j`` the head wrote for the queried pair (its own q, k, v); and
    ``fidelity_theory``, notebook 04's mean cosine for unit keys and values, ``1/√(1 + c)``, at the measured
    crosstalk ``c`` of each sequence (averaged over sequences).
    """
    from tqdm.auto import tqdm

    V = model.config["vocab_size"]
    n_keys = V // 2
    ns = [check_int("ns", x, low=1, high=n_keys) for x in ns]
    N = check_int("n", n, low=1)
    device = next(model.parameters()).device
    out: dict[str, list[torch.Tensor]] = {"accuracy": [], "crosstalk": [], "fidelity": [], "fidelity_theory": []}
    was = model.training
    model.eval()
    for P in tqdm(ns, disable=not progress, desc="loads"):
        g = torch.Generator().manual_seed(check_int("seed", seed, low=0) + P)
        batch = associative_recall(N, n_pairs=P, n_keys=n_keys, n_values=V - n_keys, n_queries=1, generator=g,
                                   device=device)
        logits = model(batch.tokens)[:, -1]
        out["accuracy"].append((logits.argmax(-1) == batch.targets[:, -1]).double().mean().cpu())
        st = head_states(model, batch.tokens)
        k = st["k"][:, :, 1:2 * P:2].double().cpu()                             # (N, H, P, d)
        v = st["v"][:, :, 1:2 * P:2].double().cpu()
        q = st["q"][:, :, -1].double().cpu()                                     # (N, H, d)
        j = (batch.tokens[:, 0:2 * P:2] == batch.tokens[:, -1:]).double().argmax(-1).cpu()   # queried pair
        read = ((k @ q[..., None]).mT @ v)[..., 0, :]                            # (N, H, d): Σ_i v_i (k_i·q)
        target = v.gather(2, j[:, None, None, None].expand(-1, v.shape[1], 1, v.shape[-1]))[:, :, 0]
        c = crosstalk(k)                                                         # (N, H)
        out["crosstalk"].append(c.mean(0))
        out["fidelity"].append(F.cosine_similarity(read, target, dim=-1).mean(0))
        out["fidelity_theory"].append((1 + c).rsqrt().mean(0))
    model.train(was)
    res = {key: torch.stack(val) for key, val in out.items()}
    res["n"] = torch.tensor(ns)
    return res


__all__ = [
    "COMPOUNDS",
    "CUES",
    "DESIGNS",
    "PREDICTIONS",
    "READOUTS",
    "SEPARATING",
    "Effect",
    "ProbeBatch",
    "circuit_effects",
    "crosstalk",
    "describe",
    "effects",
    "head_states",
    "make_probes",
    "memory_response",
    "model_effects",
    "model_logits",
    "model_response",
    "predicted_effect",
    "readout_norm",
    "recall_against_load",
    "relative_effects",
    "rw_effect",
    "separation_verdicts",
    "size_loss",
    "summarize",
    "t_quantile",
    "train_models",
    "trained_head_crosstalk",
    "trials",
    "verdict_sentence",
    "verdicts",
]
