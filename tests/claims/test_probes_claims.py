"""The claims of notebook 08, each against an independent computation.

- the predictions for the encoding the models use (unit compound keys): a literal loop over trials with
  one strength per (cue, outcome), written here without the package, and closed forms (Hebbian
  overshadowing m·lr·(1 − 1/√2), the read-out norm ratio 1/√2 of overshadowing for every rule);
- the hand-built memories with random keys in many dimensions give the same numbers;
- the read-out norm before the per-head LayerNorm, recomputed from the head's q, k, v;
- the verdict rules (relative effects, size loss, separation) on hand-made numbers;
- the notebook's widget, driven through every option.
"""

from __future__ import annotations

import math

import matplotlib
import pytest
import torch

from pavlovlab.models import head_memory as hm
from pavlovlab.models.transformer import TinyTransformer
from pavlovlab.phenomena import probes
from pavlovlab.phenomena import sequences as designs
from pavlovlab.statistics import summarize
from pavlovlab.teach.report import verdict_sentence

matplotlib.use("Agg")

_TRIALS = {  # design -> (design trials, control trials, test cue, design arm responds more), m = 2
    "acquisition": ([("A", "o")] * 2, [("A", "n")] * 2, "A", True),
    "extinction": ([("A", "o")] * 2 + [("A", "n")] * 2, [("A", "n")] * 2 + [("A", "o")] * 2, "A", False),
    "blocking": ([("A", "o")] * 2 + [("AB", "o")] * 2, [("C", "o")] * 2 + [("AB", "o")] * 2, "B", False),
    "overshadowing": ([("AB", "o")] * 2, [("A", "o")] * 2, "A", False),
    "conditioned inhibition": ([("A", "o"), ("AX", "n")] * 2, [("A", "o"), ("BX", "n")] * 2, "X", False),
    "overexpectation": ([("A", "o")] * 2 + [("B", "o")] * 2 + [("AB", "o")] * 2,
                        [("A", "o")] * 2 + [("B", "o")] * 2 + [("AC", "o")] * 2, "A", False),
}


def _loop(trials, test, rule, unit, lr):
    """Strengths w[cue][outcome] after the trials; a compound of c cues presents each at 1/√c (unit) or 1."""
    w = {c: {"o": 0.0, "n": 0.0} for c in "ABCX"}
    for cues, out in trials:
        x = 1 / math.sqrt(len(cues)) if unit else 1.0
        for o in "on":
            target = 1.0 if o == out else 0.0
            error = target - sum(w[c][o] * x for c in cues) if rule == "delta" else target
            for c in cues:
                w[c][o] += lr * error * x
    return {o: sum(w[c][o] for c in test) for o in "on"}


def _effect(design, rule, unit, lr, readout="strength"):
    d, c, test, higher = _TRIALS[design]
    rd, rc = _loop(d, test, rule, unit, lr), _loop(c, test, rule, unit, lr)
    if readout == "norm":
        return math.hypot(rd["o"], rd["n"]) / math.hypot(rc["o"], rc["n"])

    def respond(r):
        if readout == "strength":
            return r["o"]
        n = math.hypot(r["o"], r["n"])
        return r["o"] / n if n else 0.0

    diff = respond(rd) - respond(rc)
    return diff if higher else -diff


# ------------------------------------------------------------------------- the predictions, derived

def test_the_literal_loop_reproduces_the_numbers_quoted_for_unit_compounds():
    # the numbers the notebook states: additive → unit compound keys, m = 2, lr = 0.5
    for design, (additive, unit) in {"blocking": (0.375, 0.281), "conditioned inhibition": (0.438, 0.266),
                                     "overexpectation": (0.375, 0.281)}.items():
        assert _effect(design, "delta", False, 0.5) == pytest.approx(additive, abs=5.01e-4)
        assert _effect(design, "delta", True, 0.5) == pytest.approx(unit, abs=5.01e-4)
    assert _effect("overshadowing", "hebbian", True, 0.5) == pytest.approx(1 - 1 / math.sqrt(2))
    assert _effect("overshadowing", "hebbian", False, 0.5) == pytest.approx(0.0)


