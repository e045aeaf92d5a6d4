"""Tests for pavlovlab.phenomena.probes: the probes on hand-built circuits (the known answers), the verdicts, and
the trained models' logits. Expected values come from independent
computations: Rescorla–Wagner's own recursion (pavlovlab.conditioning), literal loops, the model's own
forward pass."""

from __future__ import annotations

import math

import pytest
import torch
from badinput import check, parametrize

from pavlovlab.conditioning import learning as conditioning
from pavlovlab.models.transformer import TinyTransformer
from pavlovlab.phenomena import probes, sequences
from pavlovlab.statistics import summarize
from pavlovlab.teach.report import verdict_sentence


@pytest.mark.parametrize("design", [d for d in sequences.DESIGNS if d != "acquisition"])
def test_delta_memory_shows_every_phenomenon(design):
    e = summarize(probes.circuit_effects(design, rule="delta", n=300)[None])
    assert e.lo > 0.05, (design, e)


@pytest.mark.parametrize("design", [d for d in sequences.DESIGNS if d != "acquisition"])
def test_hebbian_memory_shows_none_with_additive_compounds(design):
    x = probes.circuit_effects(design, rule="hebbian", n=300, compound="sum")
    e = summarize(x[None])
    assert e.lo < 0 < e.hi or abs(e.mean) < 1e-9, (design, e)
    assert abs(e.mean) < 0.03
    # the Hebbian o-strength is a sum over the o trials of k_cues·q: where both arms pair the same cues with o
    # (in any order), the arms read the same sum of the same key overlaps, so every sequence's effect is 0 up
    # to rounding, provided the two arms see the same keys
    spec = sequences.trials(design)
    if sorted(c for c, o in spec["design"] if o == "o") == sorted(c for c, o in spec["control"] if o == "o"):
        assert x.abs().max().item() < 1e-12, (design, x.abs().max().item())


def test_hebbian_is_order_blind_exactly():
    x = probes.circuit_effects("extinction", rule="hebbian", n=50)
    assert x.abs().max() < 1e-12


def _rw_effect(design: str, m: int, lr: float) -> float:
    """The effect from Rescorla–Wagner's recursion on the CS vectors (A, B, C, X), US 1 for o, 0 for n."""
    spec = sequences.trials(design, m)
    out = []
    for arm in ("design", "control"):
        cs = torch.tensor([[float(c in cues) for c in "ABCX"] for cues, _ in spec[arm]], dtype=torch.float64)
        us = torch.tensor([1.0 if o == "o" else 0.0 for _, o in spec[arm]], dtype=torch.float64)
        V = conditioning.rescorla_wagner(cs, us, alpha=lr)[-1]
        out.append(sum(V["ABCX".index(c)] for c in spec["test"]).item())
    diff = out[0] - out[1]
    return diff if spec["design_higher"] else -diff


@pytest.mark.parametrize("design", sequences.DESIGNS)
def test_delta_memory_with_near_orthogonal_keys_matches_rescorla_wagner(design):
    # outcome o is one value, "nothing" another: the o component of the delta memory follows RW with
    # λ = 1 on o trials and 0 on n trials, once keys are near-orthogonal (d_key large).
    # crosstalk at d_key = 4096 spreads the 40 paired effects by at most 0.006 (sd), so their mean has a
    # standard error of at most 0.001: the tolerance is 5 of those
    x = probes.circuit_effects(design, rule="delta", n=40, d_key=4096, lr=0.3, compound="sum")
    assert x.std().item() < 0.01
    assert x.mean().item() == pytest.approx(_rw_effect(design, 2, 0.3), abs=0.005)


# ------------------------------------------------------------------------- verdicts

def test_verdicts_use_the_acquisition_scale_and_can_fail():
    res = {"linear": {"acquisition": torch.full((3, 4), 5.0) + torch.arange(3.0)[:, None] * 0.1,
                      "blocking": torch.full((3, 4), 2.0) + torch.arange(3.0)[:, None] * 0.1}}
    rows = {r["design"]: r for r in probes.verdicts(res)}
    assert rows["acquisition"]["holds"] is True
    assert rows["blocking"]["observed"] == "effect" and rows["blocking"]["holds"] is False   # linear predicts none
    assert "DISAGREES" in verdict_sentence(rows["blocking"])


