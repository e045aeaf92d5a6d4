"""Training the tiny Transformers: evaluation on answers only, learning recall, other tasks, and seeds trained
together with the numbers of separate runs."""

import warnings

import pytest
import torch
from badinput import check, parametrize

from pavlovlab.models import tasks as Ta
from pavlovlab.models import training as Tr
from pavlovlab.models import transformer as Mo
from pavlovlab.models.tasks import associative_recall, pointer_chasing, vocab_size
from pavlovlab.models.training import (
    evaluate,
    steps_to_threshold,
    train_configs,
    train_models,
    train_recall,
    train_recall_batched,
)
from pavlovlab.models.transformer import TinyTransformer, count_parameters, depth_width_configs

TASK = dict(n_pairs=4, n_queries=4, n_keys=16, n_values=16)


def test_bad_learning_rate():
    model = TinyTransformer(32, d_model=8, n_heads=1, d_head=4)
    with pytest.raises(ValueError, match="lr"):
        train_recall(model, task_kwargs=TASK, steps=1, lr=0.0)


def test_steps_to_threshold():
    hist = {"step": [10, 20, 30, 40], "accuracy": [0.2, 0.85, 0.7, 0.95]}
    assert steps_to_threshold(hist, 0.8) == 20 and steps_to_threshold(hist, 0.9) == 40
    assert steps_to_threshold(hist, 0.99) is None


def test_evaluate_counts_only_answers():
    class Oracle(torch.nn.Module):  # puts all the mass on the target token where there is one
        def __init__(self, b):
            super().__init__()
            self.b = b
            self.w = torch.nn.Parameter(torch.zeros(1))

        def forward(self, tokens):
            logits = torch.zeros(*tokens.shape, 32)
            t = self.b.targets.clamp(min=0)
            return logits.scatter(-1, t[..., None], 1.0)

    b = associative_recall(50, **TASK, generator=torch.Generator().manual_seed(0))
    assert evaluate(Oracle(b), b) == 1.0
    wrong = b._replace(targets=torch.where(b.answer_mask, (b.targets - 16 + 1) % 16 + 16, b.targets))
    assert evaluate(Oracle(b), wrong) == 0.0


@pytest.mark.slow
def test_small_linear_model_learns_recall():
    torch.set_num_threads(min(torch.get_num_threads(), 2))
    model = TinyTransformer(vocab_size(), d_model=32, n_layers=1, n_heads=2, d_head=16, attention="linear", seed=0)
    hist = train_recall(model, task_kwargs=TASK, steps=400, batch_size=64, lr=3e-3, target_accuracy=0.97,
                        eval_every=25, progress=False, seed=0)
    assert len(hist["step"]) == len(hist["loss"]) == len(hist["accuracy"]) >= 1
    assert hist["reached"] and hist["steps_run"] < 400
    held_out = associative_recall(1000, **TASK, generator=torch.Generator().manual_seed(123))
    assert evaluate(model, held_out) >= 0.95
    assert hist["loss"][-1] < hist["loss"][0]


@pytest.mark.slow
def test_depth_width_configs_have_equal_budgets():
    cfg = depth_width_configs(4, d_model=16, d_head=4)
    wide = TinyTransformer(32, seed=0, **cfg["wide-shallow"])
    deep = TinyTransformer(32, seed=0, **cfg["narrow-deep"])
    assert cfg["wide-shallow"]["n_layers"] * cfg["wide-shallow"]["n_heads"] == 4 == cfg["narrow-deep"]["n_layers"]
    assert abs(count_parameters(wide) - count_parameters(deep)) / count_parameters(deep) < 0.05
    runs = train_configs(cfg, vocab_size=32, seeds=(0, 1), task_kwargs=TASK, steps=3, eval_every=2,
                         eval_size=16, progress=False)
    assert set(runs) == {"wide-shallow", "narrow-deep"} and all(len(v) == 2 for v in runs.values())
    assert runs["narrow-deep"][0]["parameters"] == count_parameters(deep)
    assert runs["wide-shallow"][0]["step"] == [2, 3]


def test_train_on_another_task():
    model = TinyTransformer(9, d_model=16, n_layers=2, n_heads=1, d_head=8, seed=0)
    kw = dict(n_pairs=4, hops=2, n_queries=2, n_items=8)
    hist = train_recall(model, task=pointer_chasing, task_kwargs=kw, steps=4, eval_every=2, eval_size=16,
                        progress=False)
    assert hist["step"] == [2, 4] and 0.0 <= hist["final_accuracy"] <= 1.0
    with pytest.raises(TypeError, match="task"):
        train_recall(model, task="pointer", task_kwargs=kw, steps=1)


