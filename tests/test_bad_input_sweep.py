"""One bad-input row for each public function that the other tables do not reach (the coverage walk of
``tests/test_bad_input_coverage.py`` asks for one per public name)."""

from __future__ import annotations

import math

import torch
from badinput import check, parametrize

from pavlovlab import conditioning as C
from pavlovlab import decay as D
from pavlovlab import drift as Dr
from pavlovlab import models as Mo
from pavlovlab import stacking as St
from pavlovlab import tasks as Ta


def rows():
    stream = Dr.redraw_stream(n_keys=2, d_k=4, d_v=4, steps=8, period=4)
    return [
        ("blocking_control(-1)", lambda: C.blocking_control(-1), ValueError, "n_trials: expected an integer >= 0"),
        ("hebbian_conditioning us of the wrong length", lambda: C.hebbian_conditioning(torch.ones(3, 1), torch.ones(4)),
         ValueError, "us: expected one US per trial"),
        ("overexpectation(0)", lambda: C.overexpectation(0), ValueError, "n_trials: expected an integer >= 1"),
        ("overshadowing(salience=(1, 0))", lambda: C.overshadowing(5, salience=(1, 0)), ValueError,
         "salience[1]: expected a number > 0"),
        ("partial_reinforcement(p=1.5)", lambda: C.partial_reinforcement(5, p=1.5), ValueError,
         "p: expected a number <= 1"),
        ("reacquisition(2.5)", lambda: C.reacquisition(2.5), TypeError, "n_trials: expected an integer"),
        ("effective_window(1.5)", lambda: D.effective_window(1.5), ValueError, "gamma: expected a number <= 1"),
        ("gated_recall(g with a NaN)", lambda: D.gated_recall(torch.tensor([0.5, math.nan])), ValueError,
         "g: expected finite values"),
        ("count_parameters('model')", lambda: Mo.count_parameters("model"), TypeError,
         "model: expected a torch.nn.Module"),
        ("depth_width_configs(4, deep_layers=3)", lambda: Mo.depth_width_configs(4, deep_layers=3), ValueError,
         "deep_layers: expected a divisor of budget = 4"),
        ("steps_to_threshold without accuracies", lambda: Mo.steps_to_threshold({"step": [1]}, 0.5), TypeError,
         "history: expected the dict train_recall returns"),
        ("budget_shapes(0)", lambda: St.budget_shapes(0), ValueError, "budget: expected an integer >= 1"),
        ("chain_error(device='gpu0')", lambda: St.chain_error(2, 1, 8, 8, device="gpu0"), ValueError,
         "device: expected a device name"),
        ("raw_chain(n=1)", lambda: St.raw_chain(2, 1, 8), ValueError, "n: expected at least 2 stored associations"),
        ("pointer_vocab_size(1)", lambda: Ta.pointer_vocab_size(1), ValueError, "n_items: expected an integer >= 2"),
        ("arrival_stream(every=0)", lambda: Dr.arrival_stream(every=0), ValueError, "every: expected an integer >= 1"),
        ("rotation_stream(turn_period=0)", lambda: Dr.rotation_stream(turn_period=0), ValueError,
         "turn_period: expected an integer >= 1"),
        ("scale_values(scales of the wrong length)", lambda: Dr.scale_values(stream, [1.0, 2.0]), ValueError,
         "scales: expected shape (4,)"),
    ]


ROWS = rows()


@parametrize(ROWS)
def test_bad_input(call, expect, fragment):
    check(call, expect, fragment)