# ------------------------------------------------------------------------- trained models

def test_model_logits_equal_forward_on_one_hot_tokens():
    model = TinyTransformer(32, d_model=16, n_heads=2, d_head=8, attention="delta", seed=0).eval()
    tokens = torch.randint(32, (3, 9), generator=torch.Generator().manual_seed(0))
    w = torch.nn.functional.one_hot(tokens, 32).float()
    with torch.no_grad():
        assert torch.allclose(probes.model_logits(model, w), model(tokens), atol=1e-5)


def test_compound_key_cosine_is_what_the_forward_pass_keys():
    """The key the block computes in its own forward pass (captured at its projection) for [outcome, A + B] and
    for [outcome, A], normalised, every ordered pair of the 4 cue tokens after each of the 3 outcome tokens."""
    model = TinyTransformer(7, d_model=12, n_heads=2, d_head=5, attention="delta", seed=4).eval()
    got = probes.compound_key_cosine(model, 4)
    seen = []
    model.blocks[0].qkv.register_forward_hook(lambda mod, args, out: seen.append(out))
    expected = []
    for a in range(4):
        for b in range(4):
            if a == b:
                continue
            for p in range(4, 7):
                keys = []
                for cue in ([a, b], [a]):
                    w = torch.zeros(1, 2, 7)
                    w[0, 0, p] = 1.0
                    w[0, 1, cue] = 1.0
                    seen.clear()
                    probes.model_logits(model, w)
                    k = seen[0][0, 1].view(3, 2, 5)[1]                     # (H, d_head) at the cue's position
                    keys.append(torch.nn.functional.normalize(k, dim=-1))
                expected.append((keys[0] * keys[1]).sum(-1))
    torch.testing.assert_close(got, torch.stack(expected))
    with pytest.raises(ValueError, match="model"):
        probes.compound_key_cosine(TinyTransformer(7, attention="softmax", seed=0), 4)


def test_model_effects_shapes_on_untrained_models():
    runs = {a: [{"model": TinyTransformer(32, d_model=16, n_heads=2, d_head=8, attention=a, seed=s)}
                for s in (0, 1)] for a in ("linear", "softmax")}
    res = probes.model_effects(runs, ["acquisition", "blocking"], n=20)
    assert res["linear"]["blocking"].shape == (2, 20)
    assert torch.isfinite(res["softmax"]["acquisition"]).all()


# ------------------------------------------------------------------------- bad input

def test_bad_input_is_named():
    with pytest.raises(ValueError, match="rule"):
        probes.circuit_effects("blocking", rule="oja", n=4)


@pytest.mark.slow
def test_a_normalised_read_out_hides_the_phenomena_that_only_change_a_size():
    # overexpectation and overshadowing only scale A's association with o: its direction stays o, so a
    # read-out that keeps only the direction (like the models' per-head LayerNorm) cannot see them;
    # blocking and extinction change the direction and survive.
    acq = probes.circuit_effects("acquisition", rule="delta", n=40, d_key=4096, normalize=True).mean().item()
    over = probes.circuit_effects("overexpectation", rule="delta", n=40, d_key=4096, normalize=True).mean().item()
    ext = probes.circuit_effects("extinction", rule="delta", n=40, d_key=4096, normalize=True).mean().item()
    assert acq > 0.9 and abs(over) < 0.01 and ext > 0.5


