"""Bad input for ``pavlovlab.models``, ``pavlovlab.models.training`` and ``pavlovlab.models.tasks``: the exact calls of
the hostile-input run and a property-based test."""

from __future__ import annotations

import pytest
import torch
from badinput import check, parametrize

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from pavlovlab.models import tasks as Ta  # noqa: E402
from pavlovlab.models import training as Tr  # noqa: E402
from pavlovlab.models import transformer as Mo  # noqa: E402


def rows():
    model = Mo.TinyTransformer(Ta.vocab_size(4, 4), d_model=8, n_heads=1, d_head=4, seed=0)
    no_answers = Ta.RecallBatch(torch.zeros(2, 5, dtype=torch.long), torch.full((2, 5), Ta.IGNORE))
    small = Mo.TinyTransformer(8, d_model=8, n_heads=1, d_head=4, seed=0)
    two_heads = Mo.TinyTransformer(Ta.vocab_size(4, 4), d_model=8, n_heads=2, d_head=4, seed=0)
    task = dict(n_pairs=2, n_keys=8, n_values=8)
    return [
        ("evaluate on a batch with no answer positions", lambda: Tr.evaluate(model, no_answers), ValueError,
         "batch: expected at least one answer position"),
        ("evaluate on a tuple", lambda: Tr.evaluate(model, (no_answers.tokens, no_answers.targets)), TypeError,
         "batch: expected a tasks.RecallBatch"),
        ("train_recall vocabulary too small", lambda: Tr.train_recall(small, task_kwargs=task, steps=1, progress=False),
         ValueError, "vocab_size: the model's vocab_size = 8 is too small for the task associative_recall(n_pairs=2, "
         "n_keys=8, n_values=8)"),
        ("train_recall generator in task_kwargs",
         lambda: Tr.train_recall(model, task_kwargs=dict(n_pairs=2, n_keys=4, n_values=4,
                                                         generator=torch.Generator()), steps=1, progress=False),
         TypeError, "task_kwargs: expected the task's own keywords only"),
        ("train_recall device 'nope'", lambda: Tr.train_recall(model, task_kwargs=dict(n_pairs=2, n_keys=4, n_values=4),
                                                               steps=1, progress=False, device="nope"),
         ValueError, "device: expected a device name"),
        ("train_configs(configs=[1, 2])", lambda: Tr.train_configs([1, 2], vocab_size=8), TypeError,
         "configs: expected a dict {name: TinyTransformer keywords}"),
        ("train_recall_batched(models=one model)",
         lambda: Tr.train_recall_batched(model, seeds=[0], task_kwargs=task, steps=1, progress=False), TypeError,
         "models: expected a non-empty list of TinyTransformer"),
        ("train_recall_batched models of two configurations",
         lambda: Tr.train_recall_batched([model, two_heads], seeds=[0, 1], task_kwargs=task, steps=1, progress=False),
         ValueError, "models: expected TinyTransformers of one configuration"),
        ("train_recall_batched one seed for two models",
         lambda: Tr.train_recall_batched([model, model], seeds=[0], task_kwargs=task, steps=1, progress=False),
         ValueError, "seeds: expected one seed per model (2), got [0]"),
        ("train_recall_batched seed -1",
         lambda: Tr.train_recall_batched([model], seeds=[-1], task_kwargs=task, steps=1, progress=False),
         ValueError, "seeds: expected an integer >= 0, got -1"),
        ("train_recall_batched steps=0",
         lambda: Tr.train_recall_batched([model], seeds=[0], task_kwargs=task, steps=0, progress=False),
         ValueError, "steps: expected an integer >= 1"),
        ("train_recall_batched vocabulary too small",
         lambda: Tr.train_recall_batched([small], seeds=[0], task_kwargs=task, steps=1, progress=False),
         ValueError, "vocab_size: the model's vocab_size = 8 is too small"),
        ("Block(attention='nope')", lambda: Mo.Block(8, 1, 4, "nope", True, 2, "identity"), ValueError,
         "attention: expected one of"),
        ("Block(n_heads=0)", lambda: Mo.Block(8, 0, 4, "linear", True, 2, "identity"), ValueError,
         "n_heads: expected an integer >= 1"),
        ("associative_recall(device='nope')", lambda: Ta.associative_recall(2, n_pairs=2, device="nope"), ValueError,
         "device: expected a device name such as 'cpu'"),
        ("pointer_chasing(device='tpu')", lambda: Ta.pointer_chasing(2, n_pairs=3, device="tpu"), ValueError,
         "device: expected a device name"),
        ("associative_recall(device=3)", lambda: Ta.associative_recall(2, n_pairs=2, device=3), TypeError,
         "device: expected a torch.device"),
    ]


ROWS = rows()


@parametrize(ROWS)
def test_bad_input(call, expect, fragment):
    check(call, expect, fragment)


@settings(max_examples=30, deadline=None, derandomize=True, database=None)
@given(n_samples=st.one_of(st.integers(-3, 3), st.floats(allow_nan=True), st.text(max_size=2)),
       n_pairs=st.integers(-2, 20), n_keys=st.integers(-2, 8),
       device=st.sampled_from([None, "cpu", "gpu0", "", "cuda:99x", 0]))
def test_property_tasks_name_the_argument(n_samples, n_pairs, n_keys, device):
    for call in (lambda: Ta.associative_recall(n_samples, n_pairs=n_pairs, n_keys=n_keys, device=device),
                 lambda: Ta.pointer_chasing(n_samples, n_pairs=n_pairs, n_items=n_keys, device=device)):
        try:
            b = call()
        except (ValueError, TypeError) as e:
            assert str(e).split(":")[0] in {"n_samples", "n_pairs", "n_keys", "n_items", "device", "hops"}, str(e)
            continue
        assert b.tokens.dtype == torch.long and int(b.tokens.min()) >= 0
