"""pavlovlab: the companion package of the course "Transformers as Pavlovian conditioning".

Attention is associative memory: keys are conditioned stimuli (the bell), values unconditioned
stimuli (the food), queries test stimuli. See arXiv:2508.08289.
"""

from .attention import delta_rule_attention, linear_attention, softmax_attention
from .device import default_device, seed_everything
from .memory import AssociativeMemory

__version__ = "0.2.0"
"""The course release (also pyproject.toml's version, CITATION.cff and the v0.2.0 tag the launch links use)."""
__all__ = [
    "AssociativeMemory",
    "default_device",
    "delta_rule_attention",
    "linear_attention",
    "seed_everything",
    "softmax_attention",
]
