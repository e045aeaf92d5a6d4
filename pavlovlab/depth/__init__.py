"""Part 5, depth against width (notebook 05): a stack of L layers of H heads, simulated (:mod:`.chain`), in closed
form with the paper's bound and derived bounds (:mod:`.theory`), and shapes compared at an equal budget
(:mod:`.contest`).
"""

from .chain import COMBINE, HopSample, RawChainResult, StackResult, chain_error, one_hop, raw_chain
from .contest import ShapeDifference, cached_shape_runs, same_task_budget, shape_difference
from .theory import (
    THEORY_RULES,
    hop_error_theory,
    hop_failure_bound,
    loss_threshold,
    paper_bound,
    raw_noise_theory,
    stack_error_theory,
)

__all__ = [
    "COMBINE",
    "THEORY_RULES",
    "HopSample",
    "RawChainResult",
    "ShapeDifference",
    "StackResult",
    "cached_shape_runs",
    "chain_error",
    "hop_error_theory",
    "hop_failure_bound",
    "loss_threshold",
    "one_hop",
    "paper_bound",
    "raw_chain",
    "raw_noise_theory",
    "same_task_budget",
    "shape_difference",
    "stack_error_theory",
]
