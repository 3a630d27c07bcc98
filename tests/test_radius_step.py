"""The probe radius that follows the step (zeroopt.RadiusFollowsStep)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import zeroopt
from zeroopt import GradientEstimate, Move, RadiusFollowsStep
from zeroopt.step.radius_step import STEP_RADIUS_RATIO

ESTIMATE = GradientEstimate(g=np.zeros(3), eps=0.0, used=20)


class _Solver:
    """The one attribute of the solver the rule reads: its own β."""

    beta = 0.04


class _Before:
    """The one attribute of the state before the step the rule reads: the iterate."""

    x = np.zeros(3)


def _run(rule: RadiusFollowsStep, steps: list[float], beta: float = 0.04) -> list[float]:
    out, memory = [], {}
    for step in steps:
        # The step rule's step (here twice the distance) only says whether the iterate moved.
        x = np.array([step if math.isfinite(step) else 0.0, 0.0, 0.0])
        move = Move(x=x, fx=1.0, fx_eps=0.0, step_taken=2 * step, next_step=1.0, beta=beta, memory=memory)
        after = rule(_Solver(), _Before(), ESTIMATE, move)
        beta, memory = after.beta, after.memory
        out.append(beta)
    return out


def test_beta_is_a_share_of_the_steps_running_geometric_mean() -> None:
    betas = _run(RadiusFollowsStep(ratio=0.25, smoothing=0.5), [0.08, 0.02])
    assert betas[0] == pytest.approx(0.02)  # a quarter of the first step
    assert betas[1] == pytest.approx(0.25 * math.sqrt(0.08 * 0.02))  # of the mean of log 0.08 and log 0.02


def test_long_steps_keep_the_solvers_beta_and_short_ones_stop_at_the_floor() -> None:
    rule = RadiusFollowsStep()
    assert _run(rule, [0.5, 0.3, 0.2]) == [0.04] * 3
    shortening = _run(rule, list(np.geomspace(0.3, 0.001, 12)))
    assert np.all(np.diff(shortening) <= 0) and shortening[-1] == pytest.approx(0.01)  # a quarter of 0.04


@given(st.lists(st.floats(1e-6, 10.0), min_size=1, max_size=30), st.floats(0.01, 5.0), st.floats(0.05, 1.0),
       st.floats(0.05, 1.0))
def test_beta_never_leaves_its_range(steps: list[float], ratio: float, floor: float, smoothing: float) -> None:
    betas = _run(RadiusFollowsStep(ratio=ratio, floor_ratio=floor, smoothing=smoothing), steps)
    assert all(0.04 * floor * (1 - 1e-12) <= b <= 0.04 for b in betas)


def test_a_step_not_taken_or_a_beta_the_stall_rule_moved_is_left_alone() -> None:
    rule = RadiusFollowsStep()
    assert _run(rule, [0.0, float("nan")]) == [0.04, 0.04]
    assert _run(rule, [0.08, 0.0]) == pytest.approx([0.02, 0.02])
    assert _run(rule, [0.08], beta=1e-4) == [1e-4]  # below the floor: the stall rule's β stays


@pytest.mark.parametrize("kwargs, match", [
    ({"ratio": 0.0}, "ratio"), ({"ratio": float("inf")}, "ratio"), ({"floor_ratio": 1.5}, "floor_ratio"),
    ({"smoothing": 0.0}, "smoothing"),
])
def test_bad_settings_say_which_and_why(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        RadiusFollowsStep(**kwargs)


@pytest.mark.parametrize("kwargs, match", [({"beta_per_step": -1.0}, "beta_per_step"),
                                           ({"beta_per_step": 0.25, "beta_step_floor": 0.0}, "beta_step_floor")])
def test_bad_options_say_which(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        zeroopt.make_solver("sign-growing", zeroopt.SolverContext(dim=4), **kwargs)


def test_a_sign_descent_starts_wide_narrows_as_its_steps_shorten_and_ends_lower() -> None:
    """On a quadratic (condition 10, d = 20) from far away, a sign descent with probes β = 0.2 wide crawls once
    the iterate is within about β of the minimum; the rule narrows β with the steps and the same budget ends
    lower, over eight seeds — having used the solver's β while the steps were long."""
    h = np.logspace(0, 1, 20)

    def f(x: np.ndarray) -> float:
        return float(np.sum(h * x**2))

    def run(seed: int, **options: object) -> zeroopt.OptimizeResult:
        return zeroopt.minimize(f, np.full(20, 3.0), solver="sign-growing", budget=3000, seed=seed, beta=0.2,
                                **options)

    ratios = []
    for seed in range(8):
        wide, following = run(seed), run(seed, beta_per_step=0.25, beta_step_floor=0.01)
        ratios.append(following.fun / wide.fun)
        betas = following.history_array("beta")
        assert betas[0] == 0.2 and betas[-1] < 0.05
    assert np.exp(np.mean(np.log(ratios))) < 0.5


def test_the_attacks_smooth_radius_starts_wide_and_narrows_to_growing_beta_as_its_steps_shorten() -> None:
    """sign-growing where the value is a smooth radius (the hard-label g of a neural network; here the distance
    along θ to a plane, whose minimum is the plane's normal): probes 0.04 rad wide at first, at the
    tangent level, and 0.01 rad once the steps have shortened; ``beta_per_step=None`` keeps β fixed."""
    d = 40
    normal = np.abs(np.random.default_rng(3).standard_normal(d))
    normal /= np.linalg.norm(normal)

    def plane(theta: np.ndarray) -> float:
        cos = float(normal @ theta) / float(np.linalg.norm(theta))
        return 1 / cos if cos > 1e-9 else 1e6

    radial = zeroopt.SolverContext(dim=d, unit_sphere=True, radial=True, adjustable_precision=True)
    resolved = zeroopt.get_solver("sign-growing").defaults(radial)
    assert resolved["probe_level"] == "tangent" and resolved["beta_per_step"] == STEP_RADIUS_RATIO
    wide, narrow = 0.04, 0.01
    assert resolved["beta"] * resolved["beta_step_floor"] == pytest.approx(narrow) and wide > narrow

    def run(**options: Any) -> zeroopt.OptimizeResult:
        solver = zeroopt.make_solver("sign-growing", radial, **options)
        group = zeroopt.IndependentGroup([zeroopt.as_oracle(plane, (d,), budget=3000)])
        x0 = np.abs(np.random.default_rng(11).standard_normal(d))
        (res,) = zeroopt.drive([zeroopt.run_solver(solver, x0, rng=np.random.default_rng(0))], group)
        return res

    betas = run().history_array("beta")
    assert betas[0] == pytest.approx(wide) and betas[-1] == pytest.approx(narrow)
    assert set(run(beta_per_step=None).history_array("beta")) == {wide}
