"""The checkers of notebook 02: right answers pass, wrong ones fail with a hint that gives nothing away,
stubs are greeted kindly, nothing raises; the designed measurement is judged on its result."""


import pytest
import torch

from pavlovlab.memory.hebbian import measure_crosstalk_variance
from pavlovlab.sampling import random_keys
from pavlovlab.teach.exercises import hebbian_memory as hebbian

ex = hebbian
"""A learner's session; a fresh one before every test (``fresh_sessions`` in conftest.py)."""




def memory_loop(keys, values):
    S = torch.zeros(values.shape[1], keys.shape[1], dtype=keys.dtype)
    for k, v in zip(keys, values, strict=True):
        S = S + torch.outer(v, k)
    return S


def memory_matmul(keys, values):
    return values.T @ keys


def memory_float32(keys, values):  # computed in float32: less precise than the float64 inputs ask for
    return values.float().T @ keys.float()


def memory_transposed(keys, values):  # key × value: (d_k, d_v)
    return keys.T @ values


def memory_last_only(keys, values):  # overwrites instead of adding up
    return torch.outer(values[-1], keys[-1])


def crosstalk_loop(keys, values, j):
    c = torch.zeros(values.shape[1], dtype=values.dtype)
    for i in range(keys.shape[0]):
        if i != j:
            c = c + values[i] * (keys[i] @ keys[j])
    return c


def crosstalk_with_signal(keys, values, j):  # forgot to remove the pair's own note
    return (values.T @ keys) @ keys[j]


def crosstalk_all_pairs(keys, values, j):  # returns c for every pair, not just j
    S = values.T @ keys
    return keys @ S.T - values


def stub(*args):
    raise NotImplementedError("Exercise: to do")


@pytest.mark.parametrize("check, rights, wrongs", [
    (ex.check_memory, [memory_loop, memory_matmul],
     [memory_transposed, memory_last_only, memory_float32]),  # float32 for float64 pairs: less precise
    (ex.check_crosstalk, [crosstalk_loop], [crosstalk_with_signal, crosstalk_all_pairs]),
], ids=["memory", "crosstalk"])
def test_checkers(check, rights, wrongs, capsys):
    for right in rights:
        assert check(right) is True, capsys.readouterr().out
    capsys.readouterr()
    for wrong in wrongs:
        assert check(wrong) is False
        out = capsys.readouterr().out
        assert "❌" in out and "Hint:" in out and "values.T @ keys" not in out
    assert check(stub) is False
    assert "not yet implemented" in capsys.readouterr().out
    for bad in (None, lambda *a: "text", lambda *a: torch.zeros(1) @ torch.zeros(2)):
        assert check(bad) is False
    assert "Traceback" not in capsys.readouterr().out


def test_references_against_hand_sums(gen):
    keys = random_keys(5, d=4, kind="sphere", generator=gen, dtype=torch.float64)
    values = torch.randn(5, 3, generator=gen, dtype=torch.float64)
    torch.testing.assert_close(ex.memory_reference(keys, values),
                               sum(torch.outer(values[i], keys[i]) for i in range(5)))
    torch.testing.assert_close(ex.crosstalk_reference(keys, values, 2), crosstalk_loop(keys, values, 2))


def test_crosstalk_slope_checker_judges_the_result(capsys, fresh_sessions):
    ns = torch.tensor([2, 4, 8, 16, 32, 64, 128])
    g = torch.Generator().manual_seed(0)
    good = measure_crosstalk_variance(ns, 32, trials=200, generator=g)
    assert ex.check_crosstalk_slope(ns, good, 32) is True
    assert "✅" in capsys.readouterr().out
    assert ex.check_crosstalk_slope(ns, good.float(), 32) is True       # float32 is fine
    capsys.readouterr()
    fresh_sessions()
    assert ex.check_crosstalk_slope(ns, good + 1.0, 32) is False         # the signal measured too
    first = capsys.readouterr().out
    assert "❌" in first and "fitted slope" not in first
    assert ex.check_crosstalk_slope(ns, good + 1.0, 32) is False
    assert "theory" not in capsys.readouterr().out                       # the same answer again: no numbers
    assert ex.check_crosstalk_slope(ns, good + 2.0, 32) is False
    assert "theory" not in capsys.readouterr().out                       # nor on a 2nd: only once asked for
    assert ex.check_crosstalk_slope(ns, good, 64) is False               # told the wrong d_k: slope 2
    # too few memories, too narrow a range, too few n, wrong shape, NaN: all rejected, none raises
    few = measure_crosstalk_variance(ns, 32, trials=10, generator=g)
    for n, m in ((ns, few), (ns[:3], good[:, :3]), (torch.tensor([8, 9, 10, 11]), good[:, :4]),
                 (ns, good[:, :3]), (ns, torch.full_like(good, float("nan"))), (None, None)):
        assert ex.check_crosstalk_slope(n, m, 32) is False
    assert "Traceback" not in capsys.readouterr().out
