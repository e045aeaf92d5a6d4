"""Bad input for the public attention forms at their edges: an empty key or value dimension, zero keys under
softmax, and a feature map that returns NaN (the warning must blame the feature map, not the inputs)."""

from __future__ import annotations

import math

import torch
from badinput import check, parametrize

from pavlovlab.attention import forms as A


def _nan_map(x):
    return x * math.nan


def _empty_delta(d_k, d_v, mode):
    """With d_k = 0 every read-out S_t q_t is a sum over nothing (zeros); with d_v = 0 it is empty. The state
    keeps its (empty) initial value."""
    q = k = torch.randn(2, 5, d_k, generator=torch.Generator().manual_seed(0))
    v = torch.randn(2, 5, d_v, generator=torch.Generator().manual_seed(1))
    o, S = A.delta_rule_attention(q, k, v, 0.5, mode=mode, return_state=True)
    return o.shape == (2, 5, d_v) and bool((o == 0).all()) and S.shape == (2, d_v, d_k)


def _softmax_zero_dim_uniform():
    """With d_k = 0 every score is 0: causal softmax attention is the running mean of the values."""
    v = torch.arange(6.0).reshape(1, 3, 2)
    o = A.softmax_attention(torch.zeros(1, 3, 0), torch.zeros(1, 3, 0), v, scale=1.0)
    expected = torch.tensor([[[0.0, 1.0], [1.0, 2.0], [2.0, 3.0]]])
    return bool(torch.allclose(o, expected))


def rows():
    ones = torch.ones(2, 3, 4)
    big = torch.full((2, 3, 4), 1e30)
    empty_k = torch.zeros(2, 0, 4)
    nan_v = torch.full((2, 5, 3), math.nan)
    return [
        *[(f"delta_rule_attention(d_k = 0, mode={m!r}): zeros", lambda m=m: _empty_delta(0, 3, m), "ok", "")
          for m in A.DELTA_MODES],
        *[(f"delta_rule_attention(d_v = 0, mode={m!r}): empty", lambda m=m: _empty_delta(4, 0, m), "ok", "")
          for m in A.DELTA_MODES],
        *[(f"delta_rule_attention(d_k = 0, NaN v, mode={m!r})",
           lambda m=m: A.delta_rule_attention(torch.zeros(2, 5, 0), torch.zeros(2, 5, 0), nan_v, 0.5, mode=m),
           ValueError, "v: expected finite values") for m in A.DELTA_MODES],
        ("delta_rule_attention(d_k = 0, beta = 3)",
         lambda: A.delta_rule_attention(torch.zeros(2, 5, 0), torch.zeros(2, 5, 0), torch.zeros(2, 5, 3), 3.0),
         ValueError, "beta: expected a number <= 2.0"),
        *[(f"linear_attention(feature_map returns NaN, mode={m!r}) warns naming the feature map",
           lambda m=m: A.linear_attention(ones, ones, ones, feature_map=_nan_map, mode=m), "warn",
           "the feature map returned NaN/inf values") for m in A.LINEAR_MODES],
        ("linear_attention(1e30 q, k) still blames the size of q, k",
         lambda: A.linear_attention(big, big, ones), "warn", "very large q, k or v overflow the dtype"),
        ("softmax_attention over zero keys (causal)", lambda: A.softmax_attention(ones, empty_k, empty_k),
         ValueError, "k: expected at least one key for 3 queries"),
        ("softmax_attention over zero keys (causal=False)",
         lambda: A.softmax_attention(ones, empty_k, empty_k, causal=False), ValueError,
         "k: expected at least one key for 3 queries"),
        ("softmax_attention of zero queries over zero keys: empty",
         lambda: A.softmax_attention(empty_k, empty_k, empty_k).shape == (2, 0, 4), "ok", ""),
        ("softmax_attention(q with 3 steps, k with 2) causal names q",
         lambda: A.softmax_attention(ones, ones[:, :2], ones[:, :2]), ValueError,
         "q: expected sequence length T (dim -2 of k, causal attention) = 2, got 3"),
        ("softmax_attention(d_k = 0) with the default scale 1/√d_k",
         lambda: A.softmax_attention(torch.zeros(1, 3, 0), torch.zeros(1, 3, 0), torch.ones(1, 3, 2)), ValueError,
         "q: expected a key dimension d_k >= 1 for the default scale"),
        ("softmax_attention(d_k = 0, scale=1): the running mean of v", _softmax_zero_dim_uniform, "ok", ""),
    ]


ROWS = rows()


@parametrize(ROWS)
def test_bad_input(call, expect, fragment):
    check(call, expect, fragment)
