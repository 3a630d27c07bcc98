"""The noise-aware radius (zeroopt.step.noise.RadiusAboveNoise, option beta_above_noise): a no-op on exact oracles, a
wider β where the probes' differences drown in the stated noise, and lower true values under noise."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import zeroopt
from zeroopt.core.base import GradientEstimate, Move, SolverState
from zeroopt.oracles.problems import rotated_quadratic
from zeroopt.step.noise import NOISE_CEILING_RATIO, RadiusAboveNoise
from zeroopt.step.radius_step import STEP_RADIUS_RATIO

QUAD = rotated_quadratic(20, mu=0.01, L=1.0, seed=0)
GAP = QUAD(QUAD.x0) - QUAD.f_star


class _Solver:
    beta = 0.01


def _state(fx_eps: float, beta: float = 0.01) -> SolverState:
    return SolverState(x=np.zeros(3), fx=1.0, fx_eps=fx_eps, beta=beta, step=0.1, iteration=1,
                       rng=np.random.default_rng(0))


def _move(beta: float = 0.01, converged: bool = False) -> Move:
    return Move(x=np.zeros(3), fx=1.0, fx_eps=0.0, step_taken=0.0, next_step=0.1, beta=beta, converged=converged)


def _estimate(differences: list[float], eps: float) -> GradientEstimate:
    return GradientEstimate(g=np.zeros(3), eps=eps, used=len(differences), differences=np.array(differences))


def _trace(res: zeroopt.OptimizeResult) -> list[tuple[float, float, float, int]]:
    return [(r.f, r.beta, r.step_size, r.queries) for r in res.history]


@pytest.mark.parametrize("solver", ["rgf", "coordinate", "rgf-fixed", "sign"])
@pytest.mark.parametrize("exact", ["callable", "oracle"])
def test_an_exact_oracle_makes_the_option_a_no_op(solver: str, exact: str) -> None:
    runs = []
    for on in (False, True):
        fun = (lambda x: float(QUAD.values(x[None])[0])) if exact == "callable" else QUAD.make_oracle()
        options = {"lipschitz": 1.0} if solver == "rgf-fixed" else {}
        runs.append(zeroopt.minimize(fun, QUAD.x0, solver=solver, budget=1500, seed=3, beta_above_noise=on,
                                     **options))
    off, on = runs
    assert np.array_equal(off.x, on.x) and off.fun == on.fun and off.queries == on.queries
    assert _trace(off) == _trace(on)


def test_comparisons_observe_no_differences_so_the_option_leaves_them_alone() -> None:
    runs = [zeroopt.minimize(QUAD.with_noise("uniform", 1e-2 * GAP, seed=1).make_oracle(), QUAD.x0, solver="sign",
                             budget=800, seed=0, beta_above_noise=on) for on in (False, True)]
    assert np.array_equal(runs[0].x, runs[1].x) and _trace(runs[0]) == _trace(runs[1])


def test_the_rule_widens_beta_where_the_differences_drown_and_returns_where_they_stand_out() -> None:
    rule = RadiusAboveNoise()
    drowned = _estimate([1e-4, -1e-4, 2e-4], eps=1e-4)
    wide = rule(_Solver(), _state(1e-4), drowned, _move())
    assert wide.beta > 0.01  # r = 1.4e-4 against σ = 1.4e-4: three noise levels need a radius 3x wider
    assert wide.beta == pytest.approx(0.01 * 3 * np.hypot(1e-4, 1e-4) / np.sqrt(np.mean(np.square([1, 1, 2])) * 1e-8))
    # Differences far above the noise: β, widened earlier, returns toward the solver's own by halving ...
    clear = _estimate([1.0, -2.0, 1.5], eps=1e-4)
    back = rule(_Solver(), _state(1e-4, beta=0.08), clear, _move(beta=0.08))
    assert back.beta == pytest.approx(0.04)
    # ... and not below it.
    assert rule(_Solver(), _state(1e-4), clear, _move()).beta == 0.01
    # Pure noise at every scale (a plateau): never beyond the ceiling.
    flat = _estimate([0.0, 0.0, 0.0], eps=1e-4)
    assert rule(_Solver(), _state(1e-4), flat, _move()).beta == pytest.approx(0.01 * NOISE_CEILING_RATIO)


def test_the_rule_undoes_a_stall_shrink_the_noise_would_drown_and_withdraws_its_convergence() -> None:
    rule = RadiusAboveNoise()
    stalled = _move(beta=1e-9, converged=True)  # the stall rule divided β and converged below its floor
    out = rule(_Solver(), _state(1e-4), _estimate([3e-4, -3e-4], eps=1e-4), stalled)
    assert out.beta > 1e-9 and not out.converged
    # A shrink the differences can take (they stand far above the noise) stands, and so does its convergence.
    shrunk = _move(beta=1e-3, converged=True)
    assert rule(_Solver(), _state(1e-4), _estimate([5.0, -5.0], eps=1e-4), shrunk) is shrunk


@pytest.mark.parametrize("estimate", [_estimate([1e-4], eps=0.0), GradientEstimate(g=np.zeros(3), eps=1e-4, used=3),
                                      _estimate([], eps=1e-4)])
def test_nothing_to_weigh_passes_the_move_unchanged(estimate: GradientEstimate) -> None:
    move = _move()
    assert RadiusAboveNoise()(_Solver(), _state(0.0), estimate, move) is move


def test_beta_widens_on_a_noisy_quadratic() -> None:
    # One run each (restarts=False): the rule's effect on a run, which minimize's restarts would go on from.
    runs = [zeroopt.minimize(QUAD.with_noise("uniform", 1e-2 * GAP, seed=0).make_oracle(), QUAD.x0, solver="rgf",
                             budget=2000, seed=0, beta_above_noise=on, restarts=False) for on in (False, True)]
    own = zeroopt.get_solver("rgf").defaults()["beta"]
    assert max(r.beta for r in runs[0].history) <= own  # without the rule, β only shrinks
    widest = max(r.beta for r in runs[1].history)
    assert own < widest <= own * NOISE_CEILING_RATIO
    # Without the rule the stall rule shrinks β into the noise and the run ends early; with it, it spends its budget.
    assert runs[0].queries < 2000 == runs[1].queries


@pytest.mark.parametrize(("solver", "share", "gain"), [("rgf", 1e-2, 2.0), ("coordinate", 1e-3, 10.0)])
def test_a_lower_true_value_under_noise_on_every_seed(solver: str, share: float, gain: float) -> None:
    for seed in range(6):
        true_gap = []
        for on in (False, True):
            oracle = QUAD.with_noise("uniform", share * GAP, seed=seed).make_oracle()
            res = zeroopt.minimize(oracle, QUAD.x0, solver=solver, budget=2000, seed=seed, beta_above_noise=on,
                                   restarts=False)  # the rule's effect on one run
            true_gap.append(QUAD(res.x) - QUAD.f_star)
        assert true_gap[1] * gain < true_gap[0], (seed, true_gap)


@pytest.mark.parametrize(("kwargs", "match"), [({"snr": 0.0}, "snr"), ({"snr": float("inf")}, "snr"),
                                               ({"back": 1.0}, "back"), ({"back": 0.0}, "back"),
                                               ({"ceiling_ratio": 0.5}, "ceiling_ratio"),
                                               ({"step_share": 0.0}, "step_share"),
                                               ({"step_share": float("nan")}, "step_share")])
def test_invalid_settings_are_refused(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        RadiusAboveNoise(**kwargs)


def test_the_option_must_be_a_bool() -> None:
    with pytest.raises(TypeError, match="beta_above_noise"):
        zeroopt.minimize(lambda x: float(x @ x), np.ones(3), solver="rgf", budget=50, beta_above_noise="yes")


def test_the_option_puts_the_rule_after_the_stall_rule() -> None:
    solver = zeroopt.make_solver("rgf", zeroopt.SolverContext(dim=3), beta_above_noise=True)
    names = [type(b).__name__ for b in solver.parts]
    assert names.index("RadiusAboveNoise") == names.index("StallRule") + 1
    # Without the option, the rule weighs only a noise estimated where the oracle states none
    # (zeroopt.estimate.unstated_noise).
    default = zeroopt.make_solver("rgf", zeroopt.SolverContext(dim=3)).find(RadiusAboveNoise)
    assert default is not None and default.only_estimated


def test_with_a_step_share_beta_stays_within_that_share_of_the_distance_moved() -> None:
    standing_out = _estimate([1.0, -2.0, 1.5], eps=1e-4)  # far above the noise: the noise floor is tiny
    moved = replace(_move(), x=np.array([2.0, 0.0, 0.0]))  # the iterate moved a distance of 2
    assert RadiusAboveNoise(step_share=0.25)(_Solver(), _state(1e-4), standing_out, moved).beta == pytest.approx(0.5)
    assert RadiusAboveNoise()(_Solver(), _state(1e-4), standing_out, moved).beta == pytest.approx(0.01)
    capped = RadiusAboveNoise(step_share=0.25, ceiling_ratio=10.0)(_Solver(), _state(1e-4), standing_out, moved)
    assert capped.beta == pytest.approx(0.1)  # never past the ceiling
    exact = RadiusAboveNoise(step_share=0.25)(_Solver(), _state(0.0), _estimate([1.0, -2.0, 1.5], 0.0), moved)
    assert exact is moved  # an exact oracle: nothing stated, nothing changed


def test_central_differences_get_the_step_share_and_forward_ones_do_not() -> None:
    def rule(differences: str) -> RadiusAboveNoise:
        solver = zeroopt.make_solver("coordinate", zeroopt.SolverContext(dim=3), beta_above_noise=True,
                                     differences=differences)
        return next(p for p in solver.parts if isinstance(p, RadiusAboveNoise))

    assert rule("forward").step_share is None
    assert rule("central").step_share == rule("adaptive").step_share == STEP_RADIUS_RATIO

