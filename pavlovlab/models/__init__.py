"""Trained tiny Transformers whose attention is a conditioning circuit (notebooks 04 §8, 05 and 08): the model
(:mod:`.transformer`), its synthetic tasks (:mod:`.tasks`), its training (:mod:`.training`) and the memory
inside a trained head (:mod:`.head_memory`).
"""

from .head_memory import head_states, mean_squared_overlap, recall_against_load, trained_head_overlaps
from .tasks import (
    IGNORE,
    RecallBatch,
    associative_recall,
    pointer_chasing,
    pointer_vocab_size,
    vocab_size,
)
from .training import evaluate, steps_to_threshold, train_configs, train_models, train_recall, train_recall_batched
from .transformer import ATTENTIONS, Block, TinyTransformer, count_parameters, depth_width_configs

__all__ = [
    "ATTENTIONS",
    "IGNORE",
    "Block",
    "RecallBatch",
    "TinyTransformer",
    "associative_recall",
    "count_parameters",
    "depth_width_configs",
    "evaluate",
    "head_states",
    "mean_squared_overlap",
    "pointer_chasing",
    "pointer_vocab_size",
    "recall_against_load",
    "steps_to_threshold",
    "train_configs",
    "train_models",
    "train_recall",
    "train_recall_batched",
    "trained_head_overlaps",
    "vocab_size",
]
