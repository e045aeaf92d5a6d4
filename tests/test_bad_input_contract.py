"""Types accepted by contract (the list in ``pavlovlab._checks``' docstring): each is converted as documented and
gives exactly the result of the canonical type; the near misses are refused by name."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from pavlovlab._checks import check_device, check_float_dtype, check_int, check_real, check_shape
from pavlovlab.attention import forms as A
from pavlovlab.conditioning import learning as C
from pavlovlab.conditioning import trials as Tt


def _qkv(T=9, d=4):
    g = torch.Generator().manual_seed(0)
    return (torch.randn(T, d, generator=g), torch.randn(T, d, generator=g), torch.randn(T, 3, generator=g))


def test_numpy_integers_are_integers():
    q, k, v = _qkv()
    assert torch.equal(A.linear_attention(q, k, v, chunk_size=np.int64(4)), A.linear_attention(q, k, v, chunk_size=4))
    assert check_int("n", np.int32(3)) == 3 and type(check_int("n", np.int64(3))) is int
    for bad in (4.0, True, "4", np.float64(4)):
        with pytest.raises(TypeError, match="chunk_size: expected an integer"):
            A.linear_attention(q, k, v, chunk_size=bad)


def test_one_element_tensors_and_numpy_floats_are_numbers():
    q, k, v = _qkv()
    assert torch.equal(A.softmax_attention(q, k, v, scale=torch.tensor(2.0)), A.softmax_attention(q, k, v, scale=2.0))
    cs, us, _ = Tt.acquisition(10)
    assert torch.equal(C.rescorla_wagner(cs, us, alpha=np.float32(0.25)), C.rescorla_wagner(cs, us, alpha=0.25))
    assert check_real("x", np.float32(0.5)) == 0.5 and type(check_real("x", torch.tensor([0.5]))) is float
    with pytest.raises(TypeError, match="that requires grad"):
        check_real("scale", torch.tensor(2.0, requires_grad=True))
    with pytest.raises(TypeError, match=r"got a tensor of shape \(2,\)"):
        A.softmax_attention(q, k, v, scale=torch.tensor([2.0, 3.0]))


def test_dtype_names():
    assert check_float_dtype("dtype", "float32") is torch.float32
    assert check_float_dtype("dtype", "torch.float64") is torch.float64
    assert Tt.acquisition(3, dtype="float64").cs.dtype == torch.float64
    assert check_float_dtype("dtype", "double") is torch.float64   # torch's own aliases are its names too
    for bad in ("int64", "f32", "float31", torch.long, 32):
        with pytest.raises(TypeError, match="dtype: expected a floating-point dtype"):
            check_float_dtype("dtype", bad, allow_none=False)


def test_device_names():
    assert check_device("device", "cpu") == torch.device("cpu") and check_device("device", None) is None
    assert check_device("device", torch.device("cpu")) == torch.device("cpu")
    for bad in ("gpu0", "tpu", "nope", ""):
        with pytest.raises(ValueError, match="device: expected a device name"):
            check_device("device", bad)
    with pytest.raises(TypeError, match=r"device: expected a torch\.device"):
        check_device("device", 0)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA device"):
            check_device("device", "cuda")


def test_shapes():
    assert check_shape("batch_shape", [2, np.int64(3)]) == (2, 3) == check_shape("batch_shape", torch.Size([2, 3]))
    assert check_shape("batch_shape", ()) == ()
    with pytest.raises(TypeError, match="batch_shape: expected a tuple of sizes"):
        check_shape("batch_shape", 3)
    with pytest.raises(ValueError, match=r"batch_shape\[0\]: expected an integer >= 1, got -2"):
        check_shape("batch_shape", (-2,))
