"""Every quadratic form (a T × T score matrix, an n × n Gram matrix) refuses up front, with the sizes and the
machine's memory, a size that cannot fit, as ``AssociativeMemory`` and ``random_keys`` do; the same calls at a
size that fits still run. The tensors passed are small (one feature): only the square is too large."""

from __future__ import annotations

import torch
from badinput import check, parametrize

import pavlovlab as pl
from pavlovlab.attention import forms as A
from pavlovlab.capacity import average as Ar
from pavlovlab.capacity import readouts as R
from pavlovlab.memory import hebbian as Hb
from pavlovlab.models import head_memory as Hm

LONG = 300_000                       # 300,000² float32 scores: 360 GB
VERY_LONG = 2 ** 20                  # 2²⁰ squared: 4.4 TB


def _seq(T: int) -> torch.Tensor:
    return torch.ones(T, 1)


def _fits(call) -> bool:
    out = call()
    return all(o.isfinite().all() for o in (out if isinstance(out, tuple) else (out,)))


ROWS = [
    ("softmax_attention(T = 300,000)", lambda: pl.softmax_attention(*(_seq(LONG),) * 3), ValueError,
     "k: the scores, batch × T_q × T = 9e+10 float32 entries (360 GB) do not fit in the"),
    ("softmax_attention(T = 300,000, causal=False)", lambda: pl.softmax_attention(*(_seq(LONG),) * 3, causal=False),
     ValueError, "of cpu memory; softmax attention is quadratic in T"),
    ("linear_attention(mode='parallel', T = 2²⁰)", lambda: pl.linear_attention(*(_seq(VERY_LONG),) * 3,
                                                                               mode="parallel"),
     ValueError, "mode: the parallel form's scores, batch × T × T = 1.1e+12 float32 entries (4.4 TB)"),
    ("linear_attention(chunk_size = T = 2²⁰)", lambda: pl.linear_attention(*(_seq(VERY_LONG),) * 3,
                                                                           chunk_size=VERY_LONG),
     ValueError, "chunk_size: the chunks' scores"),
    ("delta_rule_attention(chunk_size = T = 2²⁰)", lambda: pl.delta_rule_attention(*(_seq(VERY_LONG),) * 3, 0.5,
                                                                                   chunk_size=VERY_LONG),
     ValueError, "chunk_size: the chunks' scores"),
    ("scalar_gated_linear_attention(T = 2²⁰)", lambda: A.scalar_gated_linear_attention(
        *(_seq(VERY_LONG),) * 3, torch.full((VERY_LONG,), 0.9)), ValueError, "mode: the parallel form's scores"),
    ("crosstalk(n = 300,000)", lambda: Hb.crosstalk(_seq(LONG), _seq(LONG)), ValueError,
     "keys: the overlaps, batch × n × n = 9e+10 float32 entries (360 GB)"),
    ("store_and_recall(n = 300,000)", lambda: Ar.store_and_recall(_seq(LONG), _seq(LONG)), ValueError,
     "keys: the scores, batch × n × n"),
    ("readout_weights(N = 300,000)", lambda: R.readout_weights(_seq(LONG), _seq(LONG)), ValueError,
     "keys: the read-out weights, batch × N × N"),
    ("recall_sweep(ns up to 300,000)", lambda: Ar.recall_sweep(8, [10, LONG], trials=1), ValueError,
     "ns: one trial's Gram matrix, n × n for the largest n = 9e+10"),
    ("mean_squared_overlap(n = 300,000)", lambda: Hm.mean_squared_overlap(_seq(LONG)), ValueError,
     "keys: the overlaps, batch × n × n"),
    ("linear_attention(T = 2²⁰) in chunks runs", lambda: _fits(lambda: pl.linear_attention(
        *(_seq(VERY_LONG) * 1e-3,) * 3)), "ok", ""),
    ("softmax_attention(T = 2,000) runs", lambda: _fits(lambda: pl.softmax_attention(*(_seq(2000),) * 3)), "ok", ""),
]


@parametrize(ROWS)
def test_a_quadratic_form_that_cannot_fit_is_refused_up_front(call, expect, fragment):
    check(call, expect, fragment)
