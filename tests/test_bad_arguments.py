"""Bad arguments raise errors that say what to fix."""

from __future__ import annotations

import numpy as np
import pytest

import zeroopt


def f(x: np.ndarray) -> float:
    return float(x @ x)


def test_unknown_solver_suggests_the_closest_name() -> None:
    with pytest.raises(ValueError, match=r"unknown solver 'rfg'.*Did you mean 'rgf'"):
        zeroopt.minimize(f, np.ones(3), solver="rfg", budget=10)


@pytest.mark.parametrize("budget", [0, -5])
def test_non_positive_budget(budget: int) -> None:
    with pytest.raises(ValueError, match="budget must be a positive integer"):
        zeroopt.minimize(f, np.ones(3), budget=budget)


@pytest.mark.parametrize("budget", [2.5, "100", True, None])
def test_budget_of_wrong_type(budget: object) -> None:
    with pytest.raises(TypeError, match="budget must be a positive integer"):
        zeroopt.minimize(f, np.ones(3), budget=budget)  # type: ignore[arg-type]


def test_x0_with_nan() -> None:
    with pytest.raises(ValueError, match="x0 contains 1 non-finite"):
        zeroopt.minimize(f, np.array([1.0, np.nan, 0.0]), budget=10)


@pytest.mark.parametrize("x0", [np.array(["a", "b"]), np.array([1 + 2j]), np.array([True, False]), np.array([None])])
def test_x0_of_wrong_dtype(x0: np.ndarray) -> None:
    with pytest.raises(TypeError, match="x0 must be an array of real numbers"):
        zeroopt.minimize(f, x0, budget=10)


def test_empty_x0() -> None:
    with pytest.raises(ValueError, match="x0 is empty"):
        zeroopt.minimize(f, np.array([]), budget=10)


def test_unknown_option_lists_valid_ones() -> None:
    with pytest.raises(TypeError, match=r"no option 'betta'.*Did you mean 'beta'"):
        zeroopt.minimize(f, np.ones(3), budget=10, betta=0.1)


@pytest.mark.parametrize("opts", [{"q": 0}, {"q": 2.5}, {"beta": -1.0}, {"beta": float("nan")}, {"line_search": "x"}])
def test_invalid_option_values(opts: dict) -> None:
    with pytest.raises((ValueError, TypeError), match="q|beta|line_search"):
        zeroopt.minimize(f, np.ones(3), budget=10, **opts)


def test_rgf_fixed_without_lipschitz_says_how_to_fix() -> None:
    with pytest.raises(ValueError, match="pass lipschitz=L1"):
        zeroopt.minimize(f, np.ones(3), solver="rgf-fixed", budget=10)


def test_integer_x0_is_accepted_as_float() -> None:
    res = zeroopt.minimize(f, np.array([1, 2, 3]), budget=200, seed=0)
    assert res.x.dtype == np.float64 and res.fun < 14


def test_non_callable_objective() -> None:
    with pytest.raises(TypeError, match="pass a callable"):
        zeroopt.minimize(42, np.ones(3), budget=10)  # type: ignore[arg-type]


def test_objective_returning_an_array() -> None:
    with pytest.raises(ValueError, match="must return a scalar"):
        zeroopt.minimize(lambda x: x, np.ones(3), budget=10)


@pytest.mark.parametrize("opts", [{"line_search": "bogus"}, {"beta_decay": 5.0}, {"grow": -1.0}])
def test_rgf_fixed_validates_the_shared_options(opts: dict) -> None:
    with pytest.raises(ValueError, match="line_search|beta_decay|grow"):
        zeroopt.minimize(f, np.ones(3), solver="rgf-fixed", lipschitz=2.0, budget=10, **opts)
