"""One bad-input row for each public function that the other tables do not reach (the coverage walk of
``tests/test_bad_input_coverage.py`` asks for one per public name)."""

from __future__ import annotations

import math

import torch
from badinput import check, parametrize

from pavlovlab import sampling as Sa
from pavlovlab import statistics as Stt
from pavlovlab.capacity import criteria as Cp
from pavlovlab.capacity import readouts as R
from pavlovlab.conditioning import learning as C
from pavlovlab.conditioning import trials as Tt
from pavlovlab.depth import chain as St
from pavlovlab.depth import contest as Dw
from pavlovlab.forgetting import decay as D
from pavlovlab.forgetting import drift as Dr
from pavlovlab.forgetting import unlearning as U
from pavlovlab.memory import associative as M
from pavlovlab.memory import hebbian as Hb
from pavlovlab.models import head_memory as Hm
from pavlovlab.models import tasks as Ta
from pavlovlab.models import training as Tr
from pavlovlab.models import transformer as Mo
from pavlovlab.phenomena import probes as Pr
from pavlovlab.phenomena import sequences as De


def rows():
    stream = Dr.redraw_stream(n_keys=2, d_k=4, d_v=4, steps=8, period=4)
    return [
        ("blocking_control(-1)", lambda: Tt.blocking_control(-1), ValueError, "n_trials: expected an integer >= 0"),
        ("hebbian_conditioning us of the wrong length", lambda: C.hebbian_conditioning(torch.ones(3, 1), torch.ones(4)),
         ValueError, "us: expected one US per trial"),
        ("overexpectation(0)", lambda: Tt.overexpectation(0), ValueError, "n_trials: expected an integer >= 1"),
        ("overshadowing(salience=(1, 0))", lambda: Tt.overshadowing(5, salience=(1, 0)), ValueError,
         "salience[1]: expected a number > 0"),
        ("partial_reinforcement(p=1.5)", lambda: Tt.partial_reinforcement(5, p=1.5), ValueError,
         "p: expected a number <= 1"),
        ("reacquisition(2.5)", lambda: Tt.reacquisition(2.5), TypeError, "n_trials: expected an integer"),
        ("effective_window(1.5)", lambda: D.effective_window(1.5), ValueError, "gamma: expected a number <= 1"),
        ("gated_recall(g with a NaN)", lambda: D.gated_recall(torch.tensor([0.5, math.nan])), ValueError,
         "g: expected finite values"),
        ("count_parameters('model')", lambda: Mo.count_parameters("model"), TypeError,
         "model: expected a torch.nn.Module"),
        ("depth_width_configs(4, deep_layers=3)", lambda: Mo.depth_width_configs(4, deep_layers=3), ValueError,
         "deep_layers: expected a divisor of budget = 4"),
        ("steps_to_threshold without accuracies", lambda: Tr.steps_to_threshold({"step": [1]}, 0.5), TypeError,
         "history: expected the dict train_recall returns"),
        ("budget_shapes(0)", lambda: Dw.budget_shapes(0), ValueError, "budget: expected an integer >= 1"),
        ("chain_error(device='gpu0')", lambda: St.chain_error(2, 1, 8, 8, device="gpu0"), ValueError,
         "device: expected a device name"),
        ("raw_chain(n=1)", lambda: St.raw_chain(2, 1, 8), ValueError, "n: expected at least 2 stored associations"),
        ("pointer_vocab_size(1)", lambda: Ta.pointer_vocab_size(1), ValueError, "n_items: expected an integer >= 2"),
        ("arrival_stream(every=0)", lambda: Dr.arrival_stream(every=0), ValueError, "every: expected an integer >= 1"),
        ("rotation_stream(turn_period=0)", lambda: Dr.rotation_stream(turn_period=0), ValueError,
         "turn_period: expected an integer >= 1"),
        ("scale_values(scales of the wrong length)", lambda: Dr.scale_values(stream, [1.0, 2.0]), ValueError,
         "scales: expected shape (4,)"),
        *_layout_rows(),
    ]


