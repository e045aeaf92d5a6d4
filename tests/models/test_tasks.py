"""The associative-recall generator: layout, vocabulary, no leaks, no absent keys, seeding, devices."""

import itertools

import pytest
import torch
from badinput import check, parametrize
from hypothesis import given, settings
from hypothesis import strategies as st

from pavlovlab.models import tasks as Ta
from pavlovlab.models.tasks import (
    IGNORE,
    RecallBatch,
    associative_recall,
    backward_steps,
    pointer_chasing,
    pointer_vocab_size,
    vocab_size,
)


def _batch(device=None, **kw):
    args = dict(n_pairs=6, n_queries=3, n_keys=10, n_values=7)
    args.update(kw)
    return associative_recall(500, **args, generator=torch.Generator().manual_seed(0), device=device), args


def test_shapes_layout_and_vocabulary(device):
    b, a = _batch(device)
    S, Q, nk, nv = a["n_pairs"], a["n_queries"], a["n_keys"], a["n_values"]
    assert isinstance(b, RecallBatch)
    assert b.tokens.shape == b.targets.shape == (500, 2 * S + Q)
    assert b.tokens.dtype == b.targets.dtype == torch.long and b.tokens.device.type == device.type
    assert vocab_size(nk, nv) == nk + nv
    keys, values = b.tokens[:, 0:2 * S:2], b.tokens[:, 1:2 * S:2]
    assert bool(((keys >= 0) & (keys < nk)).all()) and bool(((values >= nk) & (values < nk + nv)).all())
    assert bool((b.tokens[:, 2 * S:] < nk).all())            # queries are keys
    assert bool((keys.sort(dim=1).values.diff(dim=1) > 0).all())   # keys distinct within a context


def test_never_leaks_answers_and_never_asks_an_absent_key():
    b, a = _batch()
    S = a["n_pairs"]
    mask = b.answer_mask
    assert bool((mask[:, :2 * S] == 0).all()) and bool(mask[:, 2 * S:].all())  # targets only at queries
    assert bool((b.targets[~mask] == IGNORE).all())
    keys, values, queries = b.tokens[:, 0:2 * S:2], b.tokens[:, 1:2 * S:2], b.tokens[:, 2 * S:]
    match = queries[:, :, None] == keys[:, None, :]          # (N, Q, S)
    assert bool((match.sum(-1) == 1).all())                  # every query is exactly one context key
    answers = (match * values[:, None, :]).sum(-1)
    assert torch.equal(answers, b.targets[:, 2 * S:])        # the answer is that key's value
    assert not bool((queries[:, :, None] == values[:, None, :]).any())   # no value at a query position
    assert bool((queries.sort(dim=1).values.diff(dim=1) > 0).all())     # distinct queries when Q <= S


def test_more_queries_than_pairs_and_all_answers_used():
    b, _ = _batch(n_pairs=2, n_queries=5)
    keys, queries = b.tokens[:, 0:4:2], b.tokens[:, 4:]
    assert bool((queries[:, :, None] == keys[:, None, :]).any(-1).all())
    assert set(b.targets[b.answer_mask].unique().tolist()) == set(range(10, 17))   # every value appears


def test_seeded_and_device_independent(device):
    b1, a = _batch()
    if device.type == "cpu":  # no second device to compare with: read each answer off the context by hand instead
        S = a["n_pairs"]
        for seq, target in zip(b1.tokens.tolist(), b1.targets.tolist(), strict=True):
            table = {seq[2 * i]: seq[2 * i + 1] for i in range(S)}
            assert all(0 <= seq[2 * i] < a["n_keys"] for i in range(S))
            assert [target[t] for t in range(2 * S, len(seq))] == [table[seq[t]] for t in range(2 * S, len(seq))]
    else:
        b2, _ = _batch(device)
        assert torch.equal(b1.tokens, b2.tokens.cpu()) and torch.equal(b1.targets, b2.targets.cpu())
    b3 = associative_recall(500, n_pairs=6, n_queries=3, n_keys=10, n_values=7,
                            generator=torch.Generator().manual_seed(1))
    assert not torch.equal(b1.tokens, b3.tokens)


def test_bad_input():
    with pytest.raises(ValueError, match="n_pairs"):
        associative_recall(4, n_pairs=20, n_keys=16)
    with pytest.raises(ValueError, match="n_samples"):
        associative_recall(0, n_pairs=2)
    with pytest.raises(TypeError, match="n_queries"):
        associative_recall(4, n_pairs=2, n_queries=1.5)
    with pytest.raises(TypeError, match="generator"):
        associative_recall(4, n_pairs=2, generator=0)


def _chase(tokens, targets, S, K):
    """Literal pointer chasing: follow the context's pairs K times from every query (a loop per sequence)."""
    answers = []
    for seq in tokens.tolist():
        table = {seq[2 * i]: seq[2 * i + 1] for i in range(S)}
        row = []
        for x in seq[2 * S + 1::2]:
            for _ in range(K):
                x = table[x]
            row.append(x)
        answers.append(row)
    return torch.tensor(answers)