BATCHED_TASK = dict(n_pairs=3, n_keys=8, n_values=8)


BATCHED_TRAIN = dict(task_kwargs=BATCHED_TASK, steps=40, eval_every=10, eval_size=64, batch_size=32, lr=1e-2,
                     weight_decay=0.01, progress=False)


@pytest.mark.parametrize("attention, target, model_kwargs", [
    pytest.param("linear", 0.3, dict(n_layers=2), marks=pytest.mark.slow),
    ("delta", 0.3, dict(n_layers=2)),
    pytest.param("softmax", 0.33, dict(n_layers=2), marks=pytest.mark.slow),
    pytest.param("linear", None, dict(n_layers=1, mlp=False, feature_map="elu1"), marks=pytest.mark.slow),
])
def test_batched_training_equals_separate_runs(attention, target, model_kwargs, one_thread):
    """Three seeds trained together give the histories and weights of three train_recall runs (float64), with
    a target that one seed reaches before another (early stopping per model) or none (no target)."""
    kw = dict(vocab_size=vocab_size(8, 8), d_model=16, n_heads=2, d_head=8, attention=attention, **model_kwargs)
    seeds = (0, 1, 2)
    alone = [TinyTransformer(**kw, seed=s).double() for s in seeds]
    expected = [train_recall(m, seed=s, target_accuracy=target, **BATCHED_TRAIN)
                for m, s in zip(alone, seeds, strict=True)]
    together = [TinyTransformer(**kw, seed=s).double() for s in seeds]
    got = train_recall_batched(together, seeds=seeds, target_accuracy=target, **BATCHED_TRAIN)
    if target is not None:                                     # the case under test: seeds stop at different steps
        assert len({h["steps_run"] for h in expected}) > 1, [h["steps_run"] for h in expected]
    for want, have in zip(expected, got, strict=True):
        assert set(have) == set(want)
        for key in ("step", "accuracy", "final_accuracy", "steps_run", "reached", "parameters"):
            assert have[key] == want[key], key
        torch.testing.assert_close(have["loss"], want["loss"], rtol=1e-10, atol=0.0)
    for a, b in zip(alone, together, strict=True):
        for (name, p), q in zip(a.named_parameters(), b.parameters(), strict=True):
            torch.testing.assert_close(q, p, rtol=1e-9, atol=1e-11, msg=lambda m, name=name: f"{name}: {m}")


def test_train_models_returns_each_seed_trained(one_thread):
    runs = train_models(("softmax", "delta"), seeds=(3, 4), steps=4, target_accuracy=None, eval_every=2,
                        eval_size=16, progress=False)
    assert set(runs) == {"softmax", "delta"}
    for attention, rs in runs.items():
        assert len(rs) == 2 and all(r["history"]["step"] == [2, 4] for r in rs)
        for r, s in zip(rs, (3, 4), strict=True):
            start = TinyTransformer(vocab_size(16, 16), d_model=32, n_heads=2, d_head=16, attention=attention, seed=s)
            moved = [not torch.equal(p, q) for p, q in zip(r["model"].parameters(), start.parameters(), strict=True)]
            assert all(moved) and not r["model"].training
    assert train_models(("linear",), seeds=(), steps=1, progress=False) == {"linear": []}


