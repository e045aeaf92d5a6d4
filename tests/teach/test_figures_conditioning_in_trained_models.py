"""Notebook 08's figures draw what they are given: one point per design and memory, the seeds, every head,
every load, and the theory beside the measurement."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest
import torch

from pavlovlab import statistics
from pavlovlab.phenomena import probes, sequences
from pavlovlab.teach.figures import conditioning_in_trained_models as figures


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _points(ax) -> int:
    """Markers drawn by errorbar calls (their data lines have a marker)."""
    return sum(len(line.get_xdata()) for line in ax.lines if line.get_marker() == "o")


def test_circuit_effects_are_the_package_probes_per_rule_and_design():
    out = figures.circuit_effects(n=12, lr=0.3, progress=False)
    assert list(out) == ["hebbian", "delta"] and list(out["delta"]) == list(sequences.DESIGNS)
    for rule in out:
        for d in sequences.DESIGNS:
            assert out[rule][d].shape == (1, 12)
            torch.testing.assert_close(out[rule][d][0], probes.circuit_effects(d, rule=rule, n=12, lr=0.3))


def test_circuit_figure_shows_each_memory_beside_its_derived_effect():
    fig = figures.draw_circuit_effects(figures.circuit_effects(n=8, progress=False))
    ax = fig.axes[0]
    assert _points(ax) == 2 * len(sequences.DESIGNS)
    derived = [line for line in ax.lines if "(derived)" in line.get_label()]
    assert len(derived) == 2
    assert list(derived[0].get_ydata()) == [sequences.predicted_effect(d, rule="hebbian") for d in sequences.DESIGNS]
    assert [t.get_text() for t in ax.get_xticklabels()][2] == "blocking"


def test_blocking_sweep_figure_draws_the_theory_under_the_points():
    sweep = {lr: statistics.summarize(probes.circuit_effects("blocking", rule="delta", lr=lr, n=20)[None])
             for lr in (0.2, 0.6)}
    ax = figures.draw_blocking_sweep(sweep).axes[0]
    theory = next(line for line in ax.lines if line.get_linestyle() == "--")
    assert theory.get_ydata()[-1] == pytest.approx(sequences.rw_effect("blocking", lr=1.0))
    assert _points(ax) == 2


def _effects(seeds: int = 3, n: int = 5) -> dict[str, dict[str, torch.Tensor]]:
    g = torch.Generator().manual_seed(0)
    return {a: {d: torch.randn(seeds, n, generator=g, dtype=torch.float64) + (5.0 if d == "acquisition" else 0.0)
                for d in sequences.DESIGNS} for a in ("linear", "delta", "softmax")}


def test_model_effects_figure_has_acquisition_apart_and_every_seed():
    fig = figures.draw_model_effects(_effects(seeds=3))
    ax0, ax1 = fig.axes
    assert _points(ax0) == 3 and _points(ax1) == 3 * (len(sequences.DESIGNS) - 1)
    seeds = [line for line in ax1.lines if line.get_marker() == "."]
    assert len(seeds) == 3 * (len(sequences.DESIGNS) - 1) and all(len(s.get_ydata()) == 3 for s in seeds)
    assert len(ax1.patches) == 3                    # one band of negligible effects per attention


def _heads(models: int = 2, heads: int = 2, pairs: int = 4, n: int = 6) -> list[dict]:
    g = torch.Generator().manual_seed(1)
    out = []
    for _ in range(models):
        ev = torch.rand(n, heads, pairs, generator=g, dtype=torch.float64).sort(-1).values
        out.append({"overlap": torch.rand(n, heads, generator=g, dtype=torch.float64),
                    "random": torch.rand(n, heads, generator=g, dtype=torch.float64), "theory": torch.tensor(0.2),
                    "eigvals": ev, "eigvals_random": ev})
    return out


def test_key_crosstalk_figure_has_a_bar_per_head_and_a_spectrum_per_head():
    fig = figures.draw_key_crosstalk(_heads(models=2, heads=3, pairs=4))
    ax0, ax1 = fig.axes
    assert len(ax0.patches) == 2 * 2 * 3            # trained and random bars for 6 heads
    assert len([t for t in ax0.get_xticklabels()]) == 6
    spectra = [line for line in ax1.lines if line.get_marker() == "o"]
    assert len(spectra) == 6 and all(len(s.get_xdata()) == 4 for s in spectra)
    assert any(line.get_ydata()[0] == pytest.approx(0.2) for line in ax0.lines)   # (n − 1)/d_k dashed


def test_recall_figure_plots_each_head_against_the_capacity_limits_curve():
    loads = [{"n": torch.tensor([4, 8]), "accuracy": torch.tensor([1.0, 0.9]),
              "fidelity": -torch.tensor([[0.9, 0.5], [0.8, 0.4]]), "fidelity_theory": torch.tensor([[0.9, 0.9],
                                                                                                  [0.8, 0.8]])}]
    ax0, ax1 = figures.draw_recall_against_load(loads).axes
    assert list(ax0.lines[0].get_ydata()) == pytest.approx([1.0, 0.9])
    heads = [line for line in ax1.lines if line.get_marker() == "o"]
    assert len(heads) == 2 and min(heads[0].get_ydata()) > 0        # the size of a fidelity, whatever its sign


def test_head_orthogonality_judges_the_paired_difference():
    n = 50
    noise = torch.randn(n, 2, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    base = 0.4 + 0.01 * noise
    ev = torch.ones(n, 2, 3, dtype=torch.float64)
    heads = [{"overlap": base - torch.tensor([0.2, -0.3]), "random": base, "theory": torch.tensor(0.4),
              "eigvals": ev, "eigvals_random": ev}]
    out = figures.head_orthogonality(heads)
    assert [h["verdict"] for h in out] == ["more orthogonal than chance", "less orthogonal than chance"]
    assert out[0]["crosstalk"] == pytest.approx(float(base[:, 0].mean()) - 0.2)
    same = [{**heads[0], "overlap": base}]
    assert {h["verdict"] for h in figures.head_orthogonality(same)} == {"as random keys"}


def test_best_head_fidelity_follows_each_models_best_head():
    loads = [{"n": torch.tensor([4, 8]), "accuracy": torch.tensor([1.0, 0.8]),
              "fidelity": torch.tensor([[0.2, -0.9], [0.1, -0.7]]), "fidelity_theory": torch.tensor([[0.5, 0.9],
                                                                                                    [0.5, 0.6]])},
             {"n": torch.tensor([4, 8]), "accuracy": torch.tensor([0.9, 0.6]),
              "fidelity": torch.tensor([[0.8, 0.1], [0.6, 0.1]]), "fidelity_theory": torch.tensor([[0.8, 0.2],
                                                                                                  [0.7, 0.2]])}]
    out = figures.best_head_fidelity(loads)
    assert [x["n"] for x in out] == [4, 8]
    assert out[1]["recall"] == pytest.approx(0.7) and out[1]["lowest"] == pytest.approx(0.6)
    assert out[0]["fidelity"] == pytest.approx((0.9 + 0.8) / 2) and out[1]["curve"] == pytest.approx((0.6 + 0.7) / 2)


def _row(attention, design, observed, mean=0.5):
    e = statistics.Effect(mean, mean - 0.1, mean + 0.1, (mean,), 10)
    return {"attention": attention, "design": design, "observed": observed, "effect": e, "relative": e}


def test_observed_by_attention_groups_designs_by_what_was_seen():
    rows = [_row("linear", "acquisition", "effect"), _row("linear", "extinction", "none"),
            _row("linear", "blocking", "none"), _row("delta", "extinction", "effect")]
    assert figures.observed_by_attention(rows) == [" linear: effect: acquisition | none: extinction, blocking",
                                                   "  delta: effect: extinction"]


def test_claim_evidence_counts_verdicts_and_names_the_closest_call():
    e = lambda m, lo, hi: statistics.Effect(m, lo, hi, (m,), 10)                       # noqa: E731
    separation = [dict(design="extinction", readout="response", delta=e(0.6, 0.4, 0.8), linear=e(0.0, -0.02, 0.02),
                       holds=True, threshold=0.1),
                  dict(design="blocking", readout="norm", delta=e(0.2, 0.11, 0.3), linear=e(0.0, -0.05, 0.05),
                       holds=True, threshold=0.1),
                  dict(design="overexpectation", readout="norm", delta=e(0.1, 0.0, 0.2), linear=e(0.0, -0.05, 0.05),
                       holds=None, threshold=0.1)]
    model_rows = [_row(a, d, "effect") for a in ("delta", "linear")
                  for d in ("extinction", "blocking", "overexpectation")]
    lines = figures.claim_evidence(separation, model_rows, _heads(), [
        {"n": torch.tensor([4, 8]), "accuracy": torch.tensor([1.0, 0.9]), "fidelity": torch.tensor([[0.9], [0.8]]),
         "fidelity_theory": torch.tensor([[0.9], [0.75]])}])
    assert lines[0].startswith("1.") and "2 of 3 separating predictions hold, 0 fail, 1 are inconclusive" in lines[0]
    assert any("closest call: DeltaNet's lower end in blocking, +0.11, against 0.1" in x for x in lines)
    assert any(x.startswith("2.") and x.endswith(": holds") for x in lines)
    assert "within 0.05 of notebook 04's curve" in lines[-1] and "recall 0.90 at 8 pairs" in lines[-1]


def test_trained_effects_are_the_package_probes_one_design_at_a_time():
    from pavlovlab.models import training
    runs = training.train_models(("linear",), seeds=(0,), steps=2, progress=False)
    for measure in ("response", "norm"):
        ours = figures.trained_effects(runs, n=6, measure=measure, progress=False)
        theirs = probes.model_effects(runs, n=6, measure=measure)
        for d in sequences.DESIGNS:
            torch.testing.assert_close(ours["linear"][d], theirs["linear"][d])