@pytest.mark.parametrize("S, K, Q", [(5, 1, 2), (6, 2, 4), (7, 3, 9)])
def test_pointer_chasing_answers_by_a_literal_loop(S, K, Q):
    b = pointer_chasing(200, n_pairs=S, hops=K, n_queries=Q, n_items=9, generator=torch.Generator().manual_seed(S))
    assert b.tokens.shape == b.targets.shape == (200, 2 * S + 2 * Q)
    assert bool((b.tokens[:, 2 * S::2] == 9).all())                     # the separator before each query
    assert pointer_vocab_size(9) == 10 and int(b.tokens.max()) == 9
    keys, values = b.tokens[:, 0:2 * S:2], b.tokens[:, 1:2 * S:2]
    assert bool((keys.sort(1).values.diff(1) > 0).all())                 # distinct keys
    assert torch.equal(keys.sort(1).values, values.sort(1).values)      # every value is also a key
    assert torch.equal(b.targets[:, 2 * S + 1::2], _chase(b.tokens, b.targets, S, K))
    assert bool((b.targets[:, 2 * S + 1::2] != b.tokens[:, 2 * S + 1::2]).all())   # no fixed points
    mask = b.answer_mask
    assert int(mask.sum()) == 200 * Q and not bool(mask[:, :2 * S + 1].any())


def test_pointer_chasing_bad_input():
    with pytest.raises(ValueError, match="hops"):
        pointer_chasing(4, n_pairs=4, hops=4)
    with pytest.raises(ValueError, match="n_pairs"):
        pointer_chasing(4, n_pairs=10, n_items=8)
    with pytest.raises(TypeError, match="hops"):
        pointer_chasing(4, n_pairs=4, hops=1.0)


@pytest.mark.parametrize("S, K, Q", [(5, 1, 2), (6, 2, 6), (7, 3, 9)])
def test_separated_pointer_chasing_has_one_successor_per_item(S, K, Q):
    b = pointer_chasing(300, n_pairs=S, hops=K, n_queries=Q, n_items=9, separator=True,
                        generator=torch.Generator().manual_seed(S))
    assert b.tokens.shape == (300, 3 * S + 2 * Q) and pointer_vocab_size(9, separator=True) == 11
    assert bool((b.tokens[:, 2:3 * S:3] == 10).all()) and int(b.tokens.max()) == 10
    assert bool((b.tokens[:, 3 * S::2] == 9).all())
    pairs = torch.stack([b.tokens[:, 0:3 * S:3], b.tokens[:, 1:3 * S:3]], -1)
    unseparated = torch.cat([pairs.flatten(1), b.tokens[:, 3 * S:]], dim=1)
    assert torch.equal(b.targets[:, 3 * S + 1::2], _chase(unseparated, None, S, K))
    for seq in b.tokens[:, :3 * S].tolist():   # item followed by item: only a pair's source and its target
        adjacent = {(x, y) for x, y in itertools.pairwise(seq) if x < 9 and y < 9}
        assert adjacent == {(seq[3 * i], seq[3 * i + 1]) for i in range(S)}


def _backward_steps_literal(tokens, S, K, width):
    """For every query: walk the chain through the context's pairs, counting steps to an earlier pair."""
    out = []
    for seq in tokens.tolist():
        index = {seq[width * i]: i for i in range(S)}
        row = []
        for x in seq[width * S + 1::2]:
            count = 0
            for _ in range(K - 1):
                here = index[x]
                x = seq[width * here + 1]
                count += index[x] < here
            row.append(count)
        out.append(row)
    return torch.tensor(out)


@pytest.mark.parametrize("separator", [False, True])
@pytest.mark.parametrize("S, K, Q", [(5, 1, 3), (6, 2, 6), (7, 3, 9)])
def test_backward_steps_by_a_literal_loop(S, K, Q, separator):
    b = pointer_chasing(200, n_pairs=S, hops=K, n_queries=Q, n_items=9, separator=separator,
                        generator=torch.Generator().manual_seed(K))
    kinds = backward_steps(b, n_pairs=S, hops=K, separator=separator)
    assert torch.equal(kinds, _backward_steps_literal(b.tokens, S, K, 3 if separator else 2))
    assert set(kinds.unique().tolist()) == set(range(K))     # every type occurs in 200 sequences
    with pytest.raises(ValueError, match="batch"):
        backward_steps(b, n_pairs=S + Q, hops=K, separator=separator)
    with pytest.raises(TypeError, match="batch"):
        backward_steps(b.tokens, n_pairs=S, hops=K)


# ---------------------------------------------------------------------------------------------------- bad input
def bad_input_rows() -> list:
    """Bad input of ``pavlovlab.models.tasks``: one row ``(case, call, expect, fragment)`` a case."""
    return [
        ("associative_recall(device='nope')", lambda: Ta.associative_recall(2, n_pairs=2, device="nope"), ValueError,
         "device: expected a device name such as 'cpu'"),
        ("pointer_chasing(device='tpu')", lambda: Ta.pointer_chasing(2, n_pairs=3, device="tpu"), ValueError,
         "device: expected a device name"),
        ("associative_recall(device=3)", lambda: Ta.associative_recall(2, n_pairs=2, device=3), TypeError,
         "device: expected a torch.device"),
        ("backward_steps(tokens)", lambda: Ta.backward_steps(torch.zeros(2, 8), n_pairs=2, hops=2), TypeError,
         "batch: expected the RecallBatch of pointer_chasing"),
        ("backward_steps(n_pairs=1)", lambda: Ta.backward_steps(Ta.pointer_chasing(2, n_pairs=3), n_pairs=1, hops=2),
         ValueError, "n_pairs: expected an integer >= 2"),
        ("pointer_vocab_size(1)", lambda: Ta.pointer_vocab_size(1), ValueError, "n_items: expected an integer >= 2"),
    ]


@parametrize(bad_input_rows())
def test_bad_input_row(call, expect, fragment):
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
