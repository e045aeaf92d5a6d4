"""Part 3, linear attention (notebook 03): the conditioning circuit is causal linear attention. The public forms
(:mod:`.forms`: softmax, linear, gated linear and delta-rule attention in parallel, recurrent and chunk modes)
check their inputs and call the literal maths (:mod:`.literal`) or the fast chunk kernels (:mod:`.kernels`).
"""

from .forms import (
    BETA_MAX,
    FEATURE_MAPS,
    delta_rule_attention,
    linear_attention,
    scalar_gated_linear_attention,
    softmax_attention,
)

__all__ = ["BETA_MAX", "FEATURE_MAPS", "delta_rule_attention", "linear_attention", "scalar_gated_linear_attention",
           "softmax_attention"]
