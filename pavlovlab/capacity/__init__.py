"""Part 4, capacity (notebook 04): how many bell→food pairs the bucket ``S`` holds. On average
(:mod:`.average`: fidelity and average capacity), per item under each retrieval criterion (:mod:`.criteria`:
capacity and its scaling with d_k), from the read-outs of every item after every write (:mod:`.readouts`).
"""

from .average import (
    CapacitySweep,
    RecallMetrics,
    average_capacity_theory,
    capacity_from_fidelity,
    capacity_sweep,
    fidelity_theory,
    n_grid,
    recall_sweep,
)
from .criteria import (
    CRITERIA,
    SCALINGS,
    CapacityScaling,
    RetrievalCapacity,
    capacity_scaling,
    local_slopes,
    retrieval_capacity,
    scaling_residuals,
    worst_case_bound,
)
from .readouts import (
    MEMORIES,
    adversarial_error_curve,
    decoding_curve,
    first_failure,
    min_cosine_curve,
    readout_weights,
)

__all__ = [
    "CRITERIA",
    "MEMORIES",
    "SCALINGS",
    "CapacityScaling",
    "CapacitySweep",
    "RecallMetrics",
    "RetrievalCapacity",
    "adversarial_error_curve",
    "average_capacity_theory",
    "capacity_from_fidelity",
    "capacity_scaling",
    "capacity_sweep",
    "decoding_curve",
    "fidelity_theory",
    "first_failure",
    "local_slopes",
    "min_cosine_curve",
    "n_grid",
    "readout_weights",
    "recall_sweep",
    "retrieval_capacity",
    "scaling_residuals",
    "worst_case_bound",
]