@pytest.mark.parametrize("attention", ["linear", "delta", "softmax"])
def test_ensemble_runs_each_models_own_forward(attention):
    """The ensemble (torch.func.vmap of TinyTransformer.forward over stacked parameters) gives each model's own
    logits, loss and gradient, on sequences longer than the delta block's chunk of 64 tokens, and no operation
    falls back to a per-model loop (torch warns when vmap has no batching rule for one)."""
    from pavlovlab.models.training import _ensemble, _loss

    nets = [TinyTransformer(vocab_size(32, 32), d_model=16, n_layers=2, n_heads=2, d_head=8, attention=attention,
                            seed=s).double() for s in (0, 1, 2)]
    batches = [associative_recall(3, n_pairs=32, n_keys=32, n_values=32, generator=torch.Generator().manual_seed(s))
               for s in (0, 1, 2)]
    assert batches[0].tokens.shape[1] > 64
    tokens, targets = torch.stack([b.tokens for b in batches]), torch.stack([b.targets for b in batches])
    params, _ = torch.func.stack_module_state(nets)
    logits, losses = _ensemble(nets[0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got, got_losses = logits(params, tokens), losses(params, tokens, targets)
        got_losses.sum().backward()
    for e, (net, batch) in enumerate(zip(nets, batches, strict=True)):
        torch.testing.assert_close(got[e], net(batch.tokens), rtol=1e-12, atol=1e-12)
        loss = _loss(net(batch.tokens), batch.targets)
        torch.testing.assert_close(got_losses[e], loss, rtol=1e-12, atol=0.0)
        loss.backward()
        for name, p in net.named_parameters():
            torch.testing.assert_close(params[name].grad[e], p.grad, rtol=1e-10, atol=1e-12, msg=name)


# ---------------------------------------------------------------------------------------------------- bad input
def bad_input_rows() -> list:
    """Bad input of ``pavlovlab.models.training``: one row ``(case, call, expect, fragment)`` a case."""
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
        ("steps_to_threshold without accuracies", lambda: Tr.steps_to_threshold({"step": [1]}, 0.5), TypeError,
         "history: expected the dict train_recall returns"),
        ("train_models(['nope'])", lambda: Tr.train_models(["nope"], [0], steps=1, progress=False), ValueError,
         "attention: expected one of"),
        ("train_recall held-out batch without answer positions",
         lambda: Tr.train_recall(model, task_kwargs={}, task=_no_answers, steps=1, progress=False), ValueError,
         "batch: expected at least one answer position in every held-out batch, got none in the held-out batch of "
         "seed 0"),
        ("train_recall_batched held-out batch without answer positions",
         lambda: Tr.train_recall_batched([model], seeds=[4], task_kwargs={}, task=_no_answers, steps=1,
                                         progress=False), ValueError,
         "batch: expected at least one answer position in every held-out batch, got none in the held-out batch of "
         "seed 4"),
        ("train_recall(model='model')", lambda: Tr.train_recall("model", task_kwargs=task, steps=1, progress=False),
         TypeError, "model: expected a torch.nn.Module such as TinyTransformer, got str"),
        ("train_recall task=3", lambda: Tr.train_recall(model, task_kwargs=task, task=3, steps=1, progress=False),
         TypeError, "task: expected a batch generator"),
        ("train_recall_batched device 'nope'",
         lambda: Tr.train_recall_batched([model], seeds=[0], task_kwargs=task, steps=1, progress=False,
                                         device="nope"), ValueError, "device: expected a device name"),
        ("train_recall_batched seeds=0",
         lambda: Tr.train_recall_batched([model], seeds=0, task_kwargs=task, steps=1, progress=False), ValueError,
         "seeds: expected one seed per model (1), got 0"),
        ("steps_to_threshold(threshold=1.5)", lambda: Tr.steps_to_threshold({"step": [1], "accuracy": [0.5]}, 1.5),
         ValueError, "threshold: expected a number <= 1.0, got 1.5"),
        ("train_configs({'a': 1})", lambda: Tr.train_configs({"a": 1}, vocab_size=8), TypeError,
         "configs: expected a dict {name: TinyTransformer keywords}"),
        ("train_configs without task_kwargs", lambda: Tr.train_configs({"a": {}}, vocab_size=8, progress=False),
         TypeError, "train_kwargs: expected keywords of train_recall_batched, missing a required argument: "
         "'task_kwargs'"),
        ("train_configs steps=0",
         lambda: Tr.train_configs({"a": {}}, vocab_size=8, task_kwargs=task, steps=0, progress=False), ValueError,
         "steps: expected an integer >= 1, got 0"),
        ("train_configs device 'nope'",
         lambda: Tr.train_configs({"a": {}}, vocab_size=8, task_kwargs=task, device="nope", progress=False),
         ValueError, "device: expected a device name"),
    ]


def _no_answers(n_samples, *, generator, device):
    """A task whose batches ask nothing (every target IGNORE)."""
    return Ta.RecallBatch(torch.zeros(n_samples, 5, dtype=torch.long, device=device),
                          torch.full((n_samples, 5), Ta.IGNORE, device=device))


@parametrize(bad_input_rows())
def test_bad_input_row(call, expect, fragment):
    check(call, expect, fragment)
