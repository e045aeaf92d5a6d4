"""The declaration of a door's check (``pavlovlab._checks.checked_by``): what the body receives, what a caller
sees (signature, errors, warnings), and that ``unchecked`` gives back a body that checks nothing."""

import inspect
import warnings

import numpy as np
import pytest
import torch

from pavlovlab._checks import NonFiniteWarning, check_int, check_tensor, checked_by, unchecked

SEEN: list[dict] = []


def _check_counts(n, scale):
    SEEN.append({"n": n, "scale": scale})
    return {"n": check_int("n", n, low=1)}


@checked_by(_check_counts)
def repeat(x: torch.Tensor, n: int, *, scale: float = 2.0) -> torch.Tensor:
    """x repeated n times, times scale."""
    return x.repeat(n) * scale


def _check_x(x):
    check_tensor("x", x, finite=False)


@checked_by(_check_x, nonfinite="x is too large")
def square(x: torch.Tensor) -> torch.Tensor:
    """x²."""
    return x * x


@checked_by(_check_x, nonfinite=lambda given: f"x of shape {tuple(given['x'].shape)} is too large", finite=("x",))
def square_with_state(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(x², x)."""
    return x * x, x


def test_the_door_keeps_the_body_signature_name_and_doc():
    assert repeat.__name__ == "repeat" and repeat.__doc__ == "x repeated n times, times scale."
    assert str(inspect.signature(repeat)) == "(x: torch.Tensor, n: int, *, scale: float = 2.0) -> torch.Tensor"


def test_the_validator_gets_the_arguments_it_names_with_defaults_and_the_body_its_checked_values():
    SEEN.clear()
    out = repeat(torch.ones(1), np.int64(3))        # a NumPy integer, made an int by the validator
    assert SEEN == [{"n": 3, "scale": 2.0}] and type(SEEN[0]["n"]).__name__ == "int64"
    assert out.tolist() == [2.0, 2.0, 2.0]
    assert repeat(torch.ones(1), n=2, scale=1.0).tolist() == [1.0, 1.0]


def test_a_bad_argument_raises_from_the_validator_before_the_body():
    with pytest.raises(ValueError, match="n: expected an integer >= 1, got 0"):
        repeat(torch.ones(1), 0)


@pytest.mark.parametrize("call, message", [
    (lambda: repeat(torch.ones(1)), r"repeat\(\) missing 1 required positional argument: 'n'"),
    (lambda: repeat(torch.ones(1), 2, 3.0), r"repeat\(\) takes 2 positional arguments but 3 were given"),
    (lambda: repeat(torch.ones(1), 2, size=3), r"repeat\(\) got an unexpected keyword argument 'size'"),
    (lambda: repeat(torch.ones(1), 2, n=3), r"repeat\(\) got multiple values for argument 'n'"),
    (lambda: repeat(n=2), r"repeat\(\) missing 1 required positional argument: 'x'"),
])
def test_a_call_that_does_not_bind_raises_python_s_own_error_naming_the_door(call, message):
    SEEN.clear()
    with pytest.raises(TypeError, match=message):
        call()
    assert SEEN == [], "the validator does not run on arguments that do not bind"


def test_a_non_finite_result_warns_once_naming_the_door_at_the_caller_s_line():
    with pytest.warns(NonFiniteWarning, match=r"square: the result became NaN/inf from finite inputs \(x is too "
                      r"large\)") as record:
        square(torch.tensor([1e30]))
    assert len(record) == 1 and record[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        square(torch.tensor([2.0]))


def test_finite_inputs_are_checked_with_the_result_and_a_tuple_result_by_its_first_element():
    with pytest.raises(ValueError, match="x: expected finite values, got 1 NaN/inf entry"):
        square_with_state(torch.tensor([1.0, float("nan")]))
    with pytest.warns(NonFiniteWarning, match=r"x of shape \(1,\) is too large"):
        square_with_state(torch.tensor([1e30]))


def test_unchecked_gives_the_body_which_checks_nothing():
    SEEN.clear()
    assert unchecked(repeat)(torch.ones(1), 0).numel() == 0
    assert SEEN == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        unchecked(square)(torch.tensor([1e30]))


class Scaled:
    def __init__(self, factor: float) -> None:
        self.factor = factor

    @checked_by(_check_x)
    def apply(self, x: torch.Tensor) -> torch.Tensor:
        """x times the factor."""
        return x * self.factor


def test_a_method_is_a_door_too():
    assert Scaled(3.0).apply(torch.ones(2)).tolist() == [3.0, 3.0]
    with pytest.raises(TypeError, match=r"x: expected a torch\.Tensor, got list"):
        Scaled(3.0).apply([1.0])


def test_a_validator_that_names_an_argument_the_door_lacks_is_refused_at_the_declaration():
    with pytest.raises(TypeError, match=r"_check_counts: checks \['scale'\], which .*lonely does not take"):
        @checked_by(_check_counts)
        def lonely(n):
            return n
    with pytest.raises(TypeError, match=r"takes named parameters \(with \*args and \*\*kwargs\) only"):
        @checked_by(_check_x)
        def first(x, /):
            return x


@checked_by(_check_counts)
def build(n: int, *, scale: float = 1.0, **options: object) -> dict:
    """The checked count and the options passed on."""
    return {"n": n, **options}


def test_a_door_with_keyword_options_passes_them_on_and_still_refuses_a_missing_argument():
    assert build(np.int64(2), colour="red") == {"n": 2, "colour": "red"}
    with pytest.raises(TypeError, match=r"build\(\) missing 1 required positional argument: 'n'"):
        build(colour="red")


def test_a_validator_returns_checked_values_of_its_own_arguments_only():
    def _check_n(n):
        return {"scale": 1.0}

    @checked_by(_check_n)
    def scaled(n, scale=2.0):
        return n * scale

    with pytest.raises(TypeError, match=r"_check_n: returned checked values of \['scale'\], which it does not take"):
        scaled(3)


def test_a_traceback_shows_the_door_s_lines():
    import traceback
    try:
        repeat(torch.ones(1), 0)
    except ValueError as e:
        shown = "".join(traceback.format_exception(e))
    assert "checked = validator(n, scale)" in shown and "in repeat" in shown


def _check_sizes(sizes, fill):
    return {"sizes": tuple(check_int(f"sizes[{i}]", s, low=0) for i, s in enumerate(sizes))}


@checked_by(_check_sizes)
def filled(*sizes: int, fill: float = 0.0) -> torch.Tensor:
    """A tensor of the given sizes, filled."""
    return torch.full(sizes, fill)


def test_a_door_with_star_args_checks_them_as_one_tuple_and_passes_the_checked_tuple_on():
    assert str(inspect.signature(filled)) == "(*sizes: int, fill: float = 0.0) -> torch.Tensor"
    assert filled(np.int64(2), 3, fill=1.0).shape == (2, 3)
    assert filled().shape == ()
    with pytest.raises(ValueError, match=r"sizes\[1\]: expected an integer >= 0, got -1"):
        filled(2, -1)
    with pytest.raises(TypeError, match=r"filled\(\) got an unexpected keyword argument 'size'"):
        filled(2, size=3)


@checked_by(_check_x)
def halved_sum(x: torch.Tensor) -> float:
    """The sum of x over 2, as a number (its non-finite warning is the body's, on a tensor it computes)."""
    from pavlovlab._checks import warn_nonfinite
    return warn_nonfinite("halved_sum", x.sum() / 2, "very large x overflow the sum").item()


def test_a_warning_from_a_declared_door_s_body_points_at_the_caller_s_line():
    with pytest.warns(NonFiniteWarning, match="halved_sum: the result became NaN/inf") as record:
        halved_sum(torch.tensor([3e38, 3e38]))
    assert len(record) == 1 and record[0].filename == __file__


@checked_by(_check_x, nonfinite="x is too large", finite=("x",))
def copied(x: torch.Tensor) -> torch.Tensor:
    """A copy of x."""
    return x.clone()


def test_finite_values_whose_sum_overflows_neither_raise_nor_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = torch.tensor([3e38, 3e38])                 # float32: each finite, their sum inf
        assert torch.equal(copied(x), x)
