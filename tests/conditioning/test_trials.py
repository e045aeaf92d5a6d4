"""The classic designs as trial tables: shapes, labels, phases, and a reproducible random design."""

import pytest
import torch
from badinput import check, parametrize

from pavlovlab.conditioning import trials as Tt


def test_every_design_is_a_trial_table():
    for name, make in Tt.TABLES.items():
        cs, us, labels = make(6, lam=2.0, dtype=torch.float64)
        assert cs.dtype == us.dtype == torch.float64
        assert cs.shape[-1] == len(labels.cs) == len(labels.salience)
        assert us.shape[-1] == cs.shape[-2] == labels.phases[-1][2]
        assert set(us.unique().tolist()) <= {0.0, 2.0}, name
    cs, us, labels = Tt.blocking(5, n_compound=7)
    assert cs.shape == (12, 2) and labels.boundaries == [5]
    assert Tt.blocking(0, n_compound=4).cs.shape == (4, 2)


def test_partial_reinforcement_is_reproducible():
    # the same seed gives the same design
    a = Tt.partial_reinforcement(50, generator=torch.Generator().manual_seed(3)).us
    b = Tt.partial_reinforcement(50, generator=torch.Generator().manual_seed(3)).us
    assert torch.equal(a, b) and torch.equal(Tt.partial_reinforcement(50).us, Tt.partial_reinforcement(50).us)


def test_partial_reinforcement_draws_from_the_callers_generator():
    # a design that ignored the generator would give every seed the same food, and would not advance it
    designs = {seed: Tt.partial_reinforcement(200, generator=torch.Generator().manual_seed(seed)).us
               for seed in (0, 1, 2)}
    assert not torch.equal(designs[1], designs[2]) and not torch.equal(designs[0], designs[1])
    assert torch.equal(designs[0], Tt.partial_reinforcement(200).us)  # None means a fresh generator seeded with 0
    g = torch.Generator().manual_seed(1)
    first, second = (Tt.partial_reinforcement(200, generator=g).us for _ in range(2))
    assert torch.equal(first, designs[1]) and not torch.equal(first, second)
    # the documented draw: uniform float64 on that generator, food where it falls below p
    expected = torch.rand(200, generator=torch.Generator().manual_seed(2), dtype=torch.float64) < 0.5
    assert torch.equal(designs[2], expected.float())


@pytest.mark.parametrize("call, error, words", [
    (lambda: Tt.acquisition(0), ValueError, "n_trials: expected an integer >= 1"),
    (lambda: Tt.acquisition(2.5), TypeError, "n_trials: expected an integer"),
    (lambda: Tt.partial_reinforcement(10, p=1.5), ValueError, "p: expected a number <= 1.0"),
    (lambda: Tt.partial_reinforcement(10, generator=0), TypeError, "generator: expected a torch.Generator"),
    (lambda: Tt.overshadowing(10, salience=(1.0,)), ValueError, "salience: expected two saliences"),
    (lambda: Tt.blocking(10, lam=-1.0), ValueError, "lam: expected a number >= 0"),
])
def test_bad_inputs_are_rejected_clearly(call, error, words):
    with pytest.raises(error, match=None) as info:
        call()
    assert words in str(info.value)


# ---------------------------------------------------------------------------------------------------- bad input
def bad_input_rows() -> list:
    """Bad input of ``pavlovlab.conditioning.trials``: one row ``(case, call, expect, fragment)`` a case."""
    return [
        ("design dtype as a string", lambda: Tt.acquisition(3, dtype="float64").cs.dtype == torch.float64, "ok", ""),
        ("design dtype 'int64'", lambda: Tt.extinction(3, dtype="int64"), TypeError,
         "dtype: expected a floating-point"),
        ("acquisition(dtype='float32') (accepted by contract)",
         lambda: Tt.acquisition(3, dtype="float32").cs.dtype == torch.float32, "ok", ""),
        ("acquisition(dtype='float')", lambda: Tt.acquisition(3, dtype="floaty"), TypeError, "dtype: expected"),
        ("blocking_control(-1)", lambda: Tt.blocking_control(-1), ValueError, "n_trials: expected an integer >= 0"),
        ("overexpectation(0)", lambda: Tt.overexpectation(0), ValueError, "n_trials: expected an integer >= 1"),
        ("overshadowing(salience=(1, 0))", lambda: Tt.overshadowing(5, salience=(1, 0)), ValueError,
         "salience[1]: expected a number > 0"),
        ("partial_reinforcement(p=1.5)", lambda: Tt.partial_reinforcement(5, p=1.5), ValueError,
         "p: expected a number <= 1"),
        ("reacquisition(2.5)", lambda: Tt.reacquisition(2.5), TypeError, "n_trials: expected an integer"),
        ("conditioned_inhibition(-1)", lambda: Tt.conditioned_inhibition(-1), ValueError,
         "n_trials: expected an integer >= 1"),
    ]


@parametrize(bad_input_rows())
def test_bad_input_row(call, expect, fragment):
    check(call, expect, fragment)
