"""Part 7, beyond the paper (notebook 08): conditioning phenomena as testable predictions about trained models.
The designs written as token sequences with their control arms (:mod:`.sequences`) and the probes that measure
them in memories and trained models (:mod:`.probes`).
"""

from .probes import (
    circuit_effects,
    effects,
    memory_response,
    model_effects,
    model_logits,
    model_response,
    readout_norm,
    relative_effects,
    separation_verdicts,
    size_loss,
    verdicts,
)
from .sequences import (
    COMPOUNDS,
    CUES,
    DESIGNS,
    PREDICTIONS,
    READOUTS,
    SEPARATING,
    ProbeBatch,
    describe,
    make_probes,
    predicted_effect,
    rw_effect,
    trials,
)

__all__ = [
    "COMPOUNDS",
    "CUES",
    "DESIGNS",
    "PREDICTIONS",
    "READOUTS",
    "SEPARATING",
    "ProbeBatch",
    "circuit_effects",
    "describe",
    "effects",
    "make_probes",
    "memory_response",
    "model_effects",
    "model_logits",
    "model_response",
    "predicted_effect",
    "readout_norm",
    "relative_effects",
    "rw_effect",
    "separation_verdicts",
    "size_loss",
    "trials",
    "verdicts",
]
