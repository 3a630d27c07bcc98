"""A solver as a chain of parts: composing, describing, swapping a part, running a built chain, options by part."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pytest

import zeroopt
from zeroopt import Estimate, FixedProbes, GaussianDirections, Sample, SolverContext, StallRule, Step


def _rgf() -> zeroopt.Chain:
    return zeroopt.chain(FixedProbes(8), Sample(GaussianDirections()), Estimate(zeroopt.forward_difference),
                         Step(zeroopt.opt_line_search), StallRule(1e-4), name="mine", beta=0.005, step=0.2)


def test_a_chain_refuses_what_is_not_a_part_and_needs_its_four_stages() -> None:
    with pytest.raises(TypeError, match="not a part.*wrap a behaviour with Amend"):
        zeroopt.chain(FixedProbes(2), GaussianDirections(), name="x", beta=0.1, step=0.1)
    with pytest.raises(ValueError, match=r"no part for the stage\(s\) \['estimate', 'step'\]"):
        zeroopt.chain(FixedProbes(2), Sample(GaussianDirections()), name="x", beta=0.1, step=0.1)


def test_a_built_chain_runs_in_minimize_as_its_name_does() -> None:
    f, x0 = (lambda x: float(np.sum(np.arange(1, 7) * x**2))), np.ones(6)
    built = zeroopt.make_solver("rgf", SolverContext(dim=6, shape=(6,)))
    by_name = zeroopt.minimize(f, x0, solver="rgf", budget=600, seed=3)
    by_chain = zeroopt.minimize(f, x0, solver=built, budget=600, seed=3)
    assert by_chain.fun == by_name.fun and by_chain.queries == by_name.queries
    assert np.array_equal(by_chain.x, by_name.x)
    with pytest.raises(TypeError, match="built already: change its parts with with_part"):
        zeroopt.minimize(f, x0, solver=built, budget=600, q=3)


def test_with_part_replaces_a_stage_s_part_inserts_a_missing_one_and_asks_when_several() -> None:
    mine = _rgf()
    swapped = mine.with_part(Sample(zeroopt.SphereDirections()))
    assert swapped.find(zeroopt.SphereDirections) is not None and swapped.find(GaussianDirections) is None
    assert [p.stage for p in swapped.parts] == [p.stage for p in mine.parts]
    precise = mine.with_part(zeroopt.FixedPrecision(1e-6))
    assert [p.stage for p in precise.parts] == ["precision", "count", "sample", "estimate", "step", "stop"]
    assert precise.requested_eps(0.1) == 1e-6 and mine.requested_eps(0.1) is None
    two = mine.with_added(zeroopt.DiminishingReturnsRule())
    assert [type(p).__name__ for p in two.parts_at("stop")] == ["StallRule", "DiminishingReturnsRule"]
    with pytest.raises(ValueError, match="2 stop parts.*replacing="):
        two.with_part(zeroopt.NoProgressRule(5))
    one = two.with_part(zeroopt.NoProgressRule(5), replacing=zeroopt.DiminishingReturnsRule)
    assert [type(p).__name__ for p in one.parts_at("stop")] == ["StallRule", "NoProgressRule"]
    with pytest.raises(ValueError, match="no HistoryPrior part"):
        mine.with_part(zeroopt.AdaptiveMomentum(), replacing=zeroopt.HistoryPrior)


def test_what_a_part_starts_with_is_in_the_state_and_what_it_keeps_goes_on() -> None:
    @dataclass(frozen=True)
    class Counts(zeroopt.core.stages.AmendsMove):
        def init(self, x0: np.ndarray) -> dict:
            return {"counted": 0}

        def __call__(self, solver, before, estimate, move):  # type: ignore[no-untyped-def]
            return replace(move, memory={**move.memory, "counted": move.memory["counted"] + 1})

    solver = _rgf().with_part(Counts())
    state = solver.init(np.ones(4), 4.0, 0.0, np.random.default_rng(0))
    assert state.memory == {"counted": 0}
    run = zeroopt.run_solver(solver, np.ones(4), rng=np.random.default_rng(0), max_iter=5)
    (res,) = zeroopt.drive([run], zeroopt.IndependentGroup([zeroopt.as_oracle(lambda x: float(x @ x), (4,),
                                                                                 budget=1000)]))
    assert res.iterations == 5 and res.state.memory["counted"] == 5


SAFEGUARDS = {"step_bound": 2.0, "non_finite_shrink": 0.5}
CHAIN_SETTINGS = {"beta", "step", "retract", "lipschitz", "delta"}  # the chain's own (rgf-fixed's set step and β)
EVERY_PART = ({}, {"momentum": 1.0, "history_prior": True, "history_span": 3, "probe_shape": 0.3, "skip_flat": True,
                   "beta_balance": True, "beta_per_step": 0.25, "beta_above_noise": True, "min_progress": 0.01,
                   "eps_per_beta": 0.01, "q_start": 2, "quasi_newton": 5},
              {"line_search": "semicircle"}, {"line_search": "armijo"}, {"line_search": "fixed", "patience": 5})


@pytest.mark.parametrize("name", ["rgf", "rgf-fixed", "coordinate", "sign", "sign-growing"])
def test_every_option_of_a_built_in_solver_sets_a_part_or_the_chain(name: str) -> None:
    spec, context = zeroopt.get_solver(name), SolverContext(dim=6, lipschitz=2.0, unit_sphere=True)
    owned: set[str] = set()
    for options in EVERY_PART:
        # (rgf-fixed's own step rule is the fixed step, which takes no history prior: give it the others too)
        given = {"line_search": "opt", **options} if name == "rgf-fixed" else options
        # (the descents' safeguards are off on the unit sphere, where the context puts this test: set them)
        given = {**given, **({k: v for k, v in SAFEGUARDS.items() if spec.accepts(k)} if options else {})}
        setters = spec.setters(context, **given)
        assert len(setters) == len(spec.build(context, **given).parts)
        owned.update(n for names in setters for n in names)
    # (ε given with eps_per_beta set sets nothing; coordinate descent's sampler is its coordinates, whatever
    # ``directions`` names)
    unused = {"eps_relative", "eps"} | ({"directions"} if name == "coordinate" else set())
    assert set(spec.option_names()) - CHAIN_SETTINGS - unused <= owned
    stall = next(line for line in spec.describe(context, line_search="opt").splitlines() if "StallRule" in line)
    assert all(n in stall.split("<-")[1] for n in ("step_min", "step_reset", "beta_decay", "beta_min"))


def test_find_and_with_part_see_the_estimate_a_noise_estimating_part_runs() -> None:
    from zeroopt.core.stages import Estimate, carried
    from zeroopt.estimate.unstated_noise import EstimatedNoise

    chain = zeroopt.rgf(10)  # its estimate stage: EstimatedNoise(Estimate(forward differences))
    outer = chain.find(EstimatedNoise)
    assert outer is not None and chain.find(Estimate) is outer.inner
    assert carried(outer)[:2] == [outer, outer.inner]
    plain = Estimate(outer.inner.estimator)
    assert chain.with_part(plain, replacing=Estimate).find(EstimatedNoise) is None  # the part that carries it goes
