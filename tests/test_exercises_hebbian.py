"""The checkers of notebook 02: right answers pass, wrong ones fail, stubs are greeted kindly, and
nothing raises."""

import pytest
import torch

from pavlovlab.exercises import hebbian as ex


def stub(*args):
    raise NotImplementedError("Exercise: write me")


def crash(*args):
    raise IndexError("index 3 is out of bounds")


# --- correct answers, written the way a learner would ------------------------------------------

def memory_loop(keys, values):
    S = torch.zeros(values.shape[1], keys.shape[1])
    for k, v in zip(keys, values):
        S = S + torch.outer(v, k)
    return S


def memory_matmul(keys, values):
    return values.T @ keys


def crosstalk_loop(keys, values, j):
    c = torch.zeros(values.shape[1], dtype=values.dtype)
    for i in range(len(keys)):
        if i != j:
            c = c + values[i] * (keys[i] @ keys[j])
    return c


def crosstalk_subtract(keys, values, j):
    S = values.T @ keys
    return S @ keys[j] - values[j] * (keys[j] @ keys[j])


# --- typical mistakes ----------------------------------------------------------------------------

def memory_transposed(keys, values):  # k vᵀ instead of v kᵀ
    return keys.T @ values


def memory_last_pair_only(keys, values):  # overwrites instead of adding
    return torch.outer(values[-1], keys[-1])


def crosstalk_keeps_signal(keys, values, j):  # forgets to leave out i = j
    return (values.T @ keys) @ keys[j]


def crosstalk_as_number(keys, values, j):  # returns the size, not the vector
    return crosstalk_subtract(keys, values, j).norm()


@pytest.mark.parametrize("check, fn", [(ex.check_memory, memory_loop), (ex.check_memory, memory_matmul),
                                       (ex.check_crosstalk, crosstalk_loop),
                                       (ex.check_crosstalk, crosstalk_subtract)])
def test_right_answers_pass(check, fn, capsys):
    assert check(fn) is True
    assert "✅" in capsys.readouterr().out


@pytest.mark.parametrize("check, fn", [(ex.check_memory, memory_transposed),
                                       (ex.check_memory, memory_last_pair_only),
                                       (ex.check_crosstalk, crosstalk_keeps_signal),
                                       (ex.check_crosstalk, crosstalk_as_number),
                                       (ex.check_memory, crash), (ex.check_crosstalk, crash),
                                       (ex.check_memory, "not a function")])
def test_wrong_answers_fail_with_a_hint(check, fn, capsys):
    assert check(fn) is False
    out = capsys.readouterr().out
    assert "❌" in out and "Hint:" in out and "Traceback" not in out


@pytest.mark.parametrize("check", [ex.check_memory, ex.check_crosstalk])
def test_stubs_are_greeted_kindly(check, capsys):
    assert check(stub) is False
    out = capsys.readouterr().out
    assert "not yet implemented" in out and "❌" not in out


def test_references_agree_with_the_definitions():
    g = torch.Generator().manual_seed(3)
    keys, values = torch.randn(5, 4, generator=g, dtype=torch.float64), torch.randn(5, 3, generator=g,
                                                                                     dtype=torch.float64)
    assert torch.allclose(ex.memory_reference(keys, values), memory_loop(keys, values).double())
    for j in range(5):
        assert torch.allclose(ex.crosstalk_reference(keys, values, j), crosstalk_loop(keys, values, j))