@pytest.mark.parametrize("design", designs.DESIGNS)
@pytest.mark.parametrize("rule", ["hebbian", "delta"])
@pytest.mark.parametrize("compound", ["unit", "sum"])
@pytest.mark.parametrize("readout", designs.READOUTS)
def test_predicted_effect_matches_the_literal_loop(design, rule, compound, readout):
    for lr in (0.2, 0.5, 0.9):
        got = designs.predicted_effect(design, rule=rule, lr=lr, compound=compound, readout=readout)
        assert got == pytest.approx(_effect(design, rule, compound == "unit", lr, readout), abs=1e-12)


@pytest.mark.parametrize("design", designs.DESIGNS)
@pytest.mark.parametrize("compound", ["unit", "sum"])
def test_rw_effect_matches_the_literal_loop(design, compound):
    for lr in (0.1, 0.5, 1.0):
        assert designs.rw_effect(design, lr=lr, compound=compound) == pytest.approx(
            _effect(design, "delta", compound == "unit", lr), abs=1e-12)


def test_hebbian_overshadowing_closed_form_and_nothing_else():
    for m, lr in ((1, 0.5), (2, 0.5), (3, 0.2)):
        assert designs.predicted_effect("overshadowing", rule="hebbian", m=m, lr=lr) == pytest.approx(
            m * lr * (1 - 2 ** -0.5))
    for design in ("extinction", "blocking", "conditioned inhibition", "overexpectation"):
        assert designs.predicted_effect(design, rule="hebbian") == pytest.approx(0.0, abs=1e-15)


@pytest.mark.parametrize("lr", [0.1, 0.5, 1.0])
def test_overshadowing_reads_a_at_one_over_root_two_for_every_rule(lr):
    # the query A meets the unit compound key at cosine 1/√2, whatever the rule wrote along it
    for rule in ("hebbian", "delta"):
        assert designs.predicted_effect("overshadowing", rule=rule, lr=lr, readout="norm") == pytest.approx(
            2 ** -0.5)


@pytest.mark.parametrize("lr", [0.1, 0.3, 0.5, 0.8, 1.0])
def test_size_only_designs_lower_the_delta_norm_and_leave_the_hebbian_one(lr):
    for design in ("blocking", "overexpectation"):
        assert designs.predicted_effect(design, rule="delta", lr=lr, readout="norm") < 1 - 1e-3
        assert designs.predicted_effect(design, rule="hebbian", lr=lr, readout="norm") == pytest.approx(1.0)
        # and the direction does not change: the normalised read-out cannot see it without crosstalk
        assert designs.predicted_effect(design, rule="delta", lr=lr, readout="direction") == pytest.approx(
            0.0, abs=1e-12)


def test_prediction_table_follows_from_the_derivation():
    # "effect": the direction changes; "size only": only the strength; "none": neither
    for design in designs.DESIGNS:
        for attention, rule in (("linear", "hebbian"), ("delta", "delta")):
            direction = abs(designs.predicted_effect(design, rule=rule, readout="direction")) > 1e-9
            strength = abs(designs.predicted_effect(design, rule=rule)) > 1e-9
            expected = "effect" if direction else "size only" if strength else "none"
            assert designs.PREDICTIONS[design][attention] == expected, (design, attention)
    separating = {d for d in designs.DESIGNS if designs.PREDICTIONS[d]["delta"] != designs.PREDICTIONS[d]["linear"]}
    assert separating == set(designs.SEPARATING)


# ------------------------------------------------------------------------- the hand-built memories

@pytest.mark.parametrize("design", designs.DESIGNS)
@pytest.mark.parametrize("rule", ["hebbian", "delta"])
def test_hand_built_memory_with_unit_compounds_gives_the_derived_numbers(design, rule):
    # random unit keys in 4096 dims are nearly orthogonal: the probe must give the loop's numbers
    x = probes.circuit_effects(design, rule=rule, n=40, d_key=4096, lr=0.5, compound="unit")
    assert x.mean().item() == pytest.approx(_effect(design, rule, True, 0.5), abs=0.03)


