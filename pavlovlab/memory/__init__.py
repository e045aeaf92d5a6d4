"""Part 2, Hebbian memory (notebook 02; its learning rules return in 06): the associative memory ``S`` written by a
learning rule and read by ``S q`` (:mod:`.associative`), and the Hebbian sum's crosstalk (:mod:`.hebbian`).
"""

from .associative import (
    RULES,
    AssociativeMemory,
    delta_update,
    hebbian_update,
    oja_clamped_update,
    oja_subspace_update,
    resolve_rule,
    step,
)
from .hebbian import crosstalk, measure_crosstalk_variance, outer_product_memory, recall_cosine

__all__ = [
    "RULES",
    "AssociativeMemory",
    "crosstalk",
    "delta_update",
    "hebbian_update",
    "measure_crosstalk_variance",
    "oja_clamped_update",
    "oja_subspace_update",
    "outer_product_memory",
    "recall_cosine",
    "resolve_rule",
    "step",
]
