"""Tests for pavlovlab.phenomena.sequences: the conditioning designs as paired token sequences, their descriptions, and
Rescorla–Wagner's predictions (hand-computed from the recursion)."""

from __future__ import annotations

import math

import pytest
import torch
from badinput import check, parametrize

from pavlovlab.phenomena import sequences


def _count_o(x: torch.Tensor, outcome: torch.Tensor, n_keys: int) -> torch.Tensor:
    """Number of outcome positions holding o, per sequence (a literal count)."""
    ids = x[:, 1:-1:2].argmax(-1)
    return (ids == outcome[:, None]).sum(-1)


@pytest.mark.parametrize("design", sequences.DESIGNS)
def test_sequences_are_paired_and_well_formed(design):
    g = torch.Generator().manual_seed(0)
    b = sequences.make_probes(design, 50, m=2, n_pairs=8, generator=g)
    T = 2 * 8 + 1
    assert b.design.shape == b.control.shape == (50, T, 32)
    # cue positions hold 1 or 2 key tokens, outcome positions exactly one value token
    for x in (b.design, b.control):
        cues = x[:, 0:T - 1:2]
        assert set(cues[..., :16].sum(-1).unique().tolist()) <= {1.0, 2.0} and cues[..., 16:].sum() == 0
        outs = x[:, 1:T - 1:2]
        assert (outs[..., 16:].sum(-1) == 1).all() and outs[..., :16].sum() == 0
    assert (b.outcome != b.nothing).all() and (b.outcome >= 16).all()
    # the same number of o pairings in design and control (acquisition excepted: that is its variable)
    if design != "acquisition":
        assert torch.equal(_count_o(b.design, b.outcome, 16), _count_o(b.control, b.outcome, 16))
    # fillers are shared: positions where both arms hold a single token outside the design's cue set agree
    same = (b.design == b.control).all(-1)
    assert same.float().mean() > 0.5


def test_compound_is_the_sum_of_its_cues():
    b = sequences.make_probes("blocking", 20, m=1, n_pairs=4, generator=torch.Generator().manual_seed(1))
    cues = b.design[:, 0:-1:2, :16]
    two = cues.sum(-1) == 2
    assert (two.sum(-1) == 1).all()                          # one AB trial per sequence at m = 1
    test = b.design[:, -1, :16]
    assert (test.sum(-1) == 1).all()
    # the test cue B is one of the compound's two tokens
    ab = cues[two]
    assert ((ab * test).sum(-1) == 1).all()


def test_seeded_and_vectorised():
    a = sequences.make_probes("extinction", 30, generator=torch.Generator().manual_seed(5))
    b = sequences.make_probes("extinction", 30, generator=torch.Generator().manual_seed(5))
    assert torch.equal(a.design, b.design) and torch.equal(a.outcome, b.outcome)
    big = sequences.make_probes("extinction", 300, generator=torch.Generator().manual_seed(6))
    assert big.design.shape[0] == 300


# ------------------------------------------------------------------------- sanity: hand-built circuits

def test_rw_effect_hand_computed_values():
    assert sequences.rw_effect("acquisition", m=2, lr=0.5) == pytest.approx(0.75)   # 0.5 + 0.5·0.5
    assert sequences.rw_effect("overshadowing", m=1, lr=0.25, compound="sum") == pytest.approx(0.0)  # A gets α
    assert sequences.rw_effect("overshadowing", m=2, lr=0.25, compound="sum") == pytest.approx(0.4375 - 0.375)


def test_describe_names_the_roles():
    b = sequences.make_probes("blocking", 2, generator=torch.Generator().manual_seed(0))
    text = sequences.describe(b, 1)
    assert text.endswith("B ?") and "A+B→o" in text and text.count("A→o") == 2
    assert "C→o" in sequences.describe(b, 1, "control")


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="design"):
        sequences.make_probes("sensory preconditioning", 4)
    with pytest.raises(ValueError, match="n_keys"):
        sequences.make_probes("blocking", 4, n_pairs=8, n_keys=6)
    with pytest.raises(TypeError, match="generator"):
        sequences.make_probes("blocking", 4, generator=0)


# ---------------------------------------------------------------------------------------------------- bad input
def bad_input_rows() -> list:
    """Bad input of ``pavlovlab.phenomena.sequences``: one row ``(case, call, expect, fragment)`` a case."""
    batch = sequences.make_probes("blocking", 2, generator=torch.Generator().manual_seed(0))
    return [
        ("predicted_effect('nope')", lambda: sequences.predicted_effect("nope"), ValueError, "design: expected one of"),
        ("predicted_effect(rule='linear')", lambda: sequences.predicted_effect("blocking", rule="linear"), ValueError,
         "rule: expected one of"),
        ("predicted_effect(lr=nan)", lambda: sequences.predicted_effect("blocking", lr=math.nan), ValueError,
         "lr: expected"),
        ("predicted_effect: Hebbian overshadowing is m·lr·(1 − 1/√2) with unit compounds",
         lambda: abs(sequences.predicted_effect("overshadowing", rule="hebbian", m=2, lr=0.5)
                     - (1 - 2 ** -0.5)) < 1e-12,
         "ok", ""),
        ("rw_effect('blocking', lr=1.5, compound='sum')",
         lambda: sequences.rw_effect("blocking", lr=1.5, compound="sum"),
         ValueError, "lr: expected a number <= 1 for 'blocking'"),
        ("rw_effect('blocking', lr=1.0, compound='sum') at the bound",
         lambda: math.isfinite(sequences.rw_effect("blocking", lr=1.0, compound="sum")), "ok", ""),
        ("rw_effect('blocking', lr=2.5) (unit compounds)", lambda: sequences.rw_effect("blocking", lr=2.5), ValueError,
         "lr: expected a number <= 2 for 'blocking'"),
        ("rw_effect('blocking', lr=1.5) is stable for unit compounds",
         lambda: abs(sequences.rw_effect("blocking", lr=1.5)) < 1.0, "ok", ""),
        ("predicted_effect(lr=3) of the delta rule, beyond its bound",
         lambda: sequences.predicted_effect("blocking", lr=3.0), ValueError,
         "lr: expected a number <= 2 for the delta rule"),
        ("describe(batch, i=5)", lambda: sequences.describe(batch, i=5), ValueError, "i: expected an integer <= 1"),
        ("trials('nope')", lambda: sequences.trials("nope"), ValueError, "design: expected one of"),
    ]


@parametrize(bad_input_rows())
def test_bad_input_row(call, expect, fragment):
    check(call, expect, fragment)