def test_compound_keys_are_unit_by_default_and_sums_on_request():
    b = designs.make_probes("overshadowing", 30, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    unit = probes.memory_response(b.design, b.outcome, b.n_keys, rule="hebbian", d_key=4096,
                                  generator=torch.Generator().manual_seed(1))
    added = probes.memory_response(b.design, b.outcome, b.n_keys, rule="hebbian", d_key=4096, compound="sum",
                                   generator=torch.Generator().manual_seed(1))
    assert unit.mean().item() == pytest.approx(1 / math.sqrt(2), abs=0.03)     # 2 trials × 0.5 × 1/√2
    assert added.mean().item() == pytest.approx(1.0, abs=0.03)


# ------------------------------------------------------------------------- trained-model read-outs

def test_readout_norm_is_the_heads_read_out_before_their_layernorm():
    model = TinyTransformer(32, d_model=16, n_heads=2, d_head=8, attention="linear", seed=0).eval()
    tokens = torch.randint(32, (5, 9), generator=torch.Generator().manual_seed(3))
    st = hm.head_states(model, tokens)
    read = sum(st["v"][:, :, t] * (st["k"][:, :, t] * st["q"][:, :, -1]).sum(-1, keepdim=True) for t in range(9))
    expected = read.flatten(1).norm(dim=-1)                                  # loop over time, all heads
    got = probes.readout_norm(model, torch.nn.functional.one_hot(tokens, 32).float())
    assert torch.allclose(got, expected, atol=1e-5)
    with pytest.raises(ValueError, match="model"):
        probes.readout_norm(TinyTransformer(32, d_model=16, n_heads=2, d_head=8, attention="softmax", seed=0),
                            torch.zeros(1, 3, 32))


def test_model_effects_norm_measure_is_a_log_ratio():
    runs = {"delta": [{"model": TinyTransformer(32, d_model=16, n_heads=2, d_head=8, attention="delta", seed=0)}]}
    lr = probes.model_effects(runs, ["blocking"], n=12, measure="norm")["delta"]["blocking"]
    b = designs.make_probes("blocking", 12, generator=torch.Generator().manual_seed(123 + 2))
    m = runs["delta"][0]["model"]
    expected = (probes.readout_norm(m, b.design) / probes.readout_norm(m, b.control)).log()
    assert lr.shape == (1, 12) and torch.allclose(lr[0], expected, atol=1e-6)


# ------------------------------------------------------------------------- the verdict rules

def test_relative_effects_divide_seed_by_seed():
    res = {"acquisition": torch.tensor([[4.0, 6.0], [8.0, 12.0], [5.0, 5.0]]),
           "blocking": torch.tensor([[1.0, 1.0], [1.0, 3.0], [0.5, 0.5]])}
    r = [1 / 5, 2 / 10, 0.5 / 5]
    mean = sum(r) / 3
    sd = math.sqrt(sum((x - mean) ** 2 for x in r) / 2)
    e = probes.relative_effects(res, "blocking")
    assert e.mean == pytest.approx(mean) and e.hi - e.mean == pytest.approx(4.303 * sd / math.sqrt(3), rel=1e-4)


def test_size_loss_is_one_minus_the_geometric_ratio():
    ratios = torch.tensor([[0.5, 0.8], [0.6, 0.6], [0.9, 0.4]])
    e = probes.size_loss(ratios.log())
    geo = [math.sqrt(0.5 * 0.8), 0.6, math.sqrt(0.9 * 0.4)]
    logs = [math.log(g) for g in geo]
    m = sum(logs) / 3
    half = 4.303 * math.sqrt(sum((x - m) ** 2 for x in logs) / 2) / math.sqrt(3)
    assert e.mean == pytest.approx(1 - math.exp(m))
    assert (e.lo, e.hi) == pytest.approx((1 - math.exp(m + half), 1 - math.exp(m - half)))


def _res(delta_effect, linear_effect, seeds=5):
    jitter = torch.linspace(-0.01, 0.01, seeds)[:, None]
    acq = torch.full((seeds, 4), 5.0)
    return {"delta": {"acquisition": acq, "extinction": torch.full((seeds, 4), delta_effect) + jitter},
            "linear": {"acquisition": acq, "extinction": torch.full((seeds, 4), linear_effect) + jitter}}


def test_separation_rule_holds_fails_and_is_inconclusive():
    one = {"extinction": "response"}
    assert probes.separation_verdicts(_res(2.0, 0.0), {}, designs=one)[0]["holds"] is True      # 40 % vs 0 %
    assert probes.separation_verdicts(_res(0.1, 0.0), {}, designs=one)[0]["holds"] is False     # DeltaNet 2 %
    assert probes.separation_verdicts(_res(2.0, 1.5), {}, designs=one)[0]["holds"] is False     # linear 30 %
    noisy = _res(2.0, 0.0)
    noisy["delta"]["extinction"] = torch.tensor([[3.0], [-1.0], [2.5], [0.2], [4.0]]).expand(5, 4)
    assert probes.separation_verdicts(noisy, {}, designs=one)[0]["holds"] is None               # too wide
    norms = {"delta": {"blocking": torch.full((5, 3), math.log(0.5)) + torch.linspace(-0.01, 0.01, 5)[:, None]},
             "linear": {"blocking": torch.linspace(-0.01, 0.01, 5)[:, None].expand(5, 3)}}
    row = probes.separation_verdicts({}, norms, designs={"blocking": "norm"})[0]
    assert row["holds"] is True and row["delta"].mean == pytest.approx(0.5, abs=1e-3)


def test_verdicts_judge_on_the_acquisition_scale_with_its_uncertainty():
    res = {"linear": {"acquisition": torch.tensor([[5.0], [5.2], [4.8]]),
                      "blocking": torch.tensor([[2.0], [2.1], [1.9]])}}
    rows = {r["design"]: r for r in probes.verdicts(res)}
    assert rows["blocking"]["observed"] == "effect" and rows["blocking"]["holds"] is False   # linear predicts none
    acq = summarize(res["linear"]["acquisition"])
    assert (rows["blocking"]["margin_lo"], rows["blocking"]["margin_hi"]) == pytest.approx((0.1 * acq.lo, 0.1 * acq.hi))
    assert "DISAGREES" in verdict_sentence(rows["blocking"])


# ------------------------------------------------------------------------- a head's memory under load


# ------------------------------------------------------------------------- the widget

def test_probe_widget_runs_through_every_option():
    import matplotlib.pyplot as plt

    from pavlovlab.teach import widgets

    box = widgets.probe_widget(n=24)
    c = box.controls
    assert (c["design"].value, c["rule"].value, c["compound"].value) == ("extinction", "delta", "unit")
    for design in c["design"].options:
        for rule in c["rule"].options:
            c["design"].value, c["rule"].value = design, rule
            plt.close("all")
    c["compound"].value = "sum"
    for name in ("lr", "m", "d_key"):
        for value in (c[name].min, c[name].max):
            c[name].value = value
            plt.close("all")
    # the case that once crashed: identical arms (a constant response) draw as one bar
    fig = widgets.draw_probe("extinction", "hebbian", 0.5, 2, 64)
    assert "effect +0.00" in fig.axes[0].get_title()
    plt.close("all")


def test_new_options_name_what_they_expected():
    with pytest.raises(ValueError, match="compound"):
        designs.rw_effect("blocking", compound="product")
    with pytest.raises(ValueError, match="readout"):
        designs.predicted_effect("blocking", readout="logit")
    with pytest.raises(ValueError, match="measure"):
        probes.model_effects({}, measure="entropy")
    with pytest.raises(ValueError, match="threshold"):
        probes.separation_verdicts({}, {}, threshold=0.0)
