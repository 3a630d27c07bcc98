"""An objective that returns NaN or ±inf away from its start, and one whose noise nobody stated.

A NaN/inf value is worse than any finite one: the run goes on, its result is the best finite point, and the value is
still counted and warned of (``on_non_finite="raise"`` ends the run instead, the partial result attached). Under
noise the oracle does not state, the iterate never jumps: steps stay at the start's scale, and the noise estimated
from repeats at the iterate widens the probes the way a stated precision does.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zeroopt
from zeroopt.direction.step_bound import STEP_BOUND
from zeroopt.oracles.problems import rotated_quadratic

#: Every registered solver that searches ℝᵈ (a plain objective's space); the search over sign vectors (sign-flips,
#: the L∞ attack's) has points only at the vertices of a cube and is not run on these objectives.
REAL = sorted(n for n in zeroopt.list_solvers() if zeroopt.get_solver(n).search_space == "real"
              and getattr(zeroopt.get_solver(n).recipe, "__module__", "").startswith("zeroopt."))
X0 = np.full(4, 4.0)  # ‖x0‖ = 8
BUDGET = 300


class Recording:
    """``f`` remembering what it returned, NaN/inf included."""

    def __init__(self, f: Callable[[np.ndarray], float]) -> None:
        self.f = f
        self.values: list[float] = []

    def __call__(self, x: np.ndarray) -> float:
        with np.errstate(over="ignore", invalid="ignore"):
            v = float(self.f(x))
        self.values.append(v)
        return v

    @property
    def finite(self) -> list[float]:
        return [v for v in self.values if math.isfinite(v)]


def ball(x: np.ndarray) -> float:
    """A steep bowl whose minimum (at ‖x‖ = 12) lies beyond the ball of radius 10, outside which it is +inf (a
    simulator that fails): every descent toward it meets +inf."""
    return float(100 * np.sum((x - 6.0) ** 2)) if np.linalg.norm(x) < 10 else math.inf


def cigar(x: np.ndarray) -> float:
    """A bent cigar (4.8e7 at the start) that overflows to +inf above 1.4e9, as a float32 of its 4th power does."""
    return float(np.float32(x[0] ** 2 + 1e6 * np.sum(x[1:] ** 2)) ** 4) ** 0.25


def half_nan(x: np.ndarray) -> float:
    """NaN where the first coordinate is above 5 (a log of a negative, say)."""
    return float(100 * x @ x) if x[0] <= 5 else math.nan


def minimized(name: str, f: Recording, **options: object) -> zeroopt.OptimizeResult:
    given = {"lipschitz": 200.0} if name == "rgf-fixed" else {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = zeroopt.minimize(f, X0, solver=name, budget=BUDGET, seed=0, **given, **options)  # type: ignore[arg-type]
    warned = [w for w in caught if issubclass(w.category, zeroopt.NonFiniteValueWarning)]
    assert len(warned) == (1 if len(f.finite) < len(f.values) else 0)  # once per oracle, and only when one came
    return res


@pytest.mark.parametrize("name", REAL)
@pytest.mark.parametrize("objective", [ball, cigar, half_nan])
def test_a_non_finite_value_is_worse_and_the_run_goes_on(name: str, objective: Callable[[np.ndarray], float]) -> None:
    f = Recording(objective)
    res = minimized(name, f)
    assert res.status is not zeroopt.Status.ERROR and res.queries == len(f.values)
    # The result is the best finite point, and better than the start.
    assert res.fun == min(f.finite) < f.values[0]
    assert np.isclose(objective(np.asarray(res.x)), res.fun, rtol=1e-12)


def test_the_objective_did_return_non_finite_values_to_the_descents() -> None:
    # The descents' steps toward the minimum reach past the ball's edge, where the objective is +inf; the run goes on.
    for name in REAL:
        f = Recording(ball)
        minimized(name, f)
        assert len(f.finite) < len(f.values)


def test_an_oracle_counts_what_it_answered_as_worse() -> None:
    oracle = zeroopt.CallableOracle(Recording(half_nan), X0.shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", zeroopt.NonFiniteValueWarning)
        ev = oracle.evaluate(zeroopt.Evaluate(points=np.array([X0, [6.0, 0, 0, 0], X0 + 3])))
    assert ev.values[1] == math.inf and math.isfinite(ev.values[0])
    assert oracle.non_finite == 2 and oracle.first_non_finite is not None and math.isnan(oracle.first_non_finite)


@pytest.mark.parametrize("batched", [False, True])
def test_on_non_finite_raise_ends_the_run_with_the_partial_result(batched: bool) -> None:
    f = Recording(ball)
    fun = (lambda xs: np.array([f(x) for x in xs])) if batched else f
    oracle = zeroopt.as_oracle(zeroopt.CallableOracle(fun, X0.shape, batched=batched), X0.shape,
                               on_non_finite="raise")
    with pytest.raises(zeroopt.NonFiniteValueError, match="finite") as info:
        zeroopt.minimize(oracle, X0, solver="rgf", budget=BUDGET, seed=0)
    partial = info.value.partial_result
    assert partial.status is zeroopt.Status.ERROR and partial.fun == min(f.finite)
    direct = zeroopt.as_oracle(ball, X0.shape, on_non_finite="raise")
    assert isinstance(direct, zeroopt.CallableOracle) and direct.on_non_finite == "raise"


def test_on_non_finite_is_checked_and_none_stays_an_error() -> None:
    with pytest.raises(ValueError, match="'worse'.*'raise'"):
        zeroopt.CallableOracle(ball, X0.shape, on_non_finite="ignore")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="builds its own oracle"):
        zeroopt.as_oracle(rotated_quadratic(4, seed=0), (4,), on_non_finite="raise")
    with pytest.raises(zeroopt.ObjectiveError, match="None"):
        zeroopt.minimize(lambda x: None, X0, budget=50, seed=0)
    with pytest.raises(ZeroDivisionError):
        zeroopt.minimize(lambda x: 1 / 0, X0, budget=50, seed=0)


@pytest.mark.parametrize("name", ["rgf", "trust-region"])
def test_a_start_where_the_objective_is_infinite_moves_to_a_finite_point(name: str) -> None:
    # Defined only inside the ball of radius 10: the start is on its edge, some of its probes inside (coordinate
    # descent's forward probes along +eᵢ all lie outside, and it has nowhere to go).
    x0 = np.array([10.0, 0.0, 0.0, 0.0])
    f = Recording(lambda x: float(x @ x) if np.linalg.norm(x) < 10 else math.inf)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", zeroopt.NonFiniteValueWarning)
        res = zeroopt.minimize(f, x0, solver=name, budget=BUDGET, seed=0)
    assert math.isfinite(res.fun) and res.fun == min(f.finite)


def test_the_first_step_stays_at_the_start_scale_on_a_bent_cigar() -> None:
    # Unbounded, the reference step 0.2 along the cigar's estimate (norm ~ 10⁷) first tries a point 10⁶ units out.
    far: list[float] = []

    def steep(x: np.ndarray) -> float:
        far.append(float(np.linalg.norm(x)))
        return float(x[0] ** 2 + 1e6 * np.sum(x[1:] ** 2))

    # (Sign-OPT's K = 200 comparisons an estimate: sign takes a second step within twice the budget.)
    for name, budget in (("rgf", BUDGET), ("coordinate", BUDGET), ("sign", 2 * BUDGET), ("sign-growing", BUDGET)):
        far.clear()
        zeroopt.minimize(steep, X0, solver=name, budget=budget, seed=0, restarts=False)
        assert max(far) <= np.linalg.norm(X0) * (1 + STEP_BOUND) + 1e-9, name


#: The solvers and options the noise test runs: the DFO harness's coordinate+qn (every coordinate probed, L-BFGS), and
#: the sign solvers (sign with 20 comparisons per estimate: at Sign-OPT's K = 200 a budget of 600 is two estimates).
NOISE_RUNS = {"coordinate+qn": ("coordinate", {"q": 10**6, "quasi_newton": 10}), "rgf": ("rgf", {}),
              "coordinate": ("coordinate", {}), "sign": ("sign", {"q": 20}), "sign-growing": ("sign-growing", {})}


#: Noise levels: additive (a standard deviation) and multiplicative (a share of the value; bbob-noisy's Gaussian noise
#: is 1% "moderate"). A multiplicative noise near 100% has negative draws whose size grows with the value, so the
#: lowest draws lie far out and minimizing the draws is not minimizing f: not among them.
NOISE_LEVELS = [(0.01, True), (0.1, True), (1.0, True), (0.01, False), (0.1, False)]


@pytest.mark.parametrize("run", sorted(NOISE_RUNS))
@settings(max_examples=16, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**16), noise=st.sampled_from(NOISE_LEVELS))
def test_the_iterate_never_jumps_under_unstated_noise(seed: int, noise: tuple[float, bool], run: str) -> None:
    level, additive = noise
    rng = np.random.default_rng(seed)
    x0 = rng.uniform(-4, 4, 10)
    norms: list[float] = []

    def noisy(x: np.ndarray) -> float:
        norms.append(float(np.linalg.norm(x)))
        noise = level * rng.standard_normal()
        return float(x @ x + noise) if additive else float(x @ x * (1 + noise))

    name, options = NOISE_RUNS[run]
    res = zeroopt.minimize(noisy, x0, solver=name, budget=600, seed=seed, restarts=False, **options)
    scale = max(float(np.linalg.norm(x0)), 1.0)
    # No point asked is more than a few of the start's scales out (a step's first try and β at most one scale; a
    # line search grows a step only while the value falls, which on the sphere it cannot far out).
    assert max(norms) <= 4 * scale
    assert float(res.x @ res.x) < float(x0 @ x0)  # and the noise does not hold the run at its start


def test_noise_estimation_costs_a_noiseless_run_one_answer() -> None:
    on, off = Recording(lambda x: float(x @ x)), Recording(lambda x: float(x @ x))
    res = zeroopt.minimize(on, X0, solver="coordinate", budget=BUDGET, seed=0, restarts=False)
    zeroopt.minimize(off, X0, solver="coordinate", budget=BUDGET, seed=0, restarts=False, estimate_noise=False)
    # The start asked twice, the same answer twice: no noise, and from there the run without the estimate, answer
    # for answer, one answer later.
    assert on.values[1] == on.values[0] and on.values[2:] == off.values[1:len(on.values) - 1]
    assert res.fun < 1e-12
