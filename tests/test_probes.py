"""Tests for pavlovlab.probes: the designs as sequences, the probes on hand-built circuits (the known
answers), the statistics, and the trained-head read-out. Expected values come from independent
computations: Rescorla–Wagner's own recursion (pavlovlab.conditioning), literal loops, the closed form
(n − 1)/d_k, the model's own forward pass."""

from __future__ import annotations

import math

import pytest
import torch

from pavlovlab import conditioning, linear_attention, probes
from pavlovlab.models import TinyTransformer


def _count_o(x: torch.Tensor, outcome: torch.Tensor, n_keys: int) -> torch.Tensor:
    """Number of outcome positions holding o, per sequence (a literal count)."""
    ids = x[:, 1:-1:2].argmax(-1)
    return (ids == outcome[:, None]).sum(-1)


@pytest.mark.parametrize("design", probes.DESIGNS)
def test_sequences_are_paired_and_well_formed(design):
    g = torch.Generator().manual_seed(0)
    b = probes.make_probes(design, 50, m=2, n_pairs=8, generator=g)
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
    b = probes.make_probes("blocking", 20, m=1, n_pairs=4, generator=torch.Generator().manual_seed(1))
    cues = b.design[:, 0:-1:2, :16]
    two = cues.sum(-1) == 2
    assert (two.sum(-1) == 1).all()                          # one AB trial per sequence at m = 1
    test = b.design[:, -1, :16]
    assert (test.sum(-1) == 1).all()
    # the test cue B is one of the compound's two tokens
    ab = cues[two]
    assert ((ab * test).sum(-1) == 1).all()


def test_seeded_and_vectorised():
    a = probes.make_probes("extinction", 30, generator=torch.Generator().manual_seed(5))
    b = probes.make_probes("extinction", 30, generator=torch.Generator().manual_seed(5))
    assert torch.equal(a.design, b.design) and torch.equal(a.outcome, b.outcome)
    big = probes.make_probes("extinction", 300, generator=torch.Generator().manual_seed(6))
    assert big.design.shape[0] == 300


# ------------------------------------------------------------------------- sanity: hand-built circuits

@pytest.mark.parametrize("design", [d for d in probes.DESIGNS if d != "acquisition"])
def test_delta_memory_shows_every_phenomenon(design):
    e = probes.summarize(probes.circuit_effects(design, rule="delta", n=300)[None])
    assert e.lo > 0.05, (design, e)


@pytest.mark.parametrize("design", [d for d in probes.DESIGNS if d != "acquisition"])
def test_hebbian_memory_shows_none_with_additive_compounds(design):
    e = probes.summarize(probes.circuit_effects(design, rule="hebbian", n=300, compound="sum")[None])
    assert e.lo < 0 < e.hi or abs(e.mean) < 1e-9, (design, e)
    assert abs(e.mean) < 0.03


def test_hebbian_is_order_blind_exactly():
    x = probes.circuit_effects("extinction", rule="hebbian", n=50)
    assert x.abs().max() < 1e-12


def _rw_effect(design: str, m: int, lr: float) -> float:
    """The effect from Rescorla–Wagner's recursion on the CS vectors (A, B, C, X), US 1 for o, 0 for n."""
    spec = probes.trials(design, m)
    out = []
    for arm in ("design", "control"):
        cs = torch.tensor([[float(c in cues) for c in "ABCX"] for cues, _ in spec[arm]], dtype=torch.float64)
        us = torch.tensor([1.0 if o == "o" else 0.0 for _, o in spec[arm]], dtype=torch.float64)
        V = conditioning.rescorla_wagner(cs, us, alpha=lr)[-1]
        out.append(sum(V["ABCX".index(c)] for c in spec["test"]).item())
    diff = out[0] - out[1]
    return diff if spec["design_higher"] else -diff


@pytest.mark.parametrize("design", probes.DESIGNS)
def test_delta_memory_with_near_orthogonal_keys_matches_rescorla_wagner(design):
    # outcome o is one value, "nothing" another: the o component of the delta memory follows RW with
    # λ = 1 on o trials and 0 on n trials, once keys are near-orthogonal (d_key large).
    x = probes.circuit_effects(design, rule="delta", n=40, d_key=4096, lr=0.3, compound="sum")
    assert x.mean().item() == pytest.approx(_rw_effect(design, 2, 0.3), abs=0.03)


# ------------------------------------------------------------------------- statistics and verdicts

def test_summarize_matches_a_hand_computed_t_interval():
    x = torch.tensor([[1.0, 3.0], [2.0, 4.0], [6.0, 6.0]])
    means = [2.0, 3.0, 6.0]
    m = sum(means) / 3
    sd = math.sqrt(sum((v - m) ** 2 for v in means) / 2)
    e = probes.summarize(x)
    assert e.mean == pytest.approx(m)
    assert e.hi - e.mean == pytest.approx(4.303 * sd / math.sqrt(3), rel=1e-4)
    one = probes.summarize(torch.tensor([[1.0, 2.0, 3.0, 4.0]]))
    assert one.hi - one.mean == pytest.approx(3.182 * math.sqrt(5 / 3) / 2, rel=1e-4)


def test_observed_categories():
    E = probes.Effect
    assert E(1.0, 0.5, 1.5, (), 1).observed(0.2) == "effect"
    assert E(-1.0, -1.5, -0.5, (), 1).observed(0.2) == "reversed"
    assert E(0.1, 0.05, 0.15, (), 1).observed(0.2) == "small"
    assert E(0.0, -0.1, 0.1, (), 1).observed(0.2) == "none"
    assert E(0.5, -1.0, 2.0, (), 1).observed(0.2) == "inconclusive"


