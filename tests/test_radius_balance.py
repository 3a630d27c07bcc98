"""The probe radius that follows the balance of the comparisons (zeroopt.RadiusFollowsBalance)."""

from __future__ import annotations

import numpy as np
import pytest

import zeroopt
from zeroopt import GradientEstimate, Move, RadiusFollowsBalance


class _Solver:
    """The one attribute the rule reads: the solver's own β."""

    beta = 0.01


def _move(beta: float) -> Move:
    return Move(x=np.zeros(3), fx=1.0, fx_eps=0.0, step_taken=0.1, next_step=0.1, beta=beta)


def _estimate(below: float | None, used: int = 100) -> GradientEstimate:
    return GradientEstimate(g=np.zeros(3), eps=0.0, used=used, below_fraction=below)


def _run(rule: RadiusFollowsBalance, fractions: list[float], beta: float = 0.01) -> list[float]:
    out = []
    for p in fractions:
        beta = rule(_Solver(), None, _estimate(p), _move(beta)).beta
        out.append(beta)
    return out


def test_lopsided_comparisons_narrow_beta_down_to_its_floor_and_balanced_ones_widen_it_back() -> None:
    rule = RadiusFollowsBalance()
    narrowed = _run(rule, [0.2] * 10)
    assert np.all(np.diff(narrowed[:6]) < 0)
    assert narrowed[-1] == pytest.approx(0.001)  # a tenth of the solver's β, never below
    widened = _run(rule, [0.5] * 10, beta=narrowed[-1])
    assert np.all(np.diff(widened[:6]) > 0)
    assert widened[-1] == pytest.approx(0.01)  # never above the solver's β


def test_between_one_and_two_standard_errors_beta_holds() -> None:
    # 100 probes: s̄ = 0.12 / 0.14 / 0.16 are 1.2 / 1.4 / 1.6 standard errors above 0.
    assert _run(RadiusFollowsBalance(), [0.44, 0.43, 0.42], beta=0.005) == [0.005] * 3


def test_the_same_share_narrows_beta_only_when_enough_probes_say_so() -> None:
    rule = RadiusFollowsBalance()
    assert rule(_Solver(), None, _estimate(0.38, used=200), _move(0.01)).beta < 0.01  # 3.5 standard errors
    assert rule(_Solver(), None, _estimate(0.38, used=20), _move(0.01)).beta == 0.01  # 1.1


def test_a_surplus_of_lower_values_widens_beta() -> None:
    """Only the curvature's sign at a minimum (higher values) narrows β; a surplus of lower ones is balance."""
    assert _run(RadiusFollowsBalance(), [0.8], beta=0.005)[0] > 0.005


def test_what_the_rule_cannot_read_or_did_not_set_is_left_alone() -> None:
    rule = RadiusFollowsBalance()
    assert rule(_Solver(), None, _estimate(None), _move(0.01)).beta == 0.01  # forward differences
    assert rule(_Solver(), None, _estimate(float("nan")), _move(0.01)).beta == 0.01
    # A β the stall rule moved below the floor stays where it put it, lopsided or balanced.
    assert rule(_Solver(), None, _estimate(0.1), _move(1e-4)).beta == 1e-4
    assert rule(_Solver(), None, _estimate(0.5), _move(1e-4)).beta == 1e-4


@pytest.mark.parametrize("kwargs, match", [
    ({"narrow_z": 1.0, "widen_z": 2.0}, "widen_z < narrow_z"),
    ({"widen_z": -1.0}, "widen_z < narrow_z"),
    ({"step": 1.0}, "step"),
    ({"floor_ratio": 0.0}, "floor_ratio"),
])
def test_bad_settings_say_which_and_why(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        RadiusFollowsBalance(**kwargs)


def test_the_option_is_a_bool() -> None:
    with pytest.raises(TypeError, match="beta_balance"):
        zeroopt.make_solver("sign-growing", zeroopt.SolverContext(dim=4), beta_balance="yes")


def test_a_sign_descent_near_a_minimum_narrows_its_probes_and_ends_lower() -> None:
    """On a quadratic (condition 10, d = 20) probes at β = 0.05 are lopsided once the iterate is within about
    β of the minimum, and a sign descent crawls there; the rule narrows β and the same budget ends lower,
    over eight seeds."""
    h = np.logspace(0, 1, 20)

    def f(x: np.ndarray) -> float:
        return float(np.sum(h * x**2))

    def run(seed: int, **options: object) -> zeroopt.OptimizeResult:
        return zeroopt.minimize(f, np.ones(20), solver="sign-growing", budget=3000, seed=seed, beta=0.05, **options)

    ratios, last_beta = [], []
    for seed in range(8):
        plain, balanced = run(seed), run(seed, beta_balance=True)
        ratios.append(balanced.fun / plain.fun)
        last_beta.append(balanced.history_array("beta")[-1])
    assert np.exp(np.mean(np.log(ratios))) < 0.5
    assert max(last_beta) < 0.05


def test_forward_differences_keep_their_beta() -> None:
    """rgf states no balance of comparisons: with the option on, β changes only where the stall rule changes it."""
    h = np.logspace(0, 1, 10)

    def f(x: np.ndarray) -> float:
        return float(np.sum(h * x**2))

    a = zeroopt.minimize(f, np.ones(10), solver="rgf", budget=1500, seed=3, beta=0.01, step=0.01)
    b = zeroopt.minimize(f, np.ones(10), solver="rgf", budget=1500, seed=3, beta=0.01, step=0.01, beta_balance=True)
    assert a.fun == b.fun
    np.testing.assert_array_equal(a.history_array("beta"), b.history_array("beta"))
