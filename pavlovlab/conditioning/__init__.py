"""Part 1, Pavlovian conditioning (notebook 01): the classic designs as trial tables (:mod:`.trials`) and the
trial-by-trial learners that run on them, Rescorla–Wagner and a Hebbian contrast (:mod:`.learning`).
"""

from .learning import (
    SIMULATORS,
    blocking_curve,
    blocking_theory,
    hebbian_conditioning,
    prediction,
    rescorla_wagner,
    simulate,
)
from .trials import (
    TABLES,
    Design,
    Labels,
    acquisition,
    blocking,
    blocking_control,
    conditioned_inhibition,
    extinction,
    overexpectation,
    overshadowing,
    partial_reinforcement,
    reacquisition,
)

__all__ = [
    "SIMULATORS",
    "TABLES",
    "Design",
    "Labels",
    "acquisition",
    "blocking",
    "blocking_control",
    "blocking_curve",
    "blocking_theory",
    "conditioned_inhibition",
    "extinction",
    "hebbian_conditioning",
    "overexpectation",
    "overshadowing",
    "partial_reinforcement",
    "prediction",
    "reacquisition",
    "rescorla_wagner",
    "simulate",
]