def test_verdicts_use_the_acquisition_scale_and_can_fail():
    res = {"linear": {"acquisition": torch.full((3, 4), 5.0) + torch.arange(3.0)[:, None] * 0.1,
                      "blocking": torch.full((3, 4), 2.0) + torch.arange(3.0)[:, None] * 0.1}}
    rows = {r["design"]: r for r in probes.verdicts(res)}
    assert rows["acquisition"]["holds"] is True
    assert rows["blocking"]["observed"] == "effect" and rows["blocking"]["holds"] is False   # linear predicts none
    assert "DISAGREES" in probes.verdict_sentence(rows["blocking"])


# ------------------------------------------------------------------------- trained models

def test_model_logits_equal_forward_on_one_hot_tokens():
    model = TinyTransformer(32, d_model=16, n_heads=2, d_head=8, attention="delta", seed=0).eval()
    tokens = torch.randint(32, (3, 9), generator=torch.Generator().manual_seed(0))
    w = torch.nn.functional.one_hot(tokens, 32).float()
    with torch.no_grad():
        assert torch.allclose(probes.model_logits(model, w), model(tokens), atol=1e-5)


def test_model_effects_shapes_on_untrained_models():
    runs = {a: [{"model": TinyTransformer(32, d_model=16, n_heads=2, d_head=8, attention=a, seed=s)}
                for s in (0, 1)] for a in ("linear", "softmax")}
    res = probes.model_effects(runs, ["acquisition", "blocking"], n=20)
    assert res["linear"]["blocking"].shape == (2, 20)
    assert torch.isfinite(res["softmax"]["acquisition"]).all()


def test_head_state_reads_what_linear_attention_reads():
    model = TinyTransformer(32, d_model=16, n_heads=2, d_head=8, attention="linear", seed=0).eval()
    tokens = torch.randint(32, (4, 11), generator=torch.Generator().manual_seed(2))
    st = probes.head_states(model, tokens)
    o = linear_attention(st["q"], st["k"], st["v"], mode="recurrent")
    assert torch.allclose((st["S"] @ st["q"][..., -1, :, None])[..., 0], o[..., -1, :], atol=1e-5)
    # and a literal loop over time gives the same state
    S = sum(st["v"][..., t, :, None] * st["k"][..., t, None, :] for t in range(11))
    assert torch.allclose(st["S"], S, atol=1e-5)


def test_crosstalk_of_random_unit_keys_is_n_minus_one_over_dk():
    g = torch.Generator().manual_seed(0)
    k = torch.nn.functional.normalize(torch.randn(4000, 9, 32, generator=g, dtype=torch.float64), dim=-1)
    assert probes.crosstalk(k).mean().item() == pytest.approx(8 / 32, rel=0.03)
    small = k[0]
    loop = sum((small[i] @ small[j]) ** 2 for i in range(9) for j in range(9) if i != j) / 9
    assert probes.crosstalk(small).item() == pytest.approx(loop.item())


def test_trained_head_crosstalk_returns_per_head_values():
    model = TinyTransformer(32, d_model=16, n_heads=2, d_head=8, attention="linear", seed=0).eval()
    h = probes.trained_head_crosstalk(model, n=16)
    assert h["crosstalk"].shape == h["random"].shape == (16, 2)
    assert h["eigvals"].shape == (16, 2, 8)
    assert float(h["theory"]) == pytest.approx(7 / 8)


# ------------------------------------------------------------------------- bad input

def test_bad_input_is_named():
    with pytest.raises(ValueError, match="design"):
        probes.make_probes("sensory preconditioning", 4)
    with pytest.raises(ValueError, match="n_keys"):
        probes.make_probes("blocking", 4, n_pairs=8, n_keys=6)
    with pytest.raises(TypeError, match="generator"):
        probes.make_probes("blocking", 4, generator=0)
    with pytest.raises(ValueError, match="rule"):
        probes.circuit_effects("blocking", rule="oja", n=4)
    model = TinyTransformer(32, d_model=16, n_heads=2, d_head=8, attention="softmax", seed=0)
    with pytest.raises(ValueError, match="model"):
        probes.head_states(model, torch.zeros(1, 3, dtype=torch.long))


def test_a_normalised_read_out_hides_the_phenomena_that_only_change_a_size():
    # overexpectation and overshadowing only scale A's association with o: its direction stays o, so a
    # read-out that keeps only the direction (like the models' per-head LayerNorm) cannot see them;
    # blocking and extinction change the direction and survive.
    acq = probes.circuit_effects("acquisition", rule="delta", n=40, d_key=4096, normalize=True).mean().item()
    over = probes.circuit_effects("overexpectation", rule="delta", n=40, d_key=4096, normalize=True).mean().item()
    ext = probes.circuit_effects("extinction", rule="delta", n=40, d_key=4096, normalize=True).mean().item()
    assert acq > 0.9 and abs(over) < 0.01 and ext > 0.5


def test_rw_effect_hand_computed_values():
    assert probes.rw_effect("acquisition", m=2, lr=0.5) == pytest.approx(0.75)   # 0.5 + 0.5·0.5
    assert probes.rw_effect("overshadowing", m=1, lr=0.25, compound="sum") == pytest.approx(0.0)  # A gets α either way
    assert probes.rw_effect("overshadowing", m=2, lr=0.25, compound="sum") == pytest.approx(0.4375 - 0.375)


def test_describe_names_the_roles():
    b = probes.make_probes("blocking", 2, generator=torch.Generator().manual_seed(0))
    text = probes.describe(b, 1)
    assert text.endswith("B ?") and "A+B→o" in text and text.count("A→o") == 2
    assert "C→o" in probes.describe(b, 1, "control")