# ---------------------------------------------------------------------------------------------------- bad input
def bad_input_rows() -> list:
    """Bad input of ``pavlovlab.phenomena.probes``: one row ``(case, call, expect, fragment)`` a case."""
    model = TinyTransformer(8, d_model=8, n_heads=1, d_head=4, seed=0)
    one = torch.ones(3)
    return [
        ("readout_norm(model=None)", lambda: probes.readout_norm(None, torch.zeros(1, 2, 3)), TypeError,
         "model: expected a pavlovlab.models.TinyTransformer"),
        ("compound_key_cosine(model=None)", lambda: probes.compound_key_cosine(None, 16), TypeError, "model: expected"),
        ("relative_effects without acquisition", lambda: probes.relative_effects({"blocking": torch.ones(2, 3)},
                                                                             "blocking"), ValueError,
         "results: expected effects for 'acquisition'"),
        ("relative_effects(list)", lambda: probes.relative_effects([], "blocking"), TypeError, "results: expected"),
        ("relative_effects: per-seed ratios 0.5 and 0.25 average 0.375",
         lambda: abs(probes.relative_effects({"acquisition": torch.tensor([[2.0, 2.0], [4.0, 4.0]]),
                                          "blocking": torch.ones(2, 2)}, "blocking").mean - 0.375) < 1e-12, "ok", ""),
        ("size_loss(1-D)", lambda: probes.size_loss(torch.zeros(4)), ValueError, "log_ratios: expected"),
        ("size_loss of equal sizes is 0", lambda: abs(probes.size_loss(torch.zeros(2, 3)).mean) < 1e-12, "ok", ""),
        ("separation_verdicts(responses=[])", lambda: probes.separation_verdicts([], {}), TypeError,
         "responses: expected a mapping"),
        ("separation_verdicts(threshold=0)", lambda: probes.separation_verdicts({}, {}, threshold=0), ValueError,
         "threshold: expected"),
        ("effects('batch', f)", lambda: probes.effects("batch", lambda w: w), TypeError,
         "batch: expected a ProbeBatch"),
        ("model_effects with a number for a model", lambda: probes.model_effects({"linear": [{"model": 3}]}), TypeError,
         "runs['linear'][0]: expected a dict with a TinyTransformer"),
        ("model_logits(weights of the wrong vocabulary)", lambda: probes.model_logits(model, torch.zeros(1, 3, 9)),
         ValueError, "weights: expected last dim = vocab_size 8"),
        ("model_response(outcome = 9 >= vocab)",
         lambda: probes.model_response(model, torch.zeros(1, 3, 8), torch.tensor([9])), ValueError,
         "outcome: expected token ids in [0, vocab_size = 8)"),
        ("verdicts with a 1-D result", lambda: probes.verdicts({"linear": {"blocking": one}}), ValueError,
         "results['linear']['blocking']: expected a tensor of rank 2"),
        ("circuit_effects('blockin')", lambda: probes.circuit_effects("blockin", rule="delta"), ValueError,
         "design: expected one of"),
        ("circuit_effects(rule='hebb')", lambda: probes.circuit_effects("blocking", rule="hebb"), ValueError,
         "rule: expected one of"),
        ("memory_response(lr=nan)", lambda: probes.memory_response(torch.ones(2, 3, 4), torch.tensor([0, 1]), 4,
                                                                   lr=math.nan), ValueError,
         "lr: expected a finite number"),
        ("memory_response(rule='hebb')", lambda: probes.memory_response(torch.ones(2, 3, 4), torch.tensor([0, 1]), 4,
                                                                        rule="hebb"), ValueError,
         "rule: expected one of"),
        ("memory_response(outcome=floats)",
         lambda: probes.memory_response(torch.ones(2, 3, 6), torch.tensor([4.0, 5.0]), 4), TypeError,
         "outcome: expected a tensor of token indices such as batch.outcome, got torch.float32"),
        ("memory_response(outcome of 3 for 2 sequences)",
         lambda: probes.memory_response(torch.ones(2, 3, 6), torch.tensor([4, 5, 5]), 4), ValueError,
         "outcome: expected shape (2,), one value token per sequence of weights, got (3,)"),
        ("memory_response(outcome a key token)",
         lambda: probes.memory_response(torch.ones(2, 3, 6), torch.tensor([3, 5]), 4), ValueError,
         "outcome: expected value tokens in [4, 6) (after the n_keys key tokens), got tokens from 3 to 5"),
        ("circuit_effects(n_pairs=20) on its 16 key tokens",
         lambda: probes.circuit_effects("blocking", rule="delta", n_pairs=20), ValueError,
         "n_keys: expected at least 20 (4 cues + 16 fillers), got 16"),
        ("model_effects(measure='norm') of a softmax model",
         lambda: probes.model_effects({"softmax": [{"model": TinyTransformer(32, d_model=8, n_heads=1, d_head=4,
                                                                             attention="softmax", seed=0)}]},
                                      ["blocking"], n=4, measure="norm"), ValueError,
         "model: expected linear or delta attention (a per-head LayerNorm), got 'softmax'"),
        ("model_effects with a vocabulary too small for the fillers",
         lambda: probes.model_effects({"linear": [{"model": TinyTransformer(10, d_model=8, n_heads=1, d_head=4,
                                                                            attention="linear", seed=0)}]}, n=4),
         ValueError, "n_keys: expected at least 10 (4 cues + 6 fillers), got 5"),
        ("verdicts with fewer seeds than acquisition",
         lambda: probes.verdicts({"linear": {"acquisition": torch.ones(2, 3), "blocking": torch.ones(3, 3)}}),
         ValueError, "results: expected as many seeds for 'blocking' as for acquisition, got 3 and 2"),
        ("verdicts of one seed of one sequence",
         lambda: probes.verdicts({"linear": {"acquisition": torch.ones(3, 3), "blocking": torch.ones(1, 1)}}),
         ValueError, "x: expected at least 2 seeds or 2 sequences"),
        ("size_loss of one seed of one sequence", lambda: probes.size_loss(torch.zeros(1, 1)), ValueError,
         "x: expected at least 2 seeds or 2 sequences"),
        ("separation_verdicts with log-ratios of one sequence",
         lambda: probes.separation_verdicts({a: {"acquisition": one[None], "extinction": one[None],
                                                 "conditioned inhibition": one[None]} for a in ("delta", "linear")},
                                            {a: {"blocking": torch.zeros(1, 1), "overexpectation": torch.zeros(2, 2)}
                                             for a in ("delta", "linear")}), ValueError,
         "x: expected at least 2 seeds or 2 sequences"),
        ("separation_verdicts with fewer seeds than acquisition",
         lambda: probes.separation_verdicts({a: {"acquisition": torch.ones(3, 2), "extinction": torch.ones(2, 2)}
                                             for a in ("delta", "linear")}, {}, designs={"extinction": "response"}),
         ValueError, "results: expected as many seeds for 'extinction' as for acquisition, got 2 and 3"),
        ("separation_verdicts without the linear model's responses",
         lambda: probes.separation_verdicts({"delta": {"acquisition": torch.ones(3, 2),
                                                       "extinction": torch.ones(3, 2)}}, {},
                                            designs={"extinction": "response"}),
         ValueError, "responses: expected an entry 'linear'"),
        ("separation_verdicts without a design's log-ratios",
         lambda: probes.separation_verdicts({}, {a: {} for a in ("delta", "linear")}, designs={"blocking": "norm"}),
         ValueError, "norms['delta']: expected an entry 'blocking'"),
    ]


@parametrize(bad_input_rows())
def test_bad_input_row(call, expect, fragment):
    check(call, expect, fragment)


def test_circuit_effects_pairs_design_and_control_on_the_same_keys():
    """The blocking design and its control differ only in the trials; with the same keys in both arms the
    effect of each sequence is what the delta memory gives with those keys, computed here arm by arm by hand."""
    n, seed = 8, 3
    got = probes.circuit_effects("blocking", rule="delta", n=n, seed=seed)
    batch = sequences.make_probes("blocking", n, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    gk = torch.Generator().manual_seed(seed + 1)
    state = gk.get_state()
    arms = []
    for w in (batch.design, batch.control):
        gk.set_state(state)
        arms.append(probes.memory_response(w, batch.outcome, batch.n_keys, rule="delta", lr=0.5, d_key=64,
                                           generator=gk))
    expected = (arms[0] - arms[1]) if batch.design_higher else (arms[1] - arms[0])
    assert torch.allclose(got, expected, atol=1e-9)
    unpaired = probes.memory_response(batch.control, batch.outcome, batch.n_keys, rule="delta", lr=0.5, d_key=64,
                                  generator=torch.Generator().manual_seed(seed + 2))
    assert not torch.allclose(arms[1], unpaired)
