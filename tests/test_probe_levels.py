"""What a comparison estimator compares its probes with: the value, or the tangent plane of a radial objective."""

from __future__ import annotations

import numpy as np
import pytest
from boundary_oracles import drive_one, linear_group

import zeroopt
from zeroopt.estimate.estimators import probe_levels, shrunk_centered_sign_of_difference, sign_of_difference

D = 16


def _near_the_optimum(tilt: float) -> tuple[np.ndarray, np.ndarray]:
    """A flat boundary w·x = 1 (nearest point e_0/2) and a direction ``tilt`` radians from its normal."""
    w = np.zeros(D)
    w[0] = 2.0
    theta = np.cos(tilt) * np.eye(D)[0] + np.sin(tilt) * np.eye(D)[1]
    return w, theta


def _signs(level: str, tilt: float, beta: float, q: int = 400) -> tuple[np.ndarray, np.ndarray]:
    """Which probes the oracle finds below, and which have a negative slope along their tangent direction."""
    w, theta = _near_the_optimum(tilt)
    group = linear_group(np.zeros(D), w, -1.0, budget=10**6)
    (start,) = group.answer([(0, zeroopt.Evaluate(points=theta[None, :], eps=1e-9))])
    u = np.random.default_rng(0).standard_normal((q, D))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    est = drive_one(sign_of_difference(theta, float(start.values[0]), u, beta, float(D), None, level=level), group)
    below = est.weights < 0  # weights are sign/q: -1/q where the probe was found below
    p = theta + beta * u
    tangent = p - (p @ theta)[:, None] * theta  # each probe's direction within the tangent plane at θ
    # g(θ) = 1/(w·θ) on the unit sphere: its slope along a tangent direction t is -(w·t)/(w·θ)², negative iff w·t > 0.
    return below, tangent @ w > 0


@pytest.mark.parametrize("beta", [0.01, 0.3])
def test_on_a_flat_boundary_the_tangent_level_reads_the_slope_s_sign_at_any_radius(beta: float) -> None:
    below, downhill = _signs("tangent", tilt=0.02, beta=beta)
    np.testing.assert_array_equal(below, downhill)
    assert 0.3 < below.mean() < 0.7


def test_near_the_optimum_the_value_level_finds_most_probes_higher_whatever_their_slope() -> None:
    """The sphere of radius g(θ) curves away from the boundary by g·β²/2: near the optimum that offset outweighs
    the slope along most probes, which the tangent level does not see."""
    below, downhill = _signs("value", tilt=0.002, beta=0.01)
    assert 0.3 < downhill.mean() < 0.7  # the slopes are balanced...
    assert below.mean() < 0.2  # ...but four probes in five or more find a higher value
    assert np.all(downhill[below])  # the few found below are downhill indeed


def test_probe_levels_and_a_probe_at_a_right_angle() -> None:
    x = np.array([1.0, 0.0, 0.0])
    points = np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 1.0]])
    np.testing.assert_allclose(probe_levels(x, 2.0, points, "value"), 2.0)
    levels = probe_levels(x, 2.0, points, "tangent")
    np.testing.assert_allclose(levels[:2], [2.0, 2.0 * np.sqrt(2.0)])
    assert np.all(np.isinf(levels[2:]))  # no crossing with the tangent plane: always below it
    with pytest.raises(ValueError, match="level must be one of"):
        probe_levels(x, 2.0, points, "plane")  # type: ignore[arg-type]


def test_sign_solvers_take_the_probe_level_as_an_option() -> None:
    from applications.hardlabel.config import boundary_context

    radial = boundary_context((1, 4, 4), "paper")
    # Sign-OPT's solver compares with the value unless asked; sign-growing, whose probes on a radius start wider
    # than the two levels agree at (0.04 rad), with the tangent plane's level
    assert "probe_level" not in zeroopt.get_solver("sign").context_defaults(radial)
    assert zeroopt.get_solver("sign-growing").context_defaults(radial)["probe_level"] == "tangent"
    for name in ("sign", "sign-growing"):
        assert zeroopt.get_solver(name).options().probe_level == "value"  # off the unit sphere
    solver = zeroopt.make_solver("sign-growing", radial)
    assert solver.find(zeroopt.Estimate).estimator.func is shrunk_centered_sign_of_difference
    assert solver.find(zeroopt.Estimate).estimator.keywords == {"level": "tangent"}
    assert zeroopt.make_solver("sign", radial).find(zeroopt.Estimate).estimator is sign_of_difference
    with pytest.raises(ValueError, match="probe_level must be one of"):
        zeroopt.make_solver("sign", radial, probe_level="plane")