def _layout_rows():
    model = Mo.TinyTransformer(8, d_model=8, n_heads=1, d_head=4, seed=0)
    batch = De.make_probes("blocking", 2, generator=torch.Generator().manual_seed(0))
    k = torch.randn(2, 6, 8, generator=torch.Generator().manual_seed(0))
    one = torch.ones(3)
    return [
        ("capacity_scaling([8], 'cosine')", lambda: Cp.capacity_scaling([8], "cosine"), ValueError,
         "d_ks: expected a sequence of at least two"),
        ("retrieval_capacity(8, 'nope')", lambda: Cp.retrieval_capacity(8, "nope"), ValueError,
         "criterion: expected one of"),
        ("scaling_residuals with fewer capacities", lambda: Cp.scaling_residuals([8, 16], [1.0]), ValueError,
         "capacities: expected the length of d_ks, 2, got 1"),
        ("describe(batch, i=5)", lambda: De.describe(batch, i=5), ValueError, "i: expected an integer <= 1"),
        ("trials('nope')", lambda: De.trials("nope"), ValueError, "design: expected one of"),
        ("measure_crosstalk_variance([1], 8)", lambda: Hb.measure_crosstalk_variance([1], 8), ValueError,
         "ns[0]: expected an integer >= 2"),
        ("oja_clamped_update with the wrong d_k",
         lambda: M.oja_clamped_update(torch.zeros(3, 4), torch.ones(5), torch.ones(3)), ValueError,
         "k: expected key dimension"),
        ("resolve_rule('hebb')", lambda: M.resolve_rule("hebb"), ValueError, "rule: expected one of"),
        ("check_lr('lr', 3.0, 'delta')", lambda: M.check_lr("lr", 3.0, "delta"), ValueError,
         "lr: expected a number <= 2 for the delta rule"),
        ("train_models(['nope'])", lambda: Tr.train_models(["nope"], [0], steps=1, progress=False), ValueError,
         "attention: expected one of"),
        ("effects('batch', f)", lambda: Pr.effects("batch", lambda w: w), TypeError, "batch: expected a ProbeBatch"),
        ("head_states(layer=3)", lambda: Hm.head_states(model, torch.zeros(1, 3, dtype=torch.long), layer=3),
         ValueError, "layer: expected"),
        ("mean_squared_overlap(1-D)", lambda: Hm.mean_squared_overlap(one), ValueError,
         "keys: expected a tensor of rank >= 2"),
        ("model_effects with a number for a model", lambda: Pr.model_effects({"linear": [{"model": 3}]}), TypeError,
         "runs['linear'][0]: expected a dict with a TinyTransformer"),
        ("model_logits(weights of the wrong vocabulary)", lambda: Pr.model_logits(model, torch.zeros(1, 3, 9)),
         ValueError, "weights: expected last dim = vocab_size 8"),
        ("model_response(outcome = 9 >= vocab)",
         lambda: Pr.model_response(model, torch.zeros(1, 3, 8), torch.tensor([9])), ValueError,
         "outcome: expected token ids in [0, vocab_size = 8)"),
        ("trained_head_overlaps(n_pairs=0)", lambda: Hm.trained_head_overlaps(model, n_pairs=0), ValueError,
         "n_pairs: expected an integer >= 1"),
        ("verdicts with a 1-D result", lambda: Pr.verdicts({"linear": {"blocking": one}}), ValueError,
         "results['linear']['blocking']: expected a tensor of rank 2"),
        ("adversarial_error_curve(1-D)", lambda: R.adversarial_error_curve(torch.randn(8)), ValueError,
         "keys: expected a tensor of rank >= 2"),
        ("decoding_curve(1-D)", lambda: R.decoding_curve(one, one, one, one), ValueError,
         "weights: expected a tensor of rank >= 2"),
        ("first_failure(float)", lambda: R.first_failure(one), TypeError, "ok: expected a boolean tensor"),
        ("min_cosine_curve(1-D)", lambda: R.min_cosine_curve(one, one, one), ValueError,
         "weights: expected a tensor of rank >= 2"),
        ("readout_weights(rule='nope')", lambda: R.readout_weights(k, k, rule="nope"), ValueError,
         "rule: expected one of"),
        ("random_values(3, d=0)", lambda: Sa.random_values(3, d=0), ValueError, "d: expected an integer >= 1"),
        ("bootstrap_slope_se with fewer samples", lambda: Stt.bootstrap_slope_se([1, 2], [one]), ValueError,
         "samples: expected number of points"),
        ("t_quantile(0)", lambda: Stt.t_quantile(0), ValueError, "df: expected an integer >= 1"),
        ("unlearn_hebbian with the wrong d_v",
         lambda: U.unlearn_hebbian(torch.zeros(3, 4), torch.ones(4), torch.ones(2)), ValueError,
         "v: expected value dimension"),
    ]


ROWS = rows()


@parametrize(ROWS)
def test_bad_input(call, expect, fragment):
    check(call, expect, fragment)
